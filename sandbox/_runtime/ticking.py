"""The lazy iterators the model's code is handed, each taking a tick per item it pulls or produces.

A C consumer (`sum`, `list`, `"".join`, unpacking, `filter` itself) runs a lazy iterator to its end without
a single `for` of the code's, so the budget is taken at the source: the builtins `filter`, `map`, `zip`,
`enumerate`, `iter` and `reversed`, and itertools' iterators, pull through `Budget.ticking` (or produce through
it), so however deep in C they are driven, an endless one stops at the operation budget. Their items and order
are CPython's.
"""

from __future__ import annotations

import itertools
import operator
import types
from typing import TYPE_CHECKING, Any

from sandbox._runtime.lazytypes import is_ticking, lazy_builtins, ticking_as
from sandbox._runtime.sizes.growth import range_length

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from sandbox._runtime.guards import Guards

_PRODUCING = "count cycle zip_longest starmap takewhile pairwise".split()
"""itertools' iterators that produce an item at each pull of theirs: a tick per item produced bounds them."""
_COPYING = ("permutations", "combinations", "combinations_with_replacement")
"""itertools' iterators that copy their iterable into a tuple, and size their index arrays by `r`, when made."""
_SKIPPING = {"filterfalse": 1, "dropwhile": 1, "islice": 0, "groupby": 0, "compress": 0, "batched": 0}
"""itertools' iterators that may pull many items per item produced: the position of the iterable they pull."""
_PULLED_KEYWORDS = ("iterable", "data")
"""The same iterable passed by keyword (`groupby(iterable=...)`, `compress(data=...)`)."""
_HEAP_TYPE = 1 << 9
"""`Py_TPFLAGS_HEAPTYPE`: a class made by a `class` statement, whose iteration runs Python code (that ticks)."""
_DELEGATED = (types.GeneratorType, types.CoroutineType, itertools.compress)
"""What `yield from` is handed as written: a generator takes `send`/`throw`/`close` itself; a compress ticks."""


def yield_from(guards: Guards, iterable: Any) -> Any:
    """The guard `_yieldfrom_` of `yield from x`: a builtin iterable's items take a tick each, as a `for` loop's do.

    A C consumer (`deque(g(), maxlen=0)`) drives the code's generator with no tick of its own, so a huge
    `range` delegated to would run unbudgeted. Generators and iterators with a `send` (a future's) are handed on as
    they are, so `send`, `throw` and `close` reach them as in CPython; the others have none of those to reach.
    """
    kind = type(iterable)
    if kind.__flags__ & _HEAP_TYPE or kind in _DELEGATED:
        return iterable
    iterator = iter(iterable)  # a builtin type's: no code of the run's runs, and CPython would call it too
    return iterator if hasattr(type(iterator), "send") else ticking_as(iterator, guards.ticks)


def ticking_builtins(guards: Guards) -> dict[str, Any]:
    """The lazy builtins, a tick per item they pull or produce; `sum`, `max`, `min`, `any`, `all`, per item taken.

    The consumers are ticked too because a `range` they run over is no lazy iterator of ours.
    """
    ticking = guards.ticking

    def iter_(obj: Any, *sentinel: Any) -> Any:
        if not sentinel and is_ticking(obj):  # already ticking: `iter(it) is it`, as in CPython
            return obj
        iterator = iter(obj, *sentinel)
        if guards.is_own(iterator):  # the code's own iterator: its `__next__` ticks on each call, as every call does
            return iterator
        return ticking_as(iterator, guards.ticks)

    def sum_(iterable: Any, /, start: Any = 0) -> Any:
        return guards.sum(ticking(iterable), start)

    def max_(*args: Any, **kwargs: Any) -> Any:
        return max(*map(ticking, args), **kwargs) if len(args) == 1 else max(*args, **kwargs)

    def min_(*args: Any, **kwargs: Any) -> Any:
        return min(*map(ticking, args), **kwargs) if len(args) == 1 else min(*args, **kwargs)

    def any_(iterable: Any, /) -> bool:
        return any(ticking(iterable))

    def all_(iterable: Any, /) -> bool:
        return all(ticking(iterable))

    made = {
        "iter": iter_,
        "sum": sum_,
        "max": max_,
        "min": min_,
        "any": any_,
        "all": all_,
    }
    for name, function in made.items():
        function.__name__ = function.__qualname__ = name
    return made | lazy_builtins(guards)


class _Chain:
    """itertools' `chain`, a tick per item, with its `from_iterable`."""

    def __init__(self, ticking: Callable[[Iterable[Any]], Iterator[Any]]) -> None:
        self._ticking = ticking

    def __call__(self, *iterables: Any) -> Iterator[Any]:
        return self._ticking(itertools.chain(*iterables))

    def from_iterable(self, iterables: Any, /) -> Iterator[Any]:
        """The items of each iterable in `iterables`, one after the other."""
        return self._ticking(itertools.chain.from_iterable(iterables))


def ticking_itertools(guards: Guards) -> dict[str, Any]:
    """Itertools' lazy iterators, a tick per item they pull or produce (`tee` pulls through a ticking one)."""
    ticking = guards.ticking

    def shown(iterator: Iterable[Any]) -> Iterator[Any]:  # what the code gets: named as `iterator`'s type
        return ticking_as(iter(iterator), guards.ticks)

    def producing(real: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def make(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return shown(real(*args, **kwargs))

        make.__name__ = make.__qualname__ = real.__name__
        return make

    def skipping(real: Callable[..., Iterator[Any]], position: int) -> Callable[..., Iterator[Any]]:
        def make(*args: Any, **kwargs: Any) -> Iterator[Any]:
            if len(args) > position:
                args = (*args[:position], ticking(args[position]), *args[position + 1 :])
            kwargs |= {name: ticking(kwargs[name]) for name in _PULLED_KEYWORDS if name in kwargs}
            return real(*args, **kwargs)

        make.__name__ = make.__qualname__ = real.__name__
        return make

    def repeat(item: Any, times: Any = None) -> Iterator[Any]:
        if times is None:
            return shown(itertools.repeat(item))
        times = operator.index(times)
        guards.check_length(times, "a repetition of length")
        return shown(itertools.repeat(item, times))

    def accumulate(iterable: Any, func: Any = None, *, initial: Any = None) -> Iterator[Any]:
        # The default adds in C, past the `+` guard; a function of the code's is guarded inside.
        return shown(itertools.accumulate(iterable, guards.add if func is None else func, initial=initial))

    def product(*iterables: Any, repeat: Any = 1) -> Iterator[Any]:
        repeat = operator.index(repeat)  # once, as a plain int
        # C copies each iterable into a tuple (a range too), then holds `repeat` references to each
        ranges = sum(range_length(pool) for pool in iterables if type(pool) is range)
        guards.check_length(ranges + len(iterables) * max(repeat, 0), "a collection of length")
        return shown(itertools.product(*(_pool(guards, pool) for pool in iterables), repeat=repeat))

    def tee(iterable: Any, n: Any = 2, /) -> tuple[Iterator[Any], ...]:
        return itertools.tee(ticking(iterable), guards.check_length(n, "a tuple of length"))

    members: dict[str, Any] = {
        name: producing(getattr(itertools, name)) for name in _PRODUCING if hasattr(itertools, name)
    }
    members |= {
        name: skipping(getattr(itertools, name), position)
        for name, position in _SKIPPING.items()
        if hasattr(itertools, name)
    }
    members["chain"] = _Chain(shown)
    return members | {
        "repeat": repeat,
        "accumulate": accumulate,
        "product": product,
        **{name: _copying(guards, getattr(itertools, name)) for name in _COPYING},
        "tee": tee,
    }


def _pool(guards: Guards, iterable: Any) -> tuple[Any, ...]:
    """What itertools copies into a tuple before its first item, checked against the size cap.

    A range by its length; any iterable read through ticks and refused one item past the cap (an endless one
    ends at the operation budget).
    """
    if type(iterable) is range:
        guards.check_length(range_length(iterable), "a collection of length")
    items = tuple(itertools.islice(guards.ticking(iterable), guards.max_size + 1))
    guards.check_length(len(items), "a collection of length")
    return items


def _copying(guards: Guards, real: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """`permutations`/`combinations`/`combinations_with_replacement`: the pool and `r` checked, a tick per item."""

    def make(iterable: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        # C sizes its index arrays (and each tuple it makes) by `r` before the first item
        if args and args[0] is not None:
            args = (guards.check_length(args[0], "a tuple of length"), *args[1:])
        if kwargs.get("r") is not None:
            kwargs["r"] = guards.check_length(kwargs["r"], "a tuple of length")
        return ticking_as(real(_pool(guards, iterable), *args, **kwargs), guards.ticks)

    make.__name__ = make.__qualname__ = real.__name__
    return make
