"""The `decimal` module of one run: its own arithmetic context, which the code can change, and nobody else's.

The real `decimal.getcontext()` answers with the context of whoever runs the code, and the code's work can
run outside its run: a generator's `finally` when the garbage collector closes it after the run, in the
host's context. So `getcontext()` answers with the current context only when it is one of the run's, and
with the run's own otherwise; `localcontext()` switches contexts only inside the run's own, and restores
only what it switched. `setcontext` and the shared default contexts are not offered.

A context's `prec`, `Emax` and `Emin` are capped at the run's `max_size` digits wherever the code sets them
(`decimal.Context(...)`, `localcontext(...)`, `ctx.prec = n`): past them one division writes millions of digits.
A context's defaults are lowered to that cap too. A Decimal the code writes obeys no context
(`Decimal('1e3000000')`), so `decimal.Decimal` (and `type(d)`, and the base of the code's subclasses) refuses
one whose exponent is past the cap: `int()` of it, or `format(d, 'f')`, would write that many digits.
"""

from __future__ import annotations

import decimal
import operator
import sys
import weakref
from typing import TYPE_CHECKING, Any, Final, Self

from sandbox._runtime.classes import SHOWN_TYPES, SIZE_GUARDS, StandIn, stand_in
from sandbox._runtime.signals import forbid

if TYPE_CHECKING:
    from types import TracebackType

    from sandbox._runtime.sizes.operations import SizeGuards

_SETTINGS = frozenset({"prec", "rounding", "Emin", "Emax", "capitals", "clamp", "flags", "traps"})
_SHARED = frozenset({"setcontext", "getcontext", "localcontext", "DefaultContext", "BasicContext", "ExtendedContext"})
_MEMBERS = {name: value for name, value in vars(decimal).items() if not name.startswith("_") and name not in _SHARED}
_SIZES = {
    "prec": "a decimal with a precision",
    "Emax": "a decimal with an exponent",
    "Emin": "a decimal with an exponent",
}
_POSITIONAL = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp", "flags", "traps")
_QUIET: Final = 28
"""An exponent a Decimal may have under any cap, unchecked: the default context's precision, in digits."""
_OUTSIDE_RUNS: Final = 999_999
"""The exponent a Decimal made where no run's guards are found may have (code running after its run): the
default context's."""


def checked_setting(guards: SizeGuards, name: str, value: Any) -> Any:
    """The value to set a context's `name` to, refused if it lets one result grow past the size limit."""
    if name not in _SIZES or value is None:
        return value
    number = operator.index(value)  # once, as a plain int: the code's `__index__` may answer differently
    guards.check_length(-number if name == "Emin" else number, _SIZES[name])
    return number


class ContextWrites:
    """What `ctx.x = v` writes through for a decimal context: its settings, the sizes checked first."""

    __slots__ = ("_context", "_guards")
    _context: decimal.Context
    _guards: SizeGuards

    def __init__(self, context: decimal.Context, guards: SizeGuards) -> None:
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_guards", guards)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._context, name, checked_setting(self._guards, str.__str__(name), value))

    def __delattr__(self, name: str) -> None:
        delattr(self._context, name)


_CONTEXT_GUARDS: weakref.WeakKeyDictionary[type, SizeGuards] = weakref.WeakKeyDictionary()
"""Each run's `decimal.Context` -> the run's guards, kept outside the class so the code cannot read them."""


class _ContextType(type):
    """`decimal.Context` as the code sees it: the real class, its size settings checked when called."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _ContextType:
        if bases:  # a subclass's constructor would set its sizes in C, unchecked
            forbid("`decimal.Context` cannot be subclassed in the sandbox; make one with `decimal.Context(prec=...)`")
        return super().__new__(mcs, name, bases, namespace)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, decimal.Context)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, decimal.Context)

    def __call__(cls, *args: Any, **settings: Any) -> decimal.Context:
        named = dict(zip(_POSITIONAL, args, strict=False))
        for key, value in settings.items():
            named[str.__str__(key)] = value  # a plain name, even of a subclass
        if len(args) > len(_POSITIONAL) or named.keys() - _SETTINGS:
            return decimal.Context(*args, **settings)  # the real one raises the TypeError
        guards = _CONTEXT_GUARDS[cls]
        made = decimal.Context(**{name: checked_setting(guards, name, value) for name, value in named.items()})
        return capped(made, guards.max_size)

    def __getattr__(cls, name: str) -> Any:
        return getattr(decimal.Context, name)

    def __repr__(cls) -> str:
        return repr(decimal.Context)


def capped(context: decimal.Context, max_size: int) -> decimal.Context:
    """`context` with a default past the cap lowered to it (the settings the code gave are checked already)."""
    context.prec = min(context.prec, max_size)
    context.Emax = min(context.Emax, max_size)
    context.Emin = max(context.Emin, -max_size)
    return context


def _checked(made: decimal.Decimal) -> decimal.Decimal:
    """`made`, refused if its exponent is past the cap of the run whose code made it."""
    exponent = abs(decimal.Decimal.adjusted(made))
    guards = _run_guards(sys._getframe(2))
    if guards is not None:
        guards.check_length(exponent, "a decimal with an exponent")
    elif exponent > _OUTSIDE_RUNS:
        forbid("this decimal is made outside the run that made its code; make it while the run is going")
    return made


def _run_guards(frame: Any) -> SizeGuards | None:
    """The guards of the run whose code is calling: the nearest frame running with the run's builtins.

    The code's own frame, or further out when a standard function calls (`sorted(xs, key=Decimal)`).
    """
    while frame is not None:
        guards: SizeGuards | None = frame.f_builtins.get(SIZE_GUARDS)
        if guards is not None:
            return guards
        frame = frame.f_back
    return None


class _DecimalMeta(StandIn):
    """`decimal.Decimal` as the code sees it: the real class, a value past the size cap refused when made."""

    def __call__(cls, value: Any = "0", context: Any = None) -> decimal.Decimal:
        made = decimal.Decimal(value, context)
        if -_QUIET <= made.adjusted() <= _QUIET:  # what every run allows: no guards looked up
            return made
        return _checked(made)


class _CheckedDecimal(decimal.Decimal):
    """The base of the code's subclasses of `decimal.Decimal` (`class Money(Decimal)`), checked the same."""

    __slots__ = ()

    def __new__(cls, value: Any = "0", context: Any = None) -> Self:
        return _checked(super().__new__(cls, value, context))  # type: ignore[return-value]


_CheckedDecimal.__name__ = _CheckedDecimal.__qualname__ = "Decimal"
_CheckedDecimal.__module__ = "decimal"
DECIMAL: Final = stand_in(_DecimalMeta, decimal.Decimal, base=_CheckedDecimal)
SHOWN_TYPES[decimal.Decimal] = DECIMAL  # `type(d)(...)` is checked too


class _RunContexts:
    """The decimal contexts of one run: its own, and those its `localcontext()` blocks made."""

    def __init__(self, context: decimal.Context, guards: SizeGuards) -> None:
        self.own = context
        self.guards = guards
        self.active: list[decimal.Context] = [context]

    def is_current(self) -> bool:
        current = decimal.getcontext()
        return any(current is context for context in self.active)

    def getcontext(self) -> decimal.Context:
        """The context of the run's decimal arithmetic."""
        return decimal.getcontext() if self.is_current() else self.own

    def localcontext(self, ctx: decimal.Context | None = None, **settings: Any) -> _LocalContext:
        """A block with a copy of `ctx` (or of the current context) as the context, changed by `settings`."""
        if ctx is not None and not isinstance(ctx, decimal.Context):
            raise TypeError(f"localcontext() takes a decimal.Context, not {type(ctx).__name__!r}")
        copied = (self.getcontext() if ctx is None else ctx).copy()
        for key, value in settings.items():
            name = str.__str__(key)  # a plain name, even of a subclass
            if name not in _SETTINGS:
                raise TypeError(f"'{name}' is an invalid keyword argument for this function")
            setattr(copied, name, checked_setting(self.guards, name, value))
        return _LocalContext(self, copied)


class _LocalContext:
    """What `decimal.localcontext()` returns: a context manager that switches only the run's own contexts."""

    __slots__ = ("_contexts", "_new", "_saved")

    def __init__(self, contexts: _RunContexts, new: decimal.Context) -> None:
        self._contexts = contexts
        self._new = new
        self._saved: decimal.Context | None = None

    def __enter__(self) -> decimal.Context:
        if not self._contexts.is_current():
            raise RuntimeError("`decimal.localcontext()` works only while the run's code is running")
        self._saved = decimal.getcontext()
        decimal.setcontext(self._new)
        self._contexts.active.append(self._new)
        return self._new

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if decimal.getcontext() is self._new and self._saved is not None:  # in the run's context, not another
            decimal.setcontext(self._saved)
        active = self._contexts.active
        for index in range(len(active) - 1, 0, -1):
            if active[index] is self._new:
                del active[index]
                break


def decimal_members(context: decimal.Context, guards: SizeGuards) -> dict[str, Any]:
    """The `decimal` facade of a run whose own context is `context`, its sizes capped by `guards`."""
    contexts = _RunContexts(capped(context, guards.max_size), guards)
    context_type = _ContextType("Context", (), {})
    _CONTEXT_GUARDS[context_type] = guards
    return {
        **_MEMBERS,
        "Decimal": DECIMAL,
        "Context": context_type,
        "getcontext": contexts.getcontext,
        "localcontext": contexts.localcontext,
    }
