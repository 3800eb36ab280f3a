"""`RunResult` and `RunError`: what one run of model code produced.

A run never raises for anything the code did; every failure is a `RunResult` with `ok=False` and an `error`
whose `kind` is one of a small closed set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from sandbox.jsonvalue import JsonValue

ErrorKind = Literal[
    "syntax", "forbidden", "runtime", "timeout", "memory", "output_limit", "call_limit", "result_limit", "crashed"
]
"""Why a run failed: the code did not parse (`syntax`), used something the policy forbids (`forbidden`), raised
(`runtime`), ran out of wall clock or operation budget (`timeout`), of memory (`memory`), printed a flood past
`Limits.flood` (`output_limit`; printing past `Limits.output` only cuts the output), made too many host calls
(`call_limit`), returned too large a value (`result_limit`), or the run's process died (`crashed`)."""

ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))


@dataclass(frozen=True, kw_only=True)
class RunError:
    """Why a run failed, in words meant for the model."""

    kind: ErrorKind
    """The class of failure."""
    message: str
    """A short message, naming the line and saying what to do."""
    line: int | None = None
    """The line in the model's code where it happened, if known."""
    type_name: str | None = None
    """For `runtime` errors, the exception's class name (`KeyError`, `ToolError`)."""
    traceback: str = ""
    """The model's own frames, most recent last; empty when there is nothing useful to show."""

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, JsonValue]:
        """This error as plain data."""
        return {
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "type_name": self.type_name,
            "traceback": self.traceback,
        }

    @classmethod
    def from_json(cls, data: dict[str, JsonValue]) -> RunError:
        """An error from `to_json` output."""
        kind = data["kind"]
        assert isinstance(kind, str)
        assert kind in ERROR_KINDS
        line = data.get("line")
        type_name = data.get("type_name")
        return cls(
            kind=kind,  # type: ignore[arg-type]  # checked against ERROR_KINDS above
            message=_text(data["message"]),
            line=line if type(line) is int and 0 <= line <= _MAX_COUNT else None,
            type_name=type_name if isinstance(type_name, str) else None,
            traceback=_text(data.get("traceback")),
        )


@dataclass(frozen=True, kw_only=True, init=False)
class RunResult:
    """The outcome of `Sandbox.run`."""

    value: JsonValue = None
    """The value of a top-level `return`, or of a final bare expression; `None` otherwise."""
    stdout: str = ""
    """Printed output; past `Limits.output` characters its head and tail, with a marker saying how much was cut."""
    error: RunError | None = None
    """`None` when the run succeeded."""
    calls: int = 0
    """Host-function calls made."""
    duration: float = 0.0
    """Wall-clock seconds the run took."""
    names: tuple[str, ...] = field(default=())
    """Host-function names the code referred to, in first-use order (for diagnostics)."""
    assigned: tuple[str, ...] = field(default=())
    """The names the code binds at top level (from its source, whether or not the run reached them), sorted."""
    variables: dict[str, JsonValue] | None = None
    """For a run given `variables=`: the top-level variables it left that convert to JSON and fit
    `Limits.variables`, by name, to hand to the next run. None for other runs, and when the run's
    end was never reached (its process was stopped)."""
    dropped_variables: dict[str, str] = field(default_factory=dict)
    """For a run given `variables=`: the top-level names it left that were not kept, each with the reason."""

    def __init__(
        self,
        *,
        value: JsonValue = None,
        stdout: str = "",
        error: RunError | None = None,
        calls: int = 0,
        duration: float = 0.0,
        names: tuple[str, ...] = (),
        assigned: tuple[str, ...] = (),
        variables: dict[str, JsonValue] | None = None,
        dropped_variables: dict[str, str] | None = None,
    ) -> None:
        # the fields in one store: a frozen dataclass's own `__init__` sets each through `object.__setattr__`
        vars(self).update(
            value=value,
            stdout=stdout,
            error=error,
            calls=calls,
            duration=duration,
            names=names,
            assigned=assigned,
            variables=variables,
            dropped_variables={} if dropped_variables is None else dropped_variables,
        )

    @property
    def ok(self) -> bool:
        """Whether the run finished without error."""
        return self.error is None

    def to_json(self) -> dict[str, JsonValue]:
        """This result as plain data."""
        return {
            "value": self.value,
            "stdout": self.stdout,
            "error": None if self.error is None else self.error.to_json(),
            "calls": self.calls,
            "duration": self.duration,
            "names": list(self.names),
            "assigned": list(self.assigned),
            "variables": self.variables,
            "dropped_variables": dict(self.dropped_variables),
        }

    @classmethod
    def from_json(cls, data: dict[str, JsonValue]) -> RunResult:
        """A result from `to_json` output."""
        error = data.get("error")
        calls = data.get("calls", 0)
        duration = data.get("duration", 0.0)
        names = data.get("names") or []
        assigned = data.get("assigned") or []
        variables = data.get("variables")
        dropped = data.get("dropped_variables") or {}
        return cls(
            value=data.get("value"),
            stdout=_text(data.get("stdout")),
            error=RunError.from_json(error) if isinstance(error, dict) else None,
            calls=calls if type(calls) is int and 0 <= calls <= _MAX_COUNT else 0,
            duration=_seconds(duration),
            names=tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else (),
            assigned=tuple(n for n in assigned if isinstance(n, str)) if isinstance(assigned, list) else (),
            variables=variables if isinstance(variables, dict) else None,
            dropped_variables={k: _text(v) for k, v in dropped.items()} if isinstance(dropped, dict) else {},
        )


_MAX_COUNT = 2**63
"""The largest count (calls, a line number) read back; anything else is not a count any run made."""


def _text(value: object) -> str:
    """A string field as sent; anything else is empty (never `str()` of data, which may be deep or huge)."""
    return value if isinstance(value, str) else ""


def _seconds(value: object) -> float:
    """A duration as sent: a finite, non-negative number, else 0.0 (`float(10**400)` would raise)."""
    if type(value) is int and 0 <= value <= _MAX_COUNT:
        return float(value)
    return value if type(value) is float and math.isfinite(value) and value >= 0 else 0.0
