"""Size checks of the standard functions told how many items to make: `random`'s and `heapq`'s.

`random.choices(p, k=n)`, `random.sample(p, n)`, `getrandbits(n)` and `randbytes(n)` build a list, int or bytes as
big as the count they are given, and `heapq.nlargest(n, r)` sorts or heaps up to `n` items of `r`. Each is
refused before it builds past `max_size`, for the `random` module's functions and for a `random.Random` the code
makes (its methods are checked when the code reads them, `Guards.wrapped`); random's own methods call one
another unchecked, so `randrange` runs at C speed. Apart from `sandbox._runtime.sizes.growth`, which dispatches here,
because these are counts the call is given, not collections it adds.
"""

from __future__ import annotations

import collections
import heapq
import operator
from typing import TYPE_CHECKING, Any, Final

from sandbox._runtime.classes import check_size

if TYPE_CHECKING:
    import random
    from collections.abc import Callable, Iterator

    from sandbox._runtime.sizes.operations import SizeGuards

_COUNTS: Final = {
    "choices": ("k", None, "a collection of length"),
    "sample": ("k", 1, "a collection of length"),
    "getrandbits": ("k", 0, "an int with a bit length"),
    "randbytes": ("n", 0, "bytes of length"),
}
"""Each counted method of `random.Random`: its count's keyword, its position after `self` (None: keyword only),
and what the count makes."""
COUNTED: Final = frozenset(_COUNTS)
_HELD: Final = frozenset({list, tuple, dict, set, frozenset, str, bytes, bytearray, collections.deque})
"""What `heapq` reads as it is: the items exist already (and its `len` picks CPython's own way through)."""


def counted(guards: SizeGuards, method: Callable[..., Any], name: str, *, unbound: bool) -> Callable[..., Any]:
    """`random.Random`'s method `name` (read as `method`; `unbound`: from the class), its count checked first."""
    keyword, position, what = _COUNTS[name]
    index = None if position is None else position + (1 if unbound else 0)

    def call(*args: Any, **kwargs: Any) -> Any:
        if index is not None and len(args) > index:
            args = (*args[:index], _count(guards, args[index], what), *args[index + 1 :])
        elif keyword in kwargs:
            kwargs[keyword] = _count(guards, kwargs[keyword], what)
        return method(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    return call


def _count(guards: SizeGuards, count: Any, what: str) -> Any:
    """`count` as a plain int, refused past the cap; a value that is no integer is left to the method's own error."""
    if isinstance(count, float) or not hasattr(type(count), "__index__"):
        return count
    return guards.check_length(operator.index(count), what)  # once: the code's `__index__` may answer differently


def random_members(guards: SizeGuards, generator: random.Random, names: str) -> dict[str, Any]:
    """The `random` module's functions `names`: `generator`'s methods, the counted ones checked."""
    members = {name: getattr(generator, name) for name in names.split()}
    return {
        name: counted(guards, method, name, unbound=False) if name in COUNTED else method
        for name, method in members.items()
    }


def heapq_members(guards: SizeGuards, ticking: Callable[[Any], Iterator[Any]]) -> dict[str, Callable[..., Any]]:
    """`heapq.nlargest` and `nsmallest`: a tick per item they pull (`ticking`), and never more held than the cap."""

    def top(real: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
        def call(n: Any, iterable: Any, key: Any = None) -> list[Any]:
            if isinstance(n, int):
                n = int.__index__(n)  # the value itself: a subclass's `__index__` or `>=` may lie
            if type(n) is not int or n > guards.max_size:  # it may keep every item: read no more than the cap
                iterable = check_size(iterable, guards)
            return real(n, iterable if type(iterable) in _HELD else ticking(iterable), key=key)

        call.__name__ = call.__qualname__ = real.__name__
        call.__doc__ = real.__doc__
        return call

    return {"nlargest": top(heapq.nlargest), "nsmallest": top(heapq.nsmallest)}
