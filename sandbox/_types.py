"""The sandbox's `type`: what a class may hold, and a `type()` that cannot make classes with hidden dunders.

A class namespace with dunders of the code's choosing is an escape: `__match_args__ = ("__globals__",)` with a
permissive `__instancecheck__` lets a `match` statement read a host function's globals, and `__del__` runs
code after the run. Class statements are checked by the policy at compile time; classes made at run time
(three-argument `type()`, calling a metaclass) are checked here. The real `type` never reaches the code:
`type(x)` returns the sandbox's `type` wherever the answer would be a metaclass.
"""

from __future__ import annotations

import contextvars
from typing import Any

from sandbox._guards import SANDBOX_CLASS_MARK, Guards, forbid
from sandbox._policy import ALLOWED_DUNDER_METHODS

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


CURRENT_GUARDS: contextvars.ContextVar[Guards] = contextvars.ContextVar("sandbox_guards")
"""The guards of the run whose code is executing (each run's task has its own context)."""


def check_class_namespace(namespace: Any) -> None:
    """Refuse a class namespace holding a dunder the code may not define."""
    for key in namespace:
        if isinstance(key, str) and key.startswith("__") and key not in CLASS_KEYS:
            forbid(f"a class cannot define `{key}` in the sandbox")


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
        if type(namespace) is not dict:
            raise TypeError("type() argument 3 must be a dict")
        check_class_namespace(namespace)
        cls = super().__new__(mcs, name, real_bases(bases), dict(namespace), **kwargs)
        type.__setattr__(cls, SANDBOX_CLASS_MARK, True)
        return cls


SafeType.__name__ = SafeType.__qualname__ = "type"  # `print(type)` shows `<class 'sandbox.type'>`
SafeType.__module__ = "sandbox"


class _SizedMeta(type):
    """A builtin collection type whose constructor is size-checked, otherwise indistinguishable from it."""

    real: type

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.real)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, cls.real)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if args:
            check_size(args[0], counts=cls.real in (bytes, bytearray))
        return cls.real(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real, name)

    def __repr__(cls) -> str:
        return repr(cls.real)


def check_size(source: object, *, counts: bool = False) -> None:
    """Refuse building a collection from a range (or, for `bytes(n)`, a count) over the run's size limit."""
    guards = CURRENT_GUARDS.get(None)
    if guards is None:
        return
    if type(source) is range:
        guards.check_length(len(source), "a collection of length")
    elif counts and type(source) is int:
        guards.check_length(source, "bytes of length")


def _sized(real: type) -> type:
    proxy = _SizedMeta(real.__name__, (), {"real": real})
    proxy.__module__ = "builtins"
    return proxy


SIZED: dict[type, type] = {real: _sized(real) for real in (list, tuple, set, frozenset, bytes, bytearray)}
"""Real builtin type -> the size-checked stand-in the code sees under its name."""


def sorted_(iterable: Any, /, *, key: Any = None, reverse: bool = False) -> list[Any]:
    """`sorted`, size-checked like the collection constructors."""
    check_size(iterable)
    return sorted(iterable, key=key, reverse=reverse)


def real_bases(bases: tuple[Any, ...]) -> tuple[type, ...]:
    """Class bases with the size-checked stand-ins replaced by the real types (`class Stack(list)`)."""
    return tuple(base.real if isinstance(base, _SizedMeta) else base for base in bases)


def type_of(obj: object) -> type:
    """`type(obj)`, as the code knows the types: `SafeType` for a metaclass, the stand-in for a collection.

    So the real `type` never reaches the code, and `type(x) is list` holds.
    """
    kind = type(obj)
    if issubclass(kind, type):
        return SafeType
    return SIZED.get(kind, kind)
