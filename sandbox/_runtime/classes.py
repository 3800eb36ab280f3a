"""The classes the code sees and makes: the sandbox's `type`, the size-checked collection types, the class hook.

The code's class statements go through `make_class` (the policy's `__metaclass__` hook), `type(x)` answers with
the sandbox's `type` or a size-checked stand-in (`list`, `tuple`, `bytes`...), and class namespaces are checked.

A class namespace with dunders of the code's choosing is an escape: `__match_args__ = ("__globals__",)` with a
permissive `__instancecheck__` lets a `match` statement read a host function's globals, and `__del__` runs
code after the run. Class statements are checked by the policy at compile time; classes made at run time
(three-argument `type()`, calling a metaclass) are checked here. The real `type` never reaches the code:
`type(x)` returns the sandbox's `type` wherever the answer would be a metaclass.
"""

from __future__ import annotations

import collections
import itertools
import operator
import sys
from typing import TYPE_CHECKING, Any, Final, SupportsIndex

from sandbox._compiler.compile import MAIN
from sandbox._compiler.names import ALLOWED_DUNDER_METHODS
from sandbox._runtime.comparing import check_comparisons
from sandbox._runtime.signals import forbid
from sandbox._runtime.sizes.text import plain

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from sandbox._runtime.sizes.operations import SizeGuards

_MAIN_LOCALS: Final = f"{MAIN}.<locals>."
MAIN_MODULE: Final = "__main__"
"""The module of the code's classes made by `type(name, bases, namespace)` (as CPython names them at top level)."""
SANDBOX_CLASS_MARK: Final = "__sandbox_class__"
"""Set on every class the code makes: what `Guards.is_own` reads to tell the code's classes from the host's."""
PLAIN_BASE_MODULES: Final = frozenset({"builtins", "abc", "typing"})
"""Modules whose classes may be bases of the code's without hiding its `_private` attributes: no private state."""
_PROBED: Final = frozenset({"_asyncio_future_blocking"})

# Dunders Python itself puts in a class namespace, besides the methods a class body may define.
CLASS_KEYS = ALLOWED_DUNDER_METHODS | {
    "__module__",
    "__qualname__",
    "__doc__",
    "__slots__",
    "__annotations__",
    "__classcell__",
    "__orig_bases__",
    "__static_attributes__",
    "__firstlineno__",
    "__type_params__",
    "__annotate__",
    SANDBOX_CLASS_MARK,
}


SIZE_GUARDS: Final = "_size_guards_"
"""The run's builtins hold its guards under this name; reserved, so the code cannot name it."""


def check_class_namespace(namespace: Any) -> None:
    """Refuse a class namespace holding a dunder the code may not define."""
    for key in namespace:
        name = plain_key(key)
        if name.startswith("__") and name not in CLASS_KEYS:
            forbid(f"a class cannot define `{name}` in the sandbox")


def check_class(bases: tuple[type, ...], namespace: dict[str, Any]) -> None:
    """Refuse a class the code may not make: an asyncio subclass, a private hook override, a comparison off its run.

    Comparisons: see `check_comparisons`. A standard base calls its private hooks with its internals
    (`Queue._wakeup_next(self._getters)`: real Futures).
    """
    check_class_namespace(namespace)
    check_comparisons(bases, namespace)
    private = [name for name in map(plain_key, namespace) if name.startswith("_") and not name.startswith("__")]
    for base in bases:
        for ancestor in base.__mro__:
            if SANDBOX_CLASS_MARK in vars(ancestor) or ancestor.__module__ in PLAIN_BASE_MODULES:
                continue
            if ancestor.__module__.split(".")[0] == "asyncio":
                forbid(
                    f"subclassing `asyncio.{base.__name__}` is not allowed in the sandbox; keep one as an attribute "
                    "of your class instead"
                )
            for name in private:
                if name in vars(ancestor):
                    forbid(
                        f"a class cannot override `{name}` of `{ancestor.__name__}` in the sandbox (the standard "
                        "class calls it with its internals); give your method another name"
                    )


def guarded_getattr_hook(namespace: dict[str, Any]) -> None:
    """Have the class's `__getattr__` never asked for a dunder (or asyncio's future mark).

    Host and standard-library code probe objects by attribute for their protocols (`copy` for `__setstate__`,
    asyncio for `_asyncio_future_blocking`), so a `__getattr__` answering those would be handed their internals.
    The code itself can never read such a name, so its `__getattr__` has no use for them.
    """
    hook = namespace.get("__getattr__")
    if hook is None:
        return

    def __getattr__(self: object, name: str) -> Any:
        if type(name) is not str or (name.startswith("__") and name.endswith("__")) or name in _PROBED:
            raise AttributeError(name)
        return hook(self, name)

    namespace["__getattr__"] = __getattr__


def plain_key(key: object) -> str:
    """A class namespace key as a plain `str` (a subclass's or an object's `__eq__` could pose as any name)."""
    if not isinstance(key, str):
        forbid(f"a class namespace key must be a string, not {type(key).__name__!r}")
    return str(plain(key))


class _TypeMeta(type):
    """Makes the sandbox's `type` answer `isinstance(x, type)` and `type(x)` like the real one."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, type) if cls is SafeType else type.__instancecheck__(cls, instance)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, type) if cls is SafeType else type.__subclasscheck__(cls, subclass)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is SafeType and len(args) == 1 and not kwargs:
            return type_of(args[0])
        return super().__call__(*args, **kwargs)


class SafeType(type, metaclass=_TypeMeta):
    """`type` as the code sees it: `type(x)`, and `type(name, bases, namespace)` with a checked namespace."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> SafeType:
        """A class of the code's, made as a class statement makes it, once its namespace is checked."""
        if type(namespace) is not dict:
            raise TypeError("type() argument 3 must be a dict")
        check_class_namespace(namespace)
        plain_namespace = {"__module__": MAIN_MODULE} | {plain_key(key): value for key, value in dict.items(namespace)}
        check_class(class_bases(bases), plain_namespace)
        guarded_getattr_hook(plain_namespace)
        cls = super().__new__(mcs, name, class_bases(bases), plain_namespace, **kwargs)
        type.__setattr__(cls, SANDBOX_CLASS_MARK, True)
        return cls


SafeType.__name__ = SafeType.__qualname__ = "type"  # `print(type)` shows `<class 'sandbox.type'>`
SafeType.__module__ = "sandbox"


# Each stand-in's standard type, kept outside the stand-in so no attribute of it hands the code the unchecked type.
_REAL_TYPES: dict[type, type] = {}
_SUBCLASSED: dict[type, type] = {}
"""A stand-in -> the base a class statement subclasses in its place, when not the real type (`decimal_context`)."""


class StandIn(type):
    """A standard type as the code sees it: its constructor checked, otherwise indistinguishable from it."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, _REAL_TYPES[cls])

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, _REAL_TYPES[cls])

    def __getattr__(cls, name: str) -> Any:
        return getattr(_REAL_TYPES[cls], name)

    def __repr__(cls) -> str:
        return repr(_REAL_TYPES[cls])


def stand_in(meta: type[StandIn], real: type, *, base: type | None = None) -> type:
    """A class of `meta` standing in for `real` (a class statement subclasses `base`, if given, instead)."""
    proxy = meta(real.__name__, (), {})
    _REAL_TYPES[proxy] = real
    if base is not None:
        _SUBCLASSED[proxy] = base
    proxy.__module__ = real.__module__
    return proxy


class _SizedMeta(StandIn):
    """A builtin collection type whose constructor is size-checked."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        real = _REAL_TYPES[cls]
        if args:
            # The run's guards, from the builtins of the code calling (a C caller passes its caller's frame).
            guards = sys._getframe(1).f_builtins.get(SIZE_GUARDS)
            bound = not _holds_few(real, args, kwargs)
            first = check_size(args[0], guards, counts=real in (bytes, bytearray), bound=bound)
            args = (first, *args[1:])
        return real(*args, **kwargs)


def _holds_few(real: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A deque with a small `maxlen`, which keeps only that many however many it is given (`maxlen=0` consumes)."""
    if real is not collections.deque:
        return False
    maxlen = args[1] if len(args) > 1 else kwargs.get("maxlen")
    return type(maxlen) is int and 0 <= maxlen < _SMALL_MAXLEN


_SMALL_MAXLEN: Final = 1 << 16


def check_size(source: object, guards: SizeGuards | None, *, counts: bool = False, bound: bool = True) -> object:
    """Refuse building a collection from a range (or, for `bytes(n)`, a count) over the run's size limit.

    Returns the source to build from: a count as a plain int, read once; any other iterable but a builtin
    collection (whose size is already known) read through `_bounded`, so one that would give more items than
    the limit is refused at the first item past it (unless not `bound`: what keeps only a few). Without the
    run's guards (code the run left behind, running after it), a size that needs checking is refused.
    """
    what = "a collection of length"
    if type(source) is range:
        size = len(source)
    elif counts and isinstance(source, int | SupportsIndex) and not isinstance(source, str | bytes | bytearray):
        source = size = operator.index(source)  # once: the code's `__index__` may answer differently each time
        what = "bytes of length"
    elif isinstance(source, _KNOWN_SIZES) or not bound or _read_otherwise(type(source)):
        return source
    elif guards is None:
        return source  # lazy: it takes a tick per item, which stops code left behind by its run
    else:
        return _bounded(source, guards)
    if guards is None:
        forbid("this collection is built outside the run that made it; build it while the run is going")
    guards.check_length(size, what)
    return source


_KNOWN_SIZES: tuple[type, ...] = (
    *(str, bytes, bytearray, list, tuple, dict, set, frozenset, collections.deque),
    *(type({}.keys()), type({}.values()), type({}.items())),
)
"""What a collection is built from without growing past what already exists (a dict's views too)."""


def _read_otherwise(kind: type) -> bool:
    """Whether a constructor reads `kind` by more than iterating it.

    A mapping's `keys()` (`Counter(m)`, `OrderedDict(m)`), `bytes(x)`'s `__bytes__`: its own code, ticking as
    it runs, gives what it gives.
    """
    return hasattr(kind, "keys") or hasattr(kind, "__bytes__")


def _bounded(source: object, guards: SizeGuards) -> Iterator[Any]:
    """`source`'s items, refused one past the size limit (`list(itertools.count())` stops there, not at the budget)."""
    items = iter(source)  # type: ignore[call-overload]
    return itertools.chain(itertools.islice(items, guards.max_size), _past_the_limit(items, guards))


def _past_the_limit(items: Iterator[Any], guards: SizeGuards) -> Iterator[Any]:
    """No items; refuses when `items` has one more (pulled only once the limit's worth is taken)."""
    if next(items, _END) is not _END:
        guards.check_length(guards.max_size + 1, "a collection of length")
    yield from ()


_END: Final = object()


def _sized(real: type) -> type:
    return stand_in(_SizedMeta, real)


SIZED: dict[type, type] = {real: _sized(real) for real in (list, tuple, set, frozenset, bytes, bytearray)}
"""Real builtin type -> the size-checked stand-in the code sees under its name."""
SIZED_COLLECTIONS: dict[type, type] = {
    real: _sized(real)
    for real in (collections.deque, collections.Counter, collections.OrderedDict, collections.UserList)
}
"""The same for the `collections` classes built in C from an iterable (`deque(range(n))`)."""


SHOWN_TYPES: dict[type, type] = {}
"""Builtin iterator types (and the ticking ones named after them) -> the class `type(x)` answers for them
(`sandbox._runtime.lazytypes` fills it: the run's `map` is a class of its own)."""


def sorted_for(guards: SizeGuards) -> Callable[..., list[Any]]:
    """The run's `sorted`, size-checked like the collection constructors."""

    def sorted_(iterable: Any, /, *, key: Any = None, reverse: bool = False) -> list[Any]:
        items: Any = check_size(iterable, guards)
        return sorted(items, key=key, reverse=reverse)

    sorted_.__name__ = sorted_.__qualname__ = "sorted"
    return sorted_


def real_bases(bases: tuple[Any, ...]) -> tuple[type, ...]:
    """Classes with the stand-ins replaced by the real types (`case list():`, `list.__doc__`)."""
    return tuple(_REAL_TYPES[base] if isinstance(base, StandIn) else base for base in bases)


def class_bases(bases: tuple[Any, ...]) -> tuple[type, ...]:
    """The bases a class statement subclasses (`class Stack(list)`): the real types, or their checked bases."""
    return tuple((_SUBCLASSED.get(base) or _REAL_TYPES[base]) if isinstance(base, StandIn) else base for base in bases)


def type_of(obj: object) -> type:
    """`type(obj)`, as the code knows the types: `SafeType` for a metaclass, the stand-in for a collection.

    So the real `type` never reaches the code, and `type(x) is list` holds.
    """
    kind = type(obj)
    if issubclass(kind, type):
        return SafeType
    return SIZED.get(kind) or SIZED_COLLECTIONS.get(kind) or SHOWN_TYPES.get(kind, kind)


def make_class(name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> type:
    """The `__metaclass__` hook of every class statement: the class, with the metaclass its bases call for."""
    bases = class_bases(bases)
    meta: type = type
    for base in bases:
        candidate = type(base)
        if issubclass(candidate, meta):
            meta = candidate
    check_class(bases, namespace)
    guarded_getattr_hook(namespace)
    qualname = namespace.get("__qualname__")
    if isinstance(qualname, str) and qualname.startswith(_MAIN_LOCALS):  # as if defined at module level
        namespace["__qualname__"] = qualname[len(_MAIN_LOCALS) :]
    prepared = meta.__prepare__(name, bases, **kwargs)  # Enum needs its own namespace type, filled in order
    for key, value in namespace.items():
        prepared[key] = value
    cls: type = meta(name, bases, prepared, **kwargs)
    type.__setattr__(cls, SANDBOX_CLASS_MARK, True)
    return cls
