"""The types the code sees for the run's lazy iterators: CPython's names and `isinstance`, and no tick skipped.

The run's `iter`, `reversed` and itertools' iterators are `itertools.compress` objects that take a tick per item;
each is made as a subclass named after the iterator it wraps (`list_iterator`, `count`), so `type(it).__name__`
reads as in CPython, and that class cannot be called: the real `compress` would make an iterator that never
ticks. `map`, `filter`, `zip`, `enumerate` and `reversed` are classes, as in CPython, whose calls build the
ticking iterator of the run calling (found in its builtins, as the size-checked collections find theirs), and
which answer `isinstance` and `type(x) is map` like the real ones. Apart from `sandbox._ticking` because these
are types, made once for every run, where that module builds each run's functions.
"""

from __future__ import annotations

import itertools
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from sandbox._classes import SHOWN_TYPES, SIZE_GUARDS
from sandbox._signals import forbid

if TYPE_CHECKING:
    import types
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
    """`map`, `filter`, `zip`, `enumerate`, `reversed` as the code knows them: a call gives a ticking one."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> _LazyType:
        base = next(b for b in bases if isinstance(b, _LazyType))
        raise TypeError(f"`{base.__name__}` cannot be subclassed in the sandbox; wrap it in a class of yours")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _MAKERS[cls](_running_guards(cls), *args, **kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        real = _REAL[cls]
        return isinstance(instance, real) or issubclass(_WRAPPED.get(type(instance), type(None)), real)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        if isinstance(subclass, type):
            subclass = _REAL.get(subclass) or _WRAPPED.get(subclass) or subclass
        return issubclass(subclass, _REAL[cls])

    def __getattr__(cls, name: str) -> Any:
        return getattr(_REAL[cls], name)

    def __repr__(cls) -> str:
        return repr(_REAL[cls])


def _running_guards(cls: type) -> Guards:
    """The guards of the run whose code is calling: the nearest frame with the run's builtins.

    Usually the caller; a guard of the run's (`_apply_` of `zip(*rows)`) or a C caller passes its caller's.
    """
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        guards: Guards | None = frame.f_builtins.get(SIZE_GUARDS)
        if guards is not None:
            return guards
        frame = frame.f_back
    forbid(f"`{cls.__name__}` is called outside the run that has it; call it while the run is going")


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


_MAKERS: dict[type, Callable[..., Any]] = {}
_REAL: dict[type, type] = {}
for _real, _maker in ((map, _map), (filter, _filter), (zip, _zip), (enumerate, _enumerate), (reversed, _reversed)):
    _lazy = type.__new__(_LazyType, _real.__name__, (), {"__module__": "builtins", "__doc__": _real.__doc__})
    _MAKERS[_lazy], _REAL[_lazy], SHOWN_TYPES[_real] = _maker, _real, _lazy
SHOWN_TYPES[_named(type(reversed("")))] = SHOWN_TYPES[reversed]  # `type(reversed("ab")) is reversed`

LAZY_TYPES: dict[str, type] = {real.__name__: lazy for lazy, real in _REAL.items()}
"""The run's `map`, `filter`, `zip`, `enumerate` and `reversed`, the same for every run."""
