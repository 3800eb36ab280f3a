"""The approval flow's record: a run paused at a call that needs approval, as signed JSON.

A run that reaches such a call does not make it: the call is held, calls already in flight finish, and the run
ends with a `Record` of every call in the order the code issued it (its result or error, or `held` for the
calls that waited), the code, and the seed and clock that make the run repeatable. The record is JSON, signed
with the host's key, and travels in the conversation state (`DiscoveryState.approval`), so no worker waits
while a person decides; `codemode.approvals.PendingApproval` is the host's view of it. Replaying the
record when the run resumes is `codemode.approvals._ledger`'s job.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from codemode.approvals import PendingApproval
from codemode.errors import ApprovalError
from codemode.events import ToolCall

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemode.tools import Tool
    from sandbox import JsonObject, JsonValue

VERSION = 1
PAUSED_NAME = "ApprovalPending"
"""The exception class name held calls raise in the code, once the calls in flight are done."""


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One call of a run, at its place in the order the code issued calls."""

    tool: str
    """The tool's original name."""
    arguments: JsonObject
    """The arguments as the code passed them."""
    kind: Literal["ok", "error", "held"]
    """Returned `result`, failed with `error`, or waited (not made) because the run was pausing."""
    result: JsonValue = None
    """What the code got."""
    error: str | None = None
    """The message the code got."""

    def to_json(self) -> JsonObject:
        data: JsonObject = {"tool": self.tool, "arguments": self.arguments, "kind": self.kind}
        if self.kind == "ok":
            data["result"] = self.result
        elif self.kind == "error":
            data["error"] = self.error
        return data

    def tool_call(self, *, replayed: bool = False) -> ToolCall:
        """This call as the host reports it (a recorded call took no time of this run)."""
        return ToolCall(
            name=self.tool,
            arguments=self.arguments,
            duration=0.0,
            ok=self.kind == "ok",
            error=self.error,
            result=self.result,
            replayed=replayed,
        )

    @classmethod
    def from_json(cls, data: JsonValue) -> Entry:
        if not isinstance(data, dict) or data.get("kind") not in ("ok", "error", "held"):
            raise ApprovalError("the approval record has a malformed call")
        tool, arguments, error = data.get("tool"), data.get("arguments"), data.get("error")
        if not isinstance(tool, str) or not isinstance(arguments, dict):
            raise ApprovalError("the approval record has a malformed call")
        kind: Literal["ok", "error", "held"] = data["kind"]  # type: ignore[assignment]  # checked just above
        return cls(
            tool=tool,
            arguments=arguments,
            kind=kind,
            result=data.get("result"),
            error=str(error) if error is not None else None,
        )


@dataclass(frozen=True, kw_only=True)
class Record:
    """A run paused at a call that needs approval: enough to run it again and replay what it did."""

    code: str
    """The model's code."""
    seed: int
    """The run's seed (`random`, `uuid4`)."""
    clock: float
    """The run's wall clock."""
    calls: tuple[Entry, ...]
    """Every call the run issued, in order."""
    pending: int
    """The index in `calls` of the call that needs approval."""
    reason: str | None = None
    """Why it needs approval."""
    variables: JsonObject | None = None
    """The variables the run started with (`CodeMode(persist_variables=True)`), or None."""
    caller: str | None = None
    """The principal of who started the run (`Caller.principal`): only they may resume it. None: no identity."""

    def to_json(self) -> JsonObject:
        bound: JsonObject = {} if self.caller is None else {"caller": self.caller}
        return {
            **bound,
            "variables": self.variables,
            "v": VERSION,
            "code": self.code,
            "seed": self.seed,
            "clock": self.clock,
            "calls": [entry.to_json() for entry in self.calls],
            "pending": self.pending,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: JsonValue) -> Record:
        if not isinstance(data, dict) or data.get("v") != VERSION:
            raise ApprovalError("the approval record is not one this version of codemode wrote")
        code, seed, clock, calls, pending = (data.get(k) for k in ("code", "seed", "clock", "calls", "pending"))
        if not (isinstance(code, str) and isinstance(seed, int) and isinstance(clock, (int, float))):
            raise ApprovalError("the approval record is malformed")
        if not isinstance(calls, list) or not isinstance(pending, int) or not 0 <= pending < len(calls):
            raise ApprovalError("the approval record is malformed")
        reason, variables, caller = data.get("reason"), data.get("variables"), data.get("caller")
        if (variables is not None and not isinstance(variables, dict)) or not isinstance(caller, (str, type(None))):
            raise ApprovalError("the approval record is malformed")
        entries = tuple(Entry.from_json(entry) for entry in calls)
        return cls(
            code=code,
            seed=seed,
            clock=float(clock),
            calls=entries,
            pending=pending,
            reason=_text(reason),
            variables=variables,
            caller=caller,
        )


def sign(record: Record, secret: bytes) -> JsonObject:
    """The record as signed JSON data, for `DiscoveryState.approval`."""
    body = record.to_json()
    return {"record": body, "signature": _mac(body, secret)}


def verify(data: JsonValue, secret: bytes) -> Record:
    """The record inside signed data; raises `ApprovalError` if it was changed or signed with another key."""
    if not isinstance(data, dict) or not isinstance(data.get("signature"), str):
        raise ApprovalError("the conversation state's approval record is malformed; run the code again")
    body = data.get("record")
    if not hmac.compare_digest(_mac(body, secret), str(data["signature"])):
        raise ApprovalError(
            "the approval record's signature does not match: it was changed, or signed with another key "
            "(give every process the same `Policy(secret=...)`); nothing was run"
        )
    return Record.from_json(body)


def pending_from(approval_id: str, record: Record, tools: Callable[[str], Tool | None]) -> PendingApproval:
    """The host's view of a verified record, whose pending call is named `approval_id`."""
    entry = record.calls[record.pending]
    tool = tools(entry.tool)
    made = tuple(e.tool_call() for e in record.calls[: record.pending] if e.kind != "held")
    return PendingApproval(
        id=approval_id,
        tool=entry.tool,
        alias=tool.alias if tool is not None else entry.tool,
        arguments=entry.arguments,
        reason=record.reason,
        calls=made,
    )


def canonical(value: JsonValue) -> str:
    """`value` as JSON that is the same text for the same data (keys sorted), for signing and comparing."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _mac(body: JsonValue, secret: bytes) -> str:
    return hmac.new(secret, canonical(body).encode("utf-8"), hashlib.sha256).hexdigest()


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None
