"""The types the code sees for the run's lazy iterators: CPython's names and `isinstance`, and no tick skipped.

The run's `iter`, `reversed` and itertools' iterators are `itertools.compress` objects that take a tick per item;
each is made as a subclass named after the iterator it wraps (`list_iterator`, `count`), so `type(it).__name__`
reads as in CPython, and that class cannot be called: the real `compress` would make an iterator that never
ticks. A run's `map`, `filter`, `zip`, `enumerate` and `reversed` are its own objects (they pull through its
budget) that answer `isinstance(x, map)` like the classes, and `type(m)` of a real `map` is a class of that name
that cannot be called: the real one would make a `map` that never ticks. Apart from `sandbox._ticking` because
these are types, made once for every run, where that module builds each run's functions.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Final, NoReturn

from sandbox._classes import SHOWN_TYPES, SafeType
from sandbox._signals import forbid

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from sandbox._guards import Guards

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


class _Lazy:
    """One run's `map` (`filter`, `zip`, `enumerate`, `reversed`): a call gives a ticking one of its run.

    It answers `isinstance(x, map)` and `issubclass` as the class does; `type(map)` is the sandbox's `type`.
    """

    def __init__(self, real: type, make: Callable[..., Any], guards: Guards) -> None:
        self._real, self._make, self._guards = real, make, guards
        self.__name__ = self.__qualname__ = real.__name__
        self.__doc__ = real.__doc__
        self.__module__ = "builtins"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._make(self._guards, *args, **kwargs)

    def __instancecheck__(self, instance: Any) -> bool:
        return _is_instance(instance, self._real)

    def __subclasscheck__(self, subclass: Any) -> bool:
        return _is_subclass(subclass, self._real)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> NoReturn:
        raise TypeError(f"`{self.__name__}` cannot be subclassed in the sandbox; wrap it in a class of yours")

    def __repr__(self) -> str:
        return repr(self._real)


def _is_instance(instance: Any, real: type) -> bool:
    return isinstance(instance, real) or issubclass(_WRAPPED.get(type(instance), type(None)), real)


def _is_subclass(subclass: Any, real: type) -> bool:
    if isinstance(subclass, type):
        subclass = _REAL.get(subclass) or _WRAPPED.get(subclass) or subclass
    return issubclass(subclass, real)


def _map(guards: Guards, *args: Any) -> Any:
    if len(args) > 1:  # `map` pulls from its first iterable first
        args = (args[0], guards.ticking(args[1]), *args[2:])
    return map(*args)


def _filter(guards: Guards, *args: Any) -> Any:
    if len(args) > 1:
        args = (args[0], guards.ticking(args[1]), *args[2:])
    return filter(*args)


def _zip(guards: Guards, *args: Any, **kwargs: Any) -> Any:
    return zip(*map(guards.ticking, args[:1]), *args[1:], **kwargs)  # noqa: B905 (`strict` is the caller's)


def _enumerate(guards: Guards, *args: Any, **kwargs: Any) -> Any:
    if args:
        args = (guards.ticking(args[0]), *args[1:])
    elif "iterable" in kwargs:
        kwargs["iterable"] = guards.ticking(kwargs["iterable"])
    return enumerate(*args, **kwargs)


def _reversed(guards: Guards, *args: Any, **kwargs: Any) -> Any:
    return ticking_as(reversed(*args, **kwargs), guards.ticks)


_MAKERS: Final = ((map, _map), (filter, _filter), (zip, _zip), (enumerate, _enumerate), (reversed, _reversed))
_REAL: dict[type, type] = {}
for _real, _ in _MAKERS:
    _shown = type.__new__(_LazyType, _real.__name__, (), {"__module__": "builtins", "__doc__": _real.__doc__})
    _REAL[_shown], SHOWN_TYPES[_real] = _real, _shown
SHOWN_TYPES[_named(reversed)] = SHOWN_TYPES[reversed]  # `reversed("ab")`: a ticking one named `reversed`
SHOWN_TYPES[_Lazy] = SafeType  # `type(map)` is `type`, and `type(map)(...)` makes a class, not a `_Lazy`


def lazy_builtins(guards: Guards) -> dict[str, Any]:
    """The run's `map`, `filter`, `zip`, `enumerate` and `reversed`."""
    return {real.__name__: _Lazy(real, make, guards) for real, make in _MAKERS}
