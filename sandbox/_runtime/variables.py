"""Variables that outlive a run: JSON values handed in as top-level names, and the JSON values a run leaves.

A run asked to keep variables starts with the given names bound at top level (as if an earlier part of the same
script had assigned them) and ends by reading the top-level names it left. Only plain JSON goes in or out: each
value a run leaves is converted by the same rules as a returned value, and one that does not convert (a function,
a module, an object) or does not fit the size budget is dropped with a short reason, so nothing the model's code
defined ever reaches the host. The conversion walks only exact built-in containers, calling no method of theirs.
"""

from __future__ import annotations

import time
import types
from typing import TYPE_CHECKING, Any

from sandbox._compiler.compile import KEEP, LOCALS, VARIABLES
from sandbox._runtime.stdlib.modules import Module
from sandbox._shared.budgets import keep_values

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sandbox.jsonvalue import JsonValue


class Keeper:
    """One run's variables: what it starts with, and the top-level names its body left when it ended."""

    def __init__(self, initial: Mapping[str, JsonValue]) -> None:
        self.initial = dict(initial)
        self.left: dict[str, Any] | None = None

    def globals(self) -> dict[str, object]:
        """The hidden globals the compiled wrapper uses."""
        return {VARIABLES: self.initial, KEEP: self.keep, LOCALS: locals}

    def keep(self, names: dict[str, Any]) -> None:
        """Called by the wrapper with `locals()` of the run's body."""
        self.left = dict(names)

    def collect(
        self, *, budget: int, skip: Iterable[str], deadline: float
    ) -> tuple[dict[str, JsonValue] | None, dict[str, str]]:
        """The JSON values the run left, by name, and why each other name was dropped.

        The budget is spent in name order, so the same run keeps the same variables. None when the body never
        reached its end (the worker was stopped in a C-level operation, say), or reached it `SAVE_GRACE` seconds
        past `deadline`, the run's (it is a timeout): the variables it started with stay. The conversion gets
        until then too, and drops the names it has not reached.
        """
        if self.left is None or time.monotonic() > deadline + SAVE_GRACE:  # a timeout: keep what was there
            return None, {}
        return keep_values(self.left, budget=budget, skip=skip, not_data=_not_data, deadline=deadline + SAVE_GRACE)


SAVE_GRACE = 0.5
"""Seconds past the run's deadline the conversion of its variables may still take (it takes milliseconds)."""


def _not_data(value: object) -> str | None:
    """A short name for a value that is code rather than data, else None (by its exact type: no hook runs)."""
    kind = type(value)
    if issubclass(kind, Module):
        return "a module: import it again"
    if issubclass(kind, type):
        return "a class: define it again"
    if kind is types.FunctionType or kind is types.BuiltinFunctionType or kind is types.MethodType:
        return "a function: define it again"
    if kind is types.CoroutineType or kind is types.GeneratorType or kind is types.AsyncGeneratorType:
        return "a generator or coroutine"
    return None
