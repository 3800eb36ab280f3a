"""Approvals: a run paused at a call a person must decide on, and the decision that resumes it.

`PendingApproval` is what the host shows a person and `Decision` their answer (both also importable from
`codemode`). Behind them: `_record` (the paused run as signed JSON, carried in `DiscoveryState.approval`) and
`_ledger` (one run's calls in the order the code issues them: checked by the policy, held, or replayed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codemode.events import ToolCall
    from sandbox import JsonObject

__all__ = ["Decision", "PendingApproval", "call_text"]


@dataclass(frozen=True, kw_only=True)
class PendingApproval:
    """A call waiting for a person's decision, as data for the host."""

    id: str
    """Identifies this pending call (a decision names it, so it cannot apply to another)."""
    tool: str
    """The tool's original name."""
    alias: str
    """The name the model wrote after `tools.`."""
    arguments: JsonObject
    """The arguments the code passed."""
    reason: str | None
    """Why approval is needed, if a rule or hook said."""
    calls: tuple[ToolCall, ...]
    """Every call already made, in order, with its result (`ToolCall.result`) or error."""

    def describe(self) -> str:
        """One line for a person: the call, with its arguments."""
        return call_text(self.tool, self.arguments)


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A person's answer to a pending call."""

    approved: bool
    """Make the call (True) or deny it (False)."""
    reason: str | None = None
    """Why, when denied: the code's `ToolError` says it."""
    decided_by: str | None = None
    """Who decided (the subject of the caller who resumed the run), when a server knows; for the log and traces."""


def call_text(tool: str, arguments: JsonObject) -> str:
    """A call as a person reads it: `name(key=value, ...)`, each value as JSON."""
    shown = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())
    return f"{tool}({shown})"
