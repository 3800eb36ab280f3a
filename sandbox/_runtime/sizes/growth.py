"""Size checks of the methods that build from their arguments more than any operator guard sees.

One call can add a whole range to a collection (`deque.extend(range(n))`, `dict.fromkeys(range(n))`), ask an
extendable hash for `n` bytes (`shake_128().digest(n)`), or expand each `%` of a date format. `Guards.wrapped`
hands out such a method checked when the code reads it (`growing`), so the refusal comes before the allocation.
Apart from `sandbox._runtime.sizes.operations` because these are methods of many types, where that module guards
the operators.
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import itertools
import operator
import random
import re
from typing import TYPE_CHECKING, Any, Final

from sandbox._runtime.classes import real_bases
from sandbox._runtime.sizes.counts import COUNTED, counted
from sandbox._runtime.stdlib.regex import checked_sub

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._runtime.sizes.operations import SizeGuards

_COUNTED_TYPES: tuple[type[Any], ...] = (str, bytes, bytearray, list, tuple, collections.deque, dict, set, frozenset)
_ADDING: dict[str, tuple[type, ...]] = {
    "extend": (list, bytearray, collections.deque, collections.UserList),
    "extendleft": (collections.deque,),
    "fromkeys": (dict,),
    "update": (set, collections.Counter),
    "union": (set, frozenset),
    "symmetric_difference": (set, frozenset),
}
"""Each method that adds a whole iterable, and the classes whose method it is (a dict's `update` needs pairs)."""
_XOF: Final = type(hashlib.new("shake_128"))
"""An extendable-output hash: its `digest(n)` and `hexdigest(n)` make as many bytes as asked."""
DATES: Final = (datetime.date, datetime.time)
"""What formats itself with `strftime`: `d.strftime(f)`, `format(d, f)` and `f"{d:{f}}"`."""
STRFTIME_FIELD: Final = 100
"""Characters one `%` directive of a date format may become, at most (`%c` is 24; a zone name is shorter)."""
GROWING: Final = frozenset({*_ADDING, *COUNTED, "digest", "hexdigest", "strftime", "sub", "subn"})
"""Method names `Guards.wrapped` asks `growing` about."""


def range_length(span: range) -> int:
    """The length of a range, even one longer than `len` can answer (`range(10**20)`)."""
    try:
        return len(span)
    except OverflowError:
        return max(0, (span.stop - span.start + span.step - (1 if span.step > 0 else -1)) // span.step)


def known_len(obj: object) -> int:
    """How many items iterating `obj` gives, where its type says so without running the code's: 0 if unknown.

    A range by its bounds, a builtin collection (a subclass's too) by its base type's `__len__`, a `UserList`
    by its `data`; anything lazy takes a tick per item instead.
    """
    if type(obj) is range:
        return range_length(obj)
    for kind in _COUNTED_TYPES:
        if isinstance(obj, kind):
            length: int = kind.__len__(obj)
            return length
    if isinstance(obj, collections.UserList):
        data = object.__getattribute__(obj, "__dict__").get("data")  # the stored list: a property may lie
        return known_len(data) if not isinstance(data, collections.UserList) else 0
    return 0


def check_strftime(guards: SizeGuards, template: object) -> object:
    """Refuse a date format whose directives could expand past the size limit; returns the format to use."""
    if not isinstance(template, str):
        return template  # strftime's own TypeError
    text = str.__str__(template)  # the text itself, as a plain str: a subclass's `count` or `len` may lie
    guards.check_length(len(text) + text.count("%") * STRFTIME_FIELD, "a string of length")
    return text


def growing(guards: SizeGuards, obj: object, name: str, method: Callable[..., Any]) -> Callable[..., Any] | None:
    """The method `name` of `obj` (read as `method`), refusing a call that would build past the size limit.

    None when `obj` is not one whose `name` needs the check. Unbound (`list.extend(x, r)`), the first argument
    is the collection; `fromkeys` builds a new dict from its first.
    """
    unbound = isinstance(obj, type)
    cls = real_bases((obj,))[0] if unbound else type(obj)
    if not isinstance(cls, type):
        return None
    if name in ("sub", "subn"):
        return checked_sub(guards, obj, name) if isinstance(obj, re.Pattern) else None
    if name in COUNTED:
        return counted(guards, method, name, unbound=unbound) if _random_own(cls, name) else None
    if name in _ADDING:
        return _adding(guards, obj, name, method, unbound=unbound) if issubclass(cls, _ADDING[name]) else None
    if name == "strftime" and issubclass(cls, DATES):
        return _checked_first(method, unbound, "format", lambda template: check_strftime(guards, template))
    if name in ("digest", "hexdigest") and issubclass(cls, _XOF):
        per_byte = 2 if name == "hexdigest" else 1

        def length(count: Any) -> int:
            n = operator.index(count)  # once, as a plain int: the code's `__index__` may answer differently each time
            guards.check_length(per_byte * n, "bytes of length")
            return n

        return _checked_first(method, unbound, "length", length)
    return None


def _random_own(cls: type, name: str) -> bool:
    """Whether `name` of `cls` is `random.Random`'s own method, not one a subclass of the code's defines."""
    if not issubclass(cls, random.Random):
        return False
    definer = next(base for base in cls.__mro__ if name in vars(base))
    return definer.__module__ in ("random", "_random")


def _adding(
    guards: SizeGuards, obj: object, name: str, method: Callable[..., Any], *, unbound: bool
) -> Callable[..., Any]:
    fresh = name == "fromkeys"

    def grow(*args: Any, **kwargs: Any) -> Any:
        target, added = (None, args[:1]) if fresh else (args[0], args[1:]) if unbound and args else (obj, args)
        guards.check_length(known_len(target) + sum(map(known_len, added)), "a collection of length")
        return method(*args, **kwargs)

    return grow


def _checked_first(
    method: Callable[..., Any], unbound: bool, keyword: str, check: Callable[[Any], object]
) -> Callable[..., Any]:
    """`method`, its first argument after the object (or `keyword`) replaced by what `check` makes of it."""
    skip = 1 if unbound else 0

    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > skip:
            args = (*args[:skip], check(args[skip]), *args[skip + 1 :])
        elif keyword in kwargs:
            kwargs[keyword] = check(kwargs[keyword])
        return method(*args, **kwargs)

    return call


_SLICED: Final = (list, bytearray)
"""What slice assignment can grow (`x[len(x):] = x` doubles a list)."""
_HELD: Final = (list, tuple)


def assign_slice(guards: SizeGuards, target: Any, key: Any, value: Any) -> bool:
    """`target[key] = value` for a list or bytearray, its growth checked first; False (nothing done) for others.

    A subclass's own `__setitem__` is the code's, and gets the slice as written (False here too).
    """
    kind: Any = type(target)
    if kind is not list and kind is not bytearray:
        kind = next((base for base in _SLICED if isinstance(target, base)), None)
        if kind is None or type(target).__setitem__ is not kind.__setitem__:
            return False
    if type(key) is slice:
        length: int = kind.__len__(target)  # the base type's: a subclass's `len` may lie
        added = len(value) if type(value) in _HELD else known_len(value)
        lazy = not added and hasattr(type(value), "__iter__") and not isinstance(value, _COUNTED_TYPES)
        if lazy or length + added > guards.max_size:  # else it fits however many items the slice replaces
            key, removed = _plain_slice(key, length)
            room = guards.max_size - (length - removed)
            if lazy:
                value = list(itertools.islice(value, max(room, 0) + 1))  # as CPython reads it first, but no further
                added = len(value)
            if added > room:
                guards.check_length(length - removed + added, "a sequence of length")
    target[key] = value
    return True


class SliceWrites:
    """What `x[a:b] += v` (or `x[a:b] = y = v`) writes through: a list's or bytearray's slices checked as assigned."""

    __slots__ = ("_guards", "_target", "_write")

    def __init__(self, guards: SizeGuards, target: Any, write: Callable[[Any], Any]) -> None:
        self._guards, self._target, self._write = guards, target, write

    def __setitem__(self, key: Any, value: Any) -> None:
        if not assign_slice(self._guards, self._target, key, value):
            self._write(self._target)[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._write(self._target)[key]


def _plain_slice(key: slice, length: int) -> tuple[slice, int]:
    """`key` of plain ints, read once (the code's `__index__` may answer differently), and how many it replaces."""
    start, stop, step = key.indices(length)
    if step == 1:
        return slice(start, stop), max(stop - start, 0)
    chosen = range(start, stop, step)
    if not chosen:
        return slice(0, 0, step), 0
    after = chosen[-1] + step
    return slice(chosen[0], after if after >= 0 else None, step), len(chosen)  # extended: the same size, or an error
