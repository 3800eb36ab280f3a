"""The `decimal` module of one run: its own arithmetic context, which the code can change, and nobody else's.

The real `decimal.getcontext()` answers with the context of whoever runs the code, and the code's work can
run outside its run: a generator's `finally` when the garbage collector closes it after the run, in the
host's context. So `getcontext()` answers with the current context only when it is one of the run's, and
with the run's own otherwise; `localcontext()` switches contexts only inside the run's own, and restores
only what it switched. `setcontext` and the shared default contexts are not offered.
"""

from __future__ import annotations

import decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import TracebackType

_SETTINGS = frozenset({"prec", "rounding", "Emin", "Emax", "capitals", "clamp", "flags", "traps"})
_SHARED = frozenset({"setcontext", "getcontext", "localcontext", "DefaultContext", "BasicContext", "ExtendedContext"})
_MEMBERS = {name: value for name, value in vars(decimal).items() if not name.startswith("_") and name not in _SHARED}


class _RunContexts:
    """The decimal contexts of one run: its own, and those its `localcontext()` blocks made."""

    def __init__(self, context: decimal.Context) -> None:
        self.own = context
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
            setattr(copied, name, value)
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


def decimal_members(context: decimal.Context) -> dict[str, Any]:
    """The `decimal` facade of a run whose own context is `context`."""
    contexts = _RunContexts(context)
    return {**_MEMBERS, "getcontext": contexts.getcontext, "localcontext": contexts.localcontext}
