"""The types the code sees for the run's lazy iterators: CPython's names and `isinstance`, and no tick skipped.

The run's `iter`, `reversed` and itertools' iterators are `itertools.compress` objects that take a tick per item;
each is made as a subclass named after the iterator it wraps (`list_iterator`, `count`), so `type(it).__name__`
reads as in CPython, and that class cannot be called: the real `compress` would make an iterator that never
ticks. A run's `map`, `filter`, `zip`, `enumerate` and `reversed` are its own objects (they pull through its
budget) that answer `isinstance(x, map)` like the classes, and `type(m)` of a real `map` is a class of that name
that cannot be called: the real one would make a `map` that never ticks. Apart from `sandbox._runtime.ticking` because
these are types, made once for every run, where that module builds each run's functions.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

from sandbox._runtime.classes import SHOWN_TYPES, SafeType
from sandbox._runtime.signals import forbid

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from sandbox._runtime.guards import Guards

Ticking: TypeAlias = "Callable[[Iterable[Any]], Iterator[Any]]"
_NONE: Any = object()
"""An argument not given (CPython's own error for too few is raised by calling the real one with fewer)."""
_HEAP_TYPE = 1 << 9
"""`Py_TPFLAGS_HEAPTYPE`: a class made at run time; only builtin iterator types get a named class (a bounded set)."""
_MAKE_COMPRESS = itertools.compress.__new__
_WRAPPED: dict[type, type] = {}
"""Each named ticking class -> the builtin iterator type it is named after."""
_NAMED: dict[type, type] = {}
"""The reverse: a builtin iterator type -> its named ticking class."""


def _cannot_create(cls: type, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"cannot create '{cls.__name__}' instances")


def _named(real: type) -> type:
    named = _NAMED.get(real)
    if named is None:
        namespace = {"__slots__": (), "__new__": _cannot_create, "__module__": real.__module__, "__doc__": real.__doc__}
        named = _NAMED[real] = type(real.__name__, (itertools.compress,), namespace)
        named.__qualname__ = real.__qualname__
        _WRAPPED[named] = real
    return named


def ticking_as(iterator: Iterator[Any], ticks: Iterator[int]) -> Iterator[Any]:
    """`iterator`'s items, a tick after each, in a ticking object whose type has `iterator`'s type's name."""
    kind = type(iterator)
    if kind.__flags__ & _HEAP_TYPE:
        return itertools.compress(iterator, ticks)
    made: Iterator[Any] = _MAKE_COMPRESS(_named(kind), iterator, ticks)
    return made


def is_ticking(obj: object) -> bool:
    """Whether `obj` is a ticking iterator the run handed out (`iter(it) is it` for those)."""
    return type(obj) is itertools.compress or type(obj) in _WRAPPED


class _LazyType(type):
    """What `type(m)` answers for a real `map` (`filter`, ...): named and `isinstance`-able, never callable.

    Calling the real class would make one that never ticks; the run's own `map` is the one to call.
    """

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> _LazyType:
        raise TypeError(f"`{bases[0].__name__}` cannot be subclassed in the sandbox; wrap it in a class of yours")

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        forbid(f"`type(x)(...)` cannot make a {cls.__name__!r} in the sandbox; call `{cls.__name__}(...)`")

    def __instancecheck__(cls, instance: Any) -> bool:
        return _is_instance(instance, _REAL[cls])

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return _is_subclass(subclass, _REAL[cls])

    def __repr__(cls) -> str:
        return repr(_REAL[cls])


class _Lazy(functools.partial):  # type: ignore[type-arg]
    # One run's `map` (`filter`, `zip`, `enumerate`, `reversed`): `partial(maker, run's guards)`, called in C, so
    # a call costs what a closure's did. It answers `isinstance(x, map)` and `issubclass` as the class does;
    # `type(map)` is the sandbox's `type`. No docstring of its own: `map.__doc__` is the real one's.

    _real: type

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self._real.__doc__

    @property
    def func(self) -> NoReturn:
        raise AttributeError(f"type object {self._real.__name__!r} has no attribute 'func'")  # the maker is ours

    @property
    def args(self) -> NoReturn:
        raise AttributeError(f"type object {self._real.__name__!r} has no attribute 'args'")  # the run's guards

    @property
    def keywords(self) -> NoReturn:
        raise AttributeError(f"type object {self._real.__name__!r} has no attribute 'keywords'")

    def __getattr__(self, name: str) -> Any:
        if name in ("__name__", "__qualname__"):
            return self._real.__name__
        raise AttributeError(f"type object {self._real.__name__!r} has no attribute {name!r}")

    def __instancecheck__(self, instance: Any) -> bool:
        return _is_instance(instance, self._real)

    def __subclasscheck__(self, subclass: Any) -> bool:
        return _is_subclass(subclass, self._real)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> NoReturn:
        raise TypeError(f"`{self._real.__name__}` cannot be subclassed in the sandbox; wrap it in a class of yours")

    def __repr__(self) -> str:
        return repr(self._real)


def _is_instance(instance: Any, real: type) -> bool:
    return isinstance(instance, real) or issubclass(_WRAPPED.get(type(instance), type(None)), real)


def _is_subclass(subclass: Any, real: type) -> bool:
    if isinstance(subclass, type):
        subclass = _REAL.get(subclass) or _WRAPPED.get(subclass) or subclass
    return issubclass(subclass, real)


def _map(ticking: Ticking, function: Any = _NONE, iterable: Any = _NONE, /, *iterables: Any) -> Any:
    if iterable is _NONE:  # CPython's own message for too few arguments
        return map(*(arg for arg in (function,) if arg is not _NONE))
    return map(function, ticking(iterable), *iterables)  # `map` pulls from its first iterable first


def _filter(ticking: Ticking, function: Any = _NONE, iterable: Any = _NONE, /) -> Any:
    if iterable is _NONE:
        return filter(*(arg for arg in (function,) if arg is not _NONE))
    return filter(function, ticking(iterable))


def _zip(ticking: Ticking, *iterables: Any, strict: bool = False) -> Any:
    if not iterables:
        return zip(strict=strict)
    return zip(ticking(iterables[0]), *iterables[1:], strict=strict)  # likewise `zip`


def _enumerate(ticking: Ticking, *args: Any, **kwargs: Any) -> Any:
    if args:
        return enumerate(ticking(args[0]), *args[1:], **kwargs)
    if "iterable" in kwargs:
        kwargs["iterable"] = ticking(kwargs["iterable"])
    return enumerate(**kwargs)


def _reversed(ticks: Iterator[int], *args: Any, **kwargs: Any) -> Any:
    return ticking_as(reversed(*args, **kwargs), ticks)


_REAL: dict[type, type] = {}
_LAZY: list[tuple[str, type, Callable[..., Any]]] = []
_REVERSED: type
for _real, _maker in ((map, _map), (filter, _filter), (zip, _zip), (enumerate, _enumerate), (reversed, None)):
    _shown = type.__new__(_LazyType, _real.__name__, (), {"__module__": "builtins", "__doc__": _real.__doc__})
    _REAL[_shown], SHOWN_TYPES[_real] = _real, _shown
    _lazy = type(_real.__name__, (_Lazy,), {"_real": _real, "__module__": "builtins"})
    SHOWN_TYPES[_lazy] = SafeType  # `type(map)` is `type`, and `type(map)(...)` makes a class, not a `_Lazy`
    if _maker is not None:
        _LAZY.append((_real.__name__, _lazy, _maker))
    else:
        _REVERSED = _lazy
SHOWN_TYPES[_named(reversed)] = SHOWN_TYPES[reversed]  # `reversed("ab")`: a ticking one named `reversed`


def lazy_builtins(guards: Guards) -> dict[str, Any]:
    """The run's `map`, `filter`, `zip`, `enumerate` and `reversed`."""
    made = {name: lazy(maker, guards.ticking) for name, lazy, maker in _LAZY}
    made["reversed"] = _REVERSED(_reversed, guards.ticks)
    for lazy in made.values():
        # `functools.partial(map)` reads a partial's maker and guards in C unless it has an instance dict (a
        # copy keeps it): with one, it wraps `map` as given, as CPython's `partial(map).func is map`
        vars(lazy)["_run"] = True
    return made
