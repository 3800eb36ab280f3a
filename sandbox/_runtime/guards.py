"""Runtime guards: the functions the policy's rewritten code calls (`_getattr_`, `_tick_`, `_mul_`, ...).

Most guards hold nothing of a run (`Rules`: attribute, item and write rules, and the size caps on single operations from
`SizeGuards`), so runs with the same `max_size` share one `Rules` and its bound guards, made once. One `Guards` is made
per run: the rules plus the run's own budget (`Budget`, `sandbox._runtime.ticks`) and the coroutines its code made; only
`RUN_GUARDS` are bound to it.
"""

from __future__ import annotations

import abc
import copy
import datetime
import decimal
import functools
import inspect
import textwrap
import types
from typing import TYPE_CHECKING, Any, Final

from RestrictedPython.Guards import guarded_unpack_sequence

from sandbox._compiler.compile import FILENAME
from sandbox._compiler.names import ALLOWED_DUNDER_METHODS, FORBIDDEN_ATTRIBUTES, READABLE_DUNDERS, dunder_refusal
from sandbox._runtime.awaiting import ASYNC_GENERATOR_AWAITABLES, DRIVING, awaited_only, may_drive
from sandbox._runtime.classes import PLAIN_BASE_MODULES, SANDBOX_CLASS_MARK, real_bases
from sandbox._runtime.dunders import own_instances_only, read_dunder
from sandbox._runtime.signals import forbid
from sandbox._runtime.sizes.growth import GROWING, SliceWrites, assign_slice
from sandbox._runtime.sizes.operations import SizeGuards
from sandbox._runtime.sizes.text import SIZED_METHODS, STR_METHODS, plain
from sandbox._runtime.stdlib.decimal_context import ContextWrites
from sandbox._runtime.stdlib.regex import templated
from sandbox._runtime.stdlib.typehints import check_subscription
from sandbox._runtime.supers import super_attribute
from sandbox._runtime.ticking import yield_from
from sandbox._runtime.ticks import Budget

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from sandbox._shared.repeat import Repeat

_NAMEDTUPLE_ATTRIBUTES = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
_MUTABLE = (dict, list, set, bytearray)
_PLAIN_VALUES = (int, float, complex, bool, str, bytes, type(None))
_BYTES = (bytes, bytearray)
_HELD = frozenset({list, tuple})
_PLAIN_SUBSCRIPTED = frozenset({dict, list, tuple, str, bytes, bytearray, range})


class Rules(SizeGuards):
    """The guards that hold nothing of a run: attribute, item and write rules, and the size caps.

    One is shared by every run with the same `max_size` (`rules_for`): a run's own state (its budget, its
    coroutines) is on its `Guards`, which adds it to these.
    """

    # -- attributes and items ----------------------------------------------------------------------------

    def is_own(self, obj: object) -> bool:
        """Whether `obj` is a class the code defined, an instance of one, or one of its functions."""
        if isinstance(obj, type):
            return bool(getattr(obj, SANDBOX_CLASS_MARK, False))
        if isinstance(obj, types.FunctionType):  # the code's, or the wrapper `_coroutine_` puts on its `async def`
            return obj.__code__.co_filename == FILENAME or obj.__code__ is _COROUTINE_CODE
        return bool(getattr(type(obj), SANDBOX_CLASS_MARK, False))

    def getattr(self, obj: object, name: str, *default: object) -> Any:
        """`obj.name`, unless the name is private to something the code did not define."""
        if type(name) is not str:
            raise TypeError(f"attribute name must be a string, not {type(name).__name__!r}")
        if type(obj) is super:
            return super_attribute(self, obj, name, *default)
        self.check_attribute(obj, name)
        if name.startswith("__"):
            if name in READABLE_DUNDERS or (name == "__init__" and isinstance(obj, type) and not self.is_own(obj)):
                return read_dunder(self, obj, name)
            if isinstance(obj, type):  # an own class's: one it inherited works on the code's own instances only
                return own_instances_only(self, obj, name, getattr(obj, name, *default))
            return getattr(obj, name, *default)
        return self.wrapped(obj, name, getattr(obj, name, *default))

    def check_attribute(self, obj: object, name: str) -> None:
        """Refuse `obj.name` if it is private to something the code did not define, or hands out the host."""
        if name.startswith("__"):
            # a class's own dunders; never a stdlib object's (it may be shared), but any class's `__init__`
            readable = name in READABLE_DUNDERS or (name == "__init__" and isinstance(obj, type))
            if not readable and (name not in ALLOWED_DUNDER_METHODS or not self.is_own(obj)):
                forbid(dunder_refusal(name))
        elif name.startswith("_"):
            if not (self._private_is_own(obj) or (name in _NAMEDTUPLE_ATTRIBUTES and _is_tuple_or_tuple_class(obj))):
                forbid(f"`.{name}` is not allowed: names starting with `_` are private in the sandbox")
        elif name in FORBIDDEN_ATTRIBUTES:
            forbid(f"`.{name}` is not allowed: frames, code and the class hierarchy are hidden in the sandbox")
        elif name in DRIVING and not may_drive(obj, own=self.is_own(obj)):
            # what an awaitable yields when driven by hand is the event loop's own future
            forbid(f"`.{name}()` is not allowed on a {type(obj).__name__!r} in the sandbox: `await` it instead")
        elif name == "register" and isinstance(obj, abc.ABCMeta):
            # even on the code's own ABC: the standard ABCs above it ask it, and cache the answer for every run
            forbid("`.register()` is not allowed in the sandbox: it changes the ABC's checks for the whole process")
        elif name == "obj" and isinstance(obj, AttributeError) and not self._plain_or_own(obj.obj):
            # the object a failed lookup was made on: inside the standard library, one the sandbox hides
            forbid("`.obj` of this AttributeError is not available in the sandbox; use `e.name` and `str(e)`")

    def _plain_or_own(self, value: object) -> bool:
        return type(value) in _PLAIN_VALUES or self.is_own(value)

    def wrapped(self, obj: object, name: str, value: Any) -> Any:
        """What the code gets for `obj.name` (read as `value`): a size-checked or cache-safe stand-in, or a copy."""
        if name in STR_METHODS:
            guarded = self._sized_method(obj, name)
            if guarded is not None:
                return guarded
        elif name == "to_bytes" and (to_bytes := self._to_bytes(obj)) is not None:
            return to_bytes
        elif name in GROWING and (grown := self.growing(obj, name, value)) is not None:
            return grown
        elif (wrapped := _wrapped_method(obj, name, value)) is not None:
            return wrapped
        if type(value) in _MUTABLE and _is_shared_class_attribute(obj, name, value):
            return copy.copy(value)  # a standard class's shared table: the code gets its own copy to change
        return value

    def _to_bytes(self, obj: object) -> Callable[..., bytes] | None:
        """The size-checked `to_bytes` of an int (the value itself, even of a subclass's), or unbound; else None."""
        if isinstance(obj, int):
            return self._int_to_bytes(int.__index__(obj))
        if isinstance(obj, type) and issubclass(obj, int):  # `int.to_bytes(n, length)`
            return lambda value, *args, **kwargs: self._int_to_bytes(int.__index__(value))(*args, **kwargs)
        return None

    def _sized_method(self, obj: object, name: str) -> Callable[..., Any] | None:
        """The size-checked `format`/`join`/`ljust`/... of a str or bytes, a subclass's, or unbound; else None."""
        if isinstance(obj, str):
            return self._str_method(plain(obj), name)  # a plain str, even of a subclass
        if isinstance(obj, _BYTES):
            return self._str_method(obj if type(obj) in _BYTES else bytes(obj), name) if name in SIZED_METHODS else None
        if isinstance(obj, type):  # unbound, `str.format(template, ...)`, of a subclass too
            base = next((kind for kind in (str, *_BYTES) if issubclass(obj, kind)), None)
            if base is str or (base is not None and name in SIZED_METHODS):
                return self._str_method(base, name)
        return None

    def _private_is_own(self, obj: object) -> bool:
        """Whether `_names` on `obj` are the code's: its own function, or a class of its whose bases are too.

        A subclass of a standard library class inherits that class's private state (`asyncio.Lock._get_loop`),
        so only builtin bases (`object`, `Exception`, `dict`, ...), `ABC` and typing's generics may sit under them.
        """
        if isinstance(obj, types.FunctionType):
            return self.is_own(obj)
        cls = obj if isinstance(obj, type) else type(obj)
        return all(
            SANDBOX_CLASS_MARK in vars(base) or base.__module__ in PLAIN_BASE_MODULES for base in cls.__mro__
        ) and bool(getattr(cls, SANDBOX_CLASS_MARK, False))

    def hasattr(self, obj: object, name: str) -> bool:
        """`hasattr` that answers False for hidden attributes instead of revealing them."""
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def setattr(self, obj: object, name: str, value: object) -> None:
        """`setattr`, only on the code's own objects and never a dunder."""
        if type(name) is not str or name.startswith("__"):
            forbid(f"setting `{name}` is not allowed: dunder attributes are private in the sandbox")
        setattr(self.write(obj), name, value)

    def delattr(self, obj: object, name: str) -> None:
        """`delattr`, with the same rules as `setattr`."""
        if type(name) is not str or name.startswith("__"):
            forbid(f"deleting `{name}` is not allowed: dunder attributes are private in the sandbox")
        delattr(self.write(obj), name)

    def write(self, obj: object) -> Any:
        """The target of `obj.x = v` / `obj[k] = v`: attribute writes only on the code's own objects."""
        if type(obj) in (dict, list) or self.is_own(obj) or isinstance(obj, textwrap.TextWrapper):
            return obj
        if isinstance(obj, decimal.Context):
            return ContextWrites(obj, self)  # its sizes capped
        return _ItemsOnly(obj)

    def write_slice(self, obj: object) -> Any:
        """The target of `obj[a:b] += v` and of a slice among several targets: its growth checked as written."""
        return SliceWrites(self, obj, self.write)

    def set_slice(self, value: Any, obj: Any, key: object) -> None:
        """`obj[a:b] = value` (arguments in CPython's order of evaluation): a list's growth checked first."""
        kind = type(obj)
        if (kind is list or kind is bytearray) and type(value) in _HELD and len(obj) + len(value) <= self.max_size:
            obj[key] = value  # it fits however many items the slice replaces
        elif not assign_slice(self, obj, key, value):
            self.write(obj)[key] = value

    @staticmethod
    def getitem(obj: Any, key: object) -> Any:
        """`obj[key]`; a subscription typing caches for the whole process takes no key the code hashes."""
        if type(obj) not in _PLAIN_SUBSCRIPTED:
            check_subscription(obj, key)
        return obj[key]

    @staticmethod
    def unpack_sequence(it: Any, spec: Any, _getiter_: Any) -> Any:
        """Tuple assignment (RestrictedPython's guard)."""
        return guarded_unpack_sequence(it, spec, _as_is)  # type: ignore[no-untyped-call]

    @staticmethod
    def apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A call with `*args` or `**kwargs`."""
        return func(*args, **kwargs)


class Guards(Rules, Budget):
    """One run's guards: the rules, and what is the run's own (its budget, the coroutines its code made)."""

    def __init__(
        self, *, operations: int, deadline: float, timeout: float, max_size: int, repeat: Repeat | None
    ) -> None:
        self.max_size = max_size  # all `Rules` keeps
        Budget.__init__(self, operations=operations, deadline=deadline, timeout=timeout)
        self.repeat = repeat
        """What makes the run repeatable (its seed, its clock), or None: the module facades read it on import."""
        self.coroutines: list[Any] = []
        self.async_generators: list[Any] = []

    def getiter(self, obj: Iterable[Any]) -> Iterator[Any]:
        """The iterable of a `for` statement or a comprehension: each item it produces takes a tick."""
        return self.ticking(obj)

    def coroutine(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap an `async def` of the code's so its coroutines are known, and closed if never awaited."""
        return functools.update_wrapper(_tracked(function, self.coroutines, self.async_generators), function)

    def close_unawaited(self) -> None:
        """Close the code's coroutines that never started (what CPython would warn about in the host)."""
        for coro in self.coroutines:
            if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
                coro.close()
        self.coroutines.clear()

    def yield_from(self, iterable: Any) -> Any:
        """The iterable of a `yield from`: a builtin one's items take a tick each (`sandbox._runtime.ticking`)."""
        return yield_from(self, iterable)

    def own_guards(self, names: Iterable[tuple[str, str]]) -> dict[str, object]:
        """The run's own guard functions among `names` (`RUN_GUARDS` items the code uses)."""
        return {name: getattr(self, attribute) for name, attribute in names}


RULE_GUARDS: Final = {
    "_getattr_": "getattr",
    "_getitem_": "getitem",
    "_write_": "write",
    "_writeslice_": "write_slice",
    "_setslice_": "set_slice",
    "_unpack_sequence_": "unpack_sequence",
    "_apply_": "apply",
    "_inplacevar_": "inplace",
    "_mul_": "mul",
    "_pow_": "pow",
    "_lshift_": "lshift",
    "_mod_": "mod",
    "_format_": "format",
    "_add_": "add",
    "_iadd_": "iadd",
    "_imul_": "imul",
    "_ipow_": "ipow",
    "_ilshift_": "ilshift",
    "_imod_": "imod",
    "_star_": "star",
}
"""The guards the policy's rewritten code calls that hold nothing of a run, by name -> their `Rules` method."""
RUN_GUARDS: Final = {
    "_tick_": "tick",
    "_gate_": "gate",
    "_getiter_": "getiter",
    "_citer_": "getiter",
    "_yieldfrom_": "yield_from",
    "_coroutine_": "coroutine",
}
"""The guards bound to one run (its budget, its coroutines), by name -> their `Guards` attribute."""


@functools.lru_cache(maxsize=64)
def rules_for(max_size: int) -> Rules:
    """The rules shared by every run with this `max_size`."""
    return Rules(max_size=max_size)


def rule_names(rules: Rules) -> dict[str, object]:
    """The shared guard functions under the names the policy's rewritten code uses."""
    return {name: getattr(rules, method) for name, method in RULE_GUARDS.items()}


def _tracked(function: Callable[..., Any], coroutines: list[Any], async_generators: list[Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        coro = function(*args, **kwargs)
        if inspect.iscoroutine(coro):  # held until the run ends, so one never awaited is closed, not warned about
            coroutines.append(coro)
        elif inspect.isasyncgen(coro):  # closed by the run, or the loop's finalizer would run it afterwards
            async_generators.append(coro)
        return coro

    return call


_COROUTINE_CODE = next(c for c in _tracked.__code__.co_consts if isinstance(c, types.CodeType))
"""The code of the wrapper `_coroutine_` puts on an `async def`: `is_own` knows it as the code's (`functools.wraps`)."""


def _as_is(obj: Iterable[Any]) -> Iterable[Any]:
    return obj


def _wrapped_method(obj: object, name: str, value: object) -> Callable[..., Any] | None:
    """An async generator's awaited-only `asend`, a pattern's plain-template `sub`, a plain-string `strptime`.

    re and _strptime cache what they parse for the whole process, keyed by strings the code could make lie.
    """
    if name in ASYNC_GENERATOR_AWAITABLES and isinstance(obj, types.AsyncGeneratorType):
        return awaited_only(getattr(obj, name))
    if name == "strptime" and type(value) is types.BuiltinMethodType:  # not an override of the code's
        cls = obj if isinstance(obj, type) else type(obj)
        if issubclass(cls, datetime.datetime):
            return _plain_strptime(value)
    return templated(obj, name)


def _plain_strptime(strptime: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
    def strptime_(date_string: str, format: str, /) -> Any:  # datetime's own parameter name
        return strptime(plain(date_string), plain(format))  # the cache is keyed by the format: no code's hash

    return strptime_


def _is_shared_class_attribute(obj: object, name: str, value: object) -> bool:
    """Whether `value` is `name` in the namespace of a standard class of `obj`'s (or of `obj`, a class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return any(vars(base).get(name) is value for base in cls.__mro__ if SANDBOX_CLASS_MARK not in vars(base))


def _is_tuple_or_tuple_class(obj: object) -> bool:
    return isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))


class _ItemsOnly:
    """What `_write_` returns for objects the code does not own: item writes pass, attribute writes fail."""

    __slots__ = ("_target",)
    _target: Any

    def __init__(self, target: object) -> None:
        object.__setattr__(self, "_target", target)

    def __setitem__(self, key: object, value: object) -> None:
        self._target[key] = value

    def __delitem__(self, key: object) -> None:
        del self._target[key]

    def __setattr__(self, name: str, value: object) -> None:
        forbid(f"cannot set `.{name}` on {_describe(self._target)}: only objects the code created can be changed")

    def __delattr__(self, name: str) -> None:
        forbid(f"cannot delete `.{name}` from {_describe(self._target)}")


def _describe(obj: object) -> str:
    name = getattr(obj, "__sandbox_module__", None) if type(obj).__name__ == "Module" else None
    stand_in = isinstance(obj, type) and real_bases((obj,))[0] is not obj  # `list`, `deque`: a class, as the code knows
    return f"module {name!r}" if name else f"a {'type' if stand_in else type(obj).__name__!r} object"
