"""The modules the model's code may import, as facades: chosen names only, never the real module.

A facade holds the public functions and classes of one standard module that are safe to hand out, so nothing
behind them (`re.enum.sys`, `json.codecs.builtins`) is reachable, and writes to it fail. Facades are made per
run and on first import, so a run cannot leave state for the next (`random` gets a fresh generator each run).
"""

from __future__ import annotations

import base64
import bisect
import calendar
import collections
import collections.abc
import copy
import datetime
import difflib
import fractions
import functools
import hashlib
import heapq
import html
import itertools
import json
import math
import operator
import random
import statistics
import string
import textwrap
import time
import unicodedata
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from sandbox._runtime.classes import SIZED_COLLECTIONS
from sandbox._runtime.guards import Guards
from sandbox._runtime.signals import ForbiddenImportError, forbid
from sandbox._runtime.sizes.counts import heapq_members, random_members
from sandbox._runtime.sizes.growth import check_strftime
from sandbox._runtime.sizes.text import plain
from sandbox._runtime.sizes.transforms import QUOTING, dumps_for, encoder_for, normalize_for, quoting_for
from sandbox._runtime.stdlib.classgen import ENUMS, make_dataclasses
from sandbox._runtime.stdlib.copying import copy as shallow_copy
from sandbox._runtime.stdlib.copying import deepcopy
from sandbox._runtime.stdlib.regex import RE, Template, subs_for
from sandbox._runtime.stdlib.system import make_abc, make_logging, make_sys, make_traceback
from sandbox._runtime.stdlib.typehints import make_typing
from sandbox._runtime.ticking import ticking_itertools
from sandbox._shared.repeat import fixed_members, run_random

_MUTABLE = frozenset({list, dict, set, bytearray, collections.deque, collections.OrderedDict, collections.Counter})


class Module:
    """A module as the model's code sees it."""

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        for member, value in members.items():
            if type(value) in _MUTABLE:  # shared by every run and the host: a channel between them
                raise TypeError(f"the {name!r} facade would hand out a mutable {type(value).__name__}: {member}")
        self.__dict__.update(members)
        # Not `__name__`: `from m import x` falls back to `sys.modules[f"{m.__name__}.x"]` when `x` is missing,
        # which would hand out real submodules (`from asyncio import subprocess`).
        object.__setattr__(self, "__sandbox_module__", name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        module = self.__dict__["__sandbox_module__"]
        raise AttributeError(f"module {module!r} has no attribute {name!r} in the sandbox")

    def __repr__(self) -> str:
        return f"<module {self.__dict__['__sandbox_module__']!r}>"


def _pick(module: object, names: str) -> dict[str, Any]:
    return {name: getattr(module, name) for name in names.split() if hasattr(module, name)}


def _public(module: ModuleType, *, exclude: str = "") -> dict[str, Any]:
    skip = set(exclude.split())
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_") and name not in skip and not isinstance(value, ModuleType)
    }


# Plain members, the same for every run: only pure functions, classes and constants.
_STATIC: dict[str, dict[str, Any]] = {
    "json": _pick(json, "dumps loads JSONDecodeError JSONEncoder"),
    "re": RE,
    "datetime": _pick(datetime, "date datetime time timedelta timezone tzinfo MINYEAR MAXYEAR UTC"),
    "collections.abc": _public(collections.abc),
    "statistics": _public(
        statistics,
        exclude="Decimal Fraction bisect_left bisect_right groupby namedtuple repeat "
        "defaultdict Counter erf exp fabs fsum hypot log sqrt tau mul reduce",
    ),
    "string": _pick(
        string,
        "ascii_letters ascii_lowercase ascii_uppercase digits hexdigits octdigits punctuation "
        "printable whitespace capwords",
    )
    | {"Template": Template},
    "fractions": _pick(fractions, "Fraction"),
    "base64": _pick(
        base64,
        "b64encode b64decode urlsafe_b64encode urlsafe_b64decode standard_b64encode "
        "standard_b64decode b32encode b32decode b16encode b16decode b85encode b85decode "
        "a85encode a85decode encodebytes decodebytes",
    ),
    "hashlib": _pick(
        hashlib,
        "md5 sha1 sha224 sha256 sha384 sha512 sha3_224 sha3_256 sha3_384 sha3_512 blake2b blake2s new",
    )
    | {"algorithms_guaranteed": frozenset(hashlib.algorithms_guaranteed)},  # the real one is a set the host reads
    "uuid": _pick(uuid, "UUID uuid3 uuid4 uuid5 NAMESPACE_DNS NAMESPACE_URL NAMESPACE_OID NAMESPACE_X500"),
    "heapq": _pick(heapq, "heappush heappop heapify heapreplace heappushpop nlargest nsmallest merge"),
    "bisect": _pick(bisect, "bisect bisect_left bisect_right insort insort_left insort_right"),
    "unicodedata": _pick(
        unicodedata,
        "name lookup category normalize numeric digit decimal east_asian_width "
        "combining bidirectional mirrored unidata_version",
    ),
    "html": _pick(html, "escape unescape"),
    "urllib.parse": _pick(
        urllib.parse,
        "quote quote_plus unquote unquote_plus urlencode urlparse urlunparse "
        "urlsplit urlunsplit urljoin parse_qs parse_qsl urldefrag",
    ),
    "calendar": _pick(
        calendar, "monthrange isleap leapdays weekday month_name day_name month_abbr day_abbr monthcalendar timegm"
    ),
    "difflib": _pick(difflib, "SequenceMatcher get_close_matches unified_diff ndiff context_diff Differ"),
}

_CHECKED: dict[str, Callable[[Guards], dict[str, Any]]] = {
    "re": subs_for,
    "heapq": lambda guards: heapq_members(guards, guards.ticking),
    "json": lambda guards: {"dumps": dumps_for(guards), "JSONEncoder": encoder_for(guards)},
    "unicodedata": lambda guards: {"normalize": normalize_for(guards)},
    "urllib.parse": lambda guards: {real.__name__: quoting_for(guards, real) for real in QUOTING},
}
"""Members of the plain modules above that grow text, size-checked with the run's guards (`sizes.transforms`)."""

# Members that need the run's guards or state; each builder runs on the first import in a run.
_Builder = Callable[[Guards, dict[str, Any]], dict[str, Any]]


def _math(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    def comb(n: int, k: int) -> int:
        guards.math_bits(min(k, max(n - k, 0)) * math.log2(max(n, 2)))
        return math.comb(n, k)

    def perm(n: int, k: int | None = None) -> int:
        guards.math_bits((n if k is None else k) * math.log2(max(n, 2)))
        return math.perm(n, k)

    def prod(iterable: Any, /, *, start: Any = 1) -> Any:  # a tick per item: `prod(range(10**18), start=0)` never grows
        return guards.prod(guards.ticking(iterable), start=start)

    return {
        **_public(math),
        "factorial": guards.factorial,
        "prod": prod,
        "lcm": guards.lcm,
        "comb": comb,
        "perm": perm,
        "pow": math.pow,
    }


def _random(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    generator = run_random(guards.repeat)
    names = (
        "random randint randrange choice choices shuffle sample uniform gauss normalvariate "
        "seed triangular betavariate expovariate lognormvariate vonmisesvariate "
        "paretovariate weibullvariate gammavariate getrandbits randbytes"
    )
    return {**random_members(guards, generator, names), "Random": random.Random}


def _functools(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    # The real ones copy and set attributes by names the caller chooses (`__globals__`, `__code__`).
    def update_wrapper(wrapper: Any, wrapped: Any, **options: Any) -> Any:
        if options or not (guards.is_own(wrapper) and guards.is_own(wrapped)):
            forbid("`functools.update_wrapper`/`wraps` work only on the code's own functions, with no options")
        return functools.update_wrapper(wrapper, wrapped)

    def wraps(wrapped: Any, **options: Any) -> Callable[[Any], Any]:
        return lambda wrapper: update_wrapper(wrapper, wrapped, **options)

    def total_ordering(cls: Any) -> Any:
        if not guards.is_own(cls):
            forbid("`functools.total_ordering` works only on the code's own classes")
        return functools.total_ordering(cls)

    def reduce(function: Any, iterable: Any, *initial: Any) -> Any:  # the real one pulls in C: a tick per item
        return functools.reduce(function, guards.ticking(iterable), *initial)

    members = _pick(functools, "partial partialmethod lru_cache cache cached_property cmp_to_key")
    return {
        **members,
        "reduce": reduce,
        "update_wrapper": update_wrapper,
        "wraps": wraps,
        "total_ordering": total_ordering,
    }


def _dataclasses(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    return make_dataclasses(guards)


def _copy(_: Guards, __: dict[str, Any]) -> dict[str, Any]:
    return {"copy": shallow_copy, "deepcopy": deepcopy, "Error": copy.Error}


def _enum(_: Guards, __: dict[str, Any]) -> dict[str, Any]:
    return dict(ENUMS)


def _itertools(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    return {**_public(itertools), **ticking_itertools(guards)}


class TextWrapper(textwrap.TextWrapper):
    """`textwrap.TextWrapper` on plain text: it calls `text.translate(...)` with a table the process shares."""

    def wrap(self, text: str) -> list[str]:
        """The lines of `text`, as the real `wrap`."""
        return super().wrap(plain(text))

    def fill(self, text: str) -> str:
        """`text` wrapped into one string, as the real `fill`."""
        return super().fill(plain(text))


def _textwrap(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    def indent(text: str, prefix: str, predicate: Any = None) -> str:
        text, prefix = plain(text), plain(prefix)  # a subclass's `len` may lie
        guards.check_length(len(text) + (text.count("\n") + 1) * len(prefix), "a string of length")
        return textwrap.indent(text, prefix, predicate)

    def wrap(text: str, width: int = 70, **options: Any) -> list[str]:
        return TextWrapper(width=width, **options).wrap(text)

    def fill(text: str, width: int = 70, **options: Any) -> str:
        return TextWrapper(width=width, **options).fill(text)

    def shorten(text: str, width: int, **options: Any) -> str:
        return textwrap.shorten(plain(text), width, **options)

    def dedent(text: str) -> str:
        return textwrap.dedent(plain(text))

    functions = {"wrap": wrap, "fill": fill, "shorten": shorten, "dedent": dedent, "indent": indent}
    return {**functions, "TextWrapper": TextWrapper}


def _collections(_: Guards, modules: dict[str, Any]) -> dict[str, Any]:
    # Not UserString: its methods call the real `str.format` on its data.
    members = _pick(collections, "Counter defaultdict OrderedDict deque namedtuple UserDict UserList")
    members.update({real.__name__: sized for real, sized in SIZED_COLLECTIONS.items()})  # built from a range, checked
    return {**members, "ChainMap": ChainMap, "abc": import_module("collections.abc", modules, _)}


class ChainMap(collections.ChainMap[Any, Any]):
    """`collections.ChainMap` over mappings only (it subscripts its maps past the item guard)."""

    def __getitem__(self, key: Any) -> Any:
        for mapping in self.maps:
            if not isinstance(mapping, Mapping):
                raise TypeError(f"a ChainMap holds mappings, not {type(mapping).__name__!r}")
        return super().__getitem__(key)


def _operator(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    def attrgetter(*names: str) -> Callable[[Any], Any]:
        def get(obj: Any, dotted: str) -> Any:
            for part in dotted.split("."):
                obj = guards.getattr(obj, part)
            return obj

        if len(names) == 1:
            return lambda obj: get(obj, names[0])
        return lambda obj: tuple(get(obj, name) for name in names)

    def methodcaller(name: str, /, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        return lambda obj: guards.getattr(obj, name)(*args, **kwargs)

    def itemgetter(*items: Any) -> Callable[[Any], Any]:  # the real one subscripts in C, past the item guard
        if len(items) == 1:
            item = items[0]
            return lambda obj: guards.getitem(obj, item)
        return lambda obj: tuple(guards.getitem(obj, item) for item in items)

    members = _pick(
        operator,
        "add sub truediv floordiv neg not_ eq ne lt le gt ge and_ or_ xor "
        "contains truth abs index concat is_ is_not inv invert",
    )

    def countOf(a: Any, b: Any, /) -> int:  # the real ones scan in C with no tick: `range(10**18)`
        return operator.countOf(guards.ticking(a), b)

    def indexOf(a: Any, b: Any, /) -> int:
        return operator.indexOf(guards.ticking(a), b)

    return {
        **members,
        "countOf": countOf,
        "indexOf": indexOf,
        "attrgetter": attrgetter,
        "itemgetter": itemgetter,
        "methodcaller": methodcaller,
        "add": guards.add,
        "concat": guards.concat,
        "iadd": guards.iadd,
        "mul": guards.mul,
        "pow": guards.pow,
        "lshift": guards.lshift,
        "mod": guards.mod,
    }


def _time(guards: Guards, __: dict[str, Any]) -> dict[str, Any]:
    def sleep(seconds: float) -> None:
        raise RuntimeError("`time.sleep()` would block every task; write `await asyncio.sleep(...)` instead")

    def strftime(format: Any, *t: Any) -> str:  # time's own parameter name
        return time.strftime(check_strftime(guards, format), *t)  # type: ignore[arg-type]

    members = _pick(
        time,
        "time time_ns monotonic monotonic_ns perf_counter perf_counter_ns strftime gmtime localtime mktime struct_time",
    )
    return {**members, "sleep": sleep, "strftime": strftime}


def _typing(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    return make_typing(guards)


def _urllib(_: Guards, modules: dict[str, Any]) -> dict[str, Any]:
    return {"parse": import_module("urllib.parse", modules, _)}


_BUILDERS: dict[str, _Builder] = {
    "functools": _functools,
    "dataclasses": _dataclasses,
    "copy": _copy,
    "itertools": _itertools,
    "textwrap": _textwrap,
    "enum": _enum,
    "math": _math,
    "random": _random,
    "collections": _collections,
    "operator": _operator,
    "time": _time,
    "urllib": _urllib,
    "typing": _typing,
    "abc": make_abc,
    "sys": make_sys,
    "traceback": make_traceback,
    "logging": make_logging,
}
_INTERNAL = frozenset({"_strptime"})
ALLOWED_MODULES: frozenset[str] = frozenset({*_STATIC, *_BUILDERS, "asyncio", "decimal"})  # made by the runner


RunModules = dict[str, "Module | Callable[[], dict[str, Any]]"]
"""One run's facades by name, and the runner's own modules (`asyncio`, `decimal`) as builders of their members."""


def import_module(name: str, modules: RunModules, guards: Guards) -> Module:
    """The run's facade for `name`, made on first use; `modules` caches the run's facades."""
    facade = modules.get(name)
    if isinstance(facade, Module):
        return facade
    if facade is not None:  # the runner's builder: most runs never import its module, so it is made only here
        facade = Module(name, facade())
    elif name in _STATIC:
        checked = _CHECKED[name](guards) if name in _CHECKED else {}
        facade = Module(name, {**_STATIC[name], **checked, **fixed_members(name, guards.repeat)})
    elif name in _BUILDERS:
        facade = Module(name, {**_BUILDERS[name](guards, modules), **fixed_members(name, guards.repeat)})
    else:
        raise ForbiddenImportError(_refusal(name))
    modules[name] = facade
    return facade


def _refusal(name: str) -> str:
    offered = ", ".join(sorted(m for m in ALLOWED_MODULES if "." not in m))
    return f"`import {name}` is not allowed in the sandbox; the modules offered are: {offered}"


def make_importer(modules: RunModules, guards: Guards) -> Callable[..., Module]:
    """The `__import__` the model's `import` statements call."""

    def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level != 0:
            forbid("relative imports are not allowed in the sandbox")
        if (
            name in _INTERNAL
        ):  # imported by C code the model called (`datetime.strptime`); the policy refuses `_` imports
            return __import__(name, globals, locals, fromlist, level)
        if name not in ALLOWED_MODULES:
            raise ForbiddenImportError(_refusal(name))
        if fromlist:
            return import_module(name, modules, guards)
        return import_module(name.split(".")[0], modules, guards)

    return guarded_import
