"""What a `match` statement's patterns look up, through the guards: dotted names, class checks, attributes.

CPython evaluates a pattern's dotted names (`case Color.RED`, `case mod.Point(...)`) and reads a class
pattern's attributes (`case Point(x, y=0)`: the names in `Point.__match_args__` and the keywords) in C, past
`_getattr_`. The policy compiles each such pattern to look through a `Patterns` holder: its dotted names are
evaluated lazily with the guarded getattr, and its class is a stand-in whose `isinstance` check first reads,
through the guarded getattr, every attribute the pattern will read, refusing the match if one is hidden or
differs from what the guard hands out (a str's guarded `format`, a copy of a shared table).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, cast

from sandbox._runtime.classes import real_bases
from sandbox._runtime.signals import forbid
from sandbox._runtime.sizes.text import plain

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._runtime.guards import Rules

_MATCH_SELF = 1 << 22  # CPython's _Py_TPFLAGS_MATCH_SELF: `case int(x)` binds the subject itself
_SELF_MATCHING = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
_VALUES = (int, float, complex, str, bytes, bool, type(None))
_METHODS = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)


class Patterns:
    """The lazily evaluated dotted names of one `match` statement, read by its patterns as `holder.pN`."""

    __slots__ = ("_thunks",)

    def __init__(self, *thunks: Callable[[], Any]) -> None:
        self._thunks = thunks

    def __getattr__(self, name: str) -> Any:
        return self._thunks[int(name[1:])]()


class _PatternMeta(type):
    """The stand-in class of a class pattern: its `isinstance` check vets the attributes the pattern reads."""

    _real: type
    _names: tuple[str, ...]
    _guards: Rules

    def __instancecheck__(cls, subject: Any) -> bool:
        if not isinstance(subject, cls._real):
            return False
        for name in cls._names:
            try:
                guarded = cls._guards.getattr(subject, name)
            except AttributeError as exc:
                if type(exc) is not AttributeError:
                    raise  # the guard's refusal, said to the code
                return False  # missing: the pattern does not match, as in CPython
            if not _same(getattr(subject, name), guarded):
                forbid(
                    f"`{name}` of a {type(subject).__name__!r} cannot be read by a class pattern in the sandbox; "
                    f"match the class alone and read the attribute in the case: `case {cls.__name__}() as x:` "
                    f"then `x.{name}`"
                )
        return True


def _same(raw: object, guarded: object) -> bool:
    """Whether the attribute the pattern reads in C is what the guarded getattr hands the code."""
    if raw is guarded:
        return True
    if type(raw) is not type(guarded):
        return False
    if isinstance(raw, _METHODS):  # bound afresh on each read
        return getattr(raw, "__self__", None) is getattr(guarded, "__self__", None) and raw == guarded
    return type(raw) in _VALUES and raw == guarded


class PatternClasses:
    """The run's `_match_class_`: the stand-in for a class pattern's class, one per class and pattern shape."""

    def __init__(self, guards: Rules) -> None:
        self.guards = guards
        self.made: dict[tuple[int, int, tuple[str, ...]], tuple[type, type]] = {}

    def __call__(self, cls: object, positional: int, keywords: tuple[str, ...]) -> type:
        """The stand-in class a class pattern of this shape matches against, made once per class and shape."""
        if not isinstance(cls, type):
            raise TypeError("called match pattern must be a type")
        real = real_bases((cls,))[0]  # the size-checked `list` stand-in matches as `list`
        key = (id(real), positional, keywords)
        made = self.made.get(key)
        if made is None or made[0] is not real:
            made = self.made[key] = (real, self._make(real, positional, keywords))
        return made[1]

    def _make(self, real: type, positional: int, keywords: tuple[str, ...]) -> type:
        namespace: dict[str, Any] = {"__module__": real.__module__, "__qualname__": real.__qualname__}
        match_args = _match_args(real)
        base: type = object
        if match_args is not None:
            namespace["__match_args__"] = match_args
        elif real.__flags__ & _MATCH_SELF:  # without `__match_args__` (CPython asks for that first)
            base = next(kind for kind in _SELF_MATCHING if issubclass(real, kind))
            base = int if base is bool else base  # bool cannot be subclassed; the check is the real's anyway
            positional = 0  # one positional sub-pattern binds the subject, reading nothing
        stand_in: Any = _PatternMeta(real.__name__, (base,), namespace)
        stand_in._real = real
        stand_in._names = (match_args or ())[:positional] + keywords
        stand_in._guards = self.guards
        return cast("type", stand_in)


def _match_args(real: type) -> tuple[str, ...] | None:
    """`real.__match_args__` as plain strings (a str subclass could answer for another name), or None."""
    names = getattr(real, "__match_args__", None)
    if names is None:
        return None
    if type(names) is not tuple:
        raise TypeError(f"{real.__name__}.__match_args__ must be a tuple (got {type(names).__name__})")
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"{real.__name__}.__match_args__ elements must be strings")
    return tuple(str(plain(name)) for name in names)


def match_names(guards: Rules) -> dict[str, object]:
    """The names the policy's compiled `match` statements use."""
    return {"_match_": Patterns, "_match_class_": PatternClasses(guards)}
