"""The approval flow's record and replay: a run stops at a call that needs approval, and resumes by replaying.

A run that reaches such a call does not make it: the call is held, calls already in flight finish, and the run
ends with a `Record` of every call in the order the code issued it (its result or error, or `held` for the
calls that waited), the code, and the seed and clock that make the run repeatable. The record is JSON, signed
with the host's key, and travels in the conversation state (`DiscoveryState.approval`), so no worker waits
while a person decides. To resume, the same code runs again with the same seed and clock; each call it makes is
checked against the record in order and gets its recorded result without its handler running, the decided
call is made (or raises `ToolError` if denied), and calls past the record run live. A call that differs from
the record stops the replay: it and every later call fail, and nothing new is called.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import anyio

from codemode._runtime import ToolCall
from codemode.errors import ApprovalError, tool_error
from codemode.policy import CallInfo, CallOutcome, Deny, RequireApproval
from sandbox import FunctionError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from codemode._json import JsonObject, JsonValue
    from codemode.policy import Policy
    from codemode.tools import Tool

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

    def to_json(self) -> JsonObject:
        return {
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
        reason, variables = data.get("reason"), data.get("variables")
        if variables is not None and not isinstance(variables, dict):
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
        )


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
        args = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in self.arguments.items())
        return f"{self.tool}({args})"


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


def approval_id(data: JsonValue) -> str | None:
    """The id of the pending call in signed record data (its signature's first 16 hex digits)."""
    signature = data.get("signature") if isinstance(data, dict) else None
    return signature[:16] if isinstance(signature, str) else None


def pending_from(data: JsonObject, record: Record, tools: Callable[[str], Tool | None]) -> PendingApproval:
    """The host's view of a verified record."""
    entry = record.calls[record.pending]
    tool = tools(entry.tool)
    made = tuple(_tool_call(e) for e in record.calls[: record.pending] if e.kind != "held")
    return PendingApproval(
        id=approval_id(data) or "",
        tool=entry.tool,
        alias=tool.alias if tool is not None else entry.tool,
        arguments=entry.arguments,
        reason=record.reason,
        calls=made,
    )


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A person's answer to a pending call."""

    approved: bool
    """Make the call (True) or deny it (False)."""
    reason: str | None = None
    """Why, when denied: the code's `ToolError` says it."""


class Ledger:
    """One run's calls, in issue order: replayed from a record, checked by the policy, held while pausing."""

    def __init__(self, policy: Policy, *, replay: Record | None = None, decision: Decision | None = None) -> None:
        self.policy = policy
        self.replay = replay
        self.decision = decision
        self.entries: list[Entry | None] = []
        self.calls: list[ToolCall] = []
        """Finished calls in the order they finished, replayed ones included."""
        self.pending: tuple[int, str | None] | None = None
        """The index and reason of the call the run paused at."""
        self.diverged: str | None = None
        """What differed from the record, if the replay went off it."""
        self.reached_decision = False
        self._in_flight = 0
        self._running: dict[int, tuple[str, JsonObject, float]] = {}
        self._quiet = anyio.Event()

    async def call(
        self,
        tool: Tool,
        kwargs: JsonObject,
        *,
        prepare: Callable[[JsonObject], JsonObject],
        invoke: Callable[[JsonObject], Awaitable[JsonValue]],
    ) -> JsonValue:
        """Make (or replay, or hold) one call; `prepare` validates the arguments, `invoke` runs the handler."""
        index = len(self.entries)
        self.entries.append(None)
        if self.diverged is not None:
            raise self._off_record()
        record = self.replay
        if record is not None and index < len(record.calls):
            expected = record.calls[index]
            if expected.tool != tool.name or _canonical(expected.arguments) != _canonical(kwargs):
                self.diverged = _divergence(index, expected, tool, kwargs)
                raise self._off_record()
            if index == record.pending:
                return await self._decided(index, tool, kwargs, prepare, invoke)
            if expected.kind != "held":
                return self._replayed(index, expected)
        return await self._live(index, tool, kwargs, prepare, invoke)

    def so_far(self) -> tuple[ToolCall, ...]:
        """The finished calls in the order they ended, then those still in flight (which may have happened)."""
        now = time.monotonic()
        running = [
            ToolCall(name=name, arguments=arguments, duration=now - started, ok=False, in_flight=True)
            for name, arguments, started in self._running.values()
        ]
        return (*self.calls, *running)

    def paused(self, *, code: str, seed: int, clock: float, variables: JsonObject | None) -> Record | None:
        """The record of a run that paused with every issued call accounted for, else None."""
        if self.pending is None or self.diverged is not None or any(entry is None for entry in self.entries):
            return None
        entries = tuple(entry for entry in self.entries if entry is not None)
        index, reason = self.pending
        return Record(
            code=code, seed=seed, clock=clock, calls=entries, pending=index, reason=reason, variables=variables
        )

    def _replayed(self, index: int, entry: Entry) -> JsonValue:
        self.entries[index] = entry
        self.calls.append(
            ToolCall(
                name=entry.tool,
                arguments=entry.arguments,
                duration=0.0,
                ok=entry.kind == "ok",
                error=entry.error,
                result=entry.result,
                replayed=True,
            )
        )
        if entry.kind == "error":
            raise tool_error(entry.error or "the call failed")
        return copy.deepcopy(entry.result)

    async def _decided(
        self,
        index: int,
        tool: Tool,
        kwargs: JsonObject,
        prepare: Callable[[JsonObject], JsonObject],
        invoke: Callable[[JsonObject], Awaitable[JsonValue]],
    ) -> JsonValue:
        self.reached_decision = True
        decision = self.decision or Decision(approved=False, reason="no decision was given")
        if decision.approved:
            info = self._info(index, tool, kwargs, prepare)
            return await self._make(index, tool, kwargs, info, invoke)
        because = f": {decision.reason}" if decision.reason else ""
        self._finished(index, tool, kwargs, None, f"tools.{tool.alias}() was not approved{because}", 0.0)
        raise tool_error(f"tools.{tool.alias}() was not approved{because}")

    async def _live(
        self,
        index: int,
        tool: Tool,
        kwargs: JsonObject,
        prepare: Callable[[JsonObject], JsonObject],
        invoke: Callable[[JsonObject], Awaitable[JsonValue]],
    ) -> JsonValue:
        if self.pending is not None:
            await self._hold(index, tool, kwargs)
        info = self._info(index, tool, kwargs, prepare)
        verdict = await self.policy.check(tool, info)
        if isinstance(verdict, Deny):
            message = f"tools.{tool.alias}() was refused by the host's policy: {verdict.reason}"
            self._finished(index, tool, kwargs, None, message, 0.0)
            raise tool_error(message)
        if isinstance(verdict, RequireApproval) and self.pending is None:
            self.pending = (index, verdict.reason)
            if self._in_flight == 0:
                self._quiet.set()
        if self.pending is not None:  # this call needs approval, or another one does (set while we checked)
            await self._hold(index, tool, kwargs)
        return await self._make(index, tool, kwargs, info, invoke)

    def _info(
        self, index: int, tool: Tool, kwargs: JsonObject, prepare: Callable[[JsonObject], JsonObject]
    ) -> CallInfo:
        try:
            arguments = prepare(kwargs)
        except FunctionError as error:
            self._finished(index, tool, kwargs, None, error.message, 0.0)
            raise
        return CallInfo(tool=tool.name, alias=tool.alias, arguments=arguments)

    async def _make(
        self,
        index: int,
        tool: Tool,
        kwargs: JsonObject,
        info: CallInfo,
        invoke: Callable[[JsonObject], Awaitable[JsonValue]],
    ) -> JsonValue:
        self._in_flight += 1
        started = time.monotonic()
        self._running[index] = (tool.name, kwargs, started)
        try:
            try:
                result = await self.policy.limited(tool, lambda: invoke(info.arguments))
                outcome = CallOutcome(call=info, ok=True, result=result, duration=time.monotonic() - started)
            except FunctionError as error:
                outcome = CallOutcome(call=info, ok=False, error=error.message, duration=time.monotonic() - started)
            except TimeoutError:
                limit = tool.limits.timeout if tool.limits else None
                message = (
                    f"tools.{tool.alias}() took longer than its {limit:g} s limit and was stopped; try again later"
                )
                outcome = CallOutcome(call=info, ok=False, error=message, duration=time.monotonic() - started)
            del self._running[index]  # a cancelled call stays: it was in flight when the run stopped
            outcome = await self.policy.finish(outcome)
        finally:
            self._in_flight -= 1
            if self._in_flight == 0 and self.pending is not None:
                self._quiet.set()
        self._finished(index, tool, kwargs, outcome.result, outcome.error, outcome.duration, ok=outcome.ok)
        if not outcome.ok:
            raise tool_error(outcome.error or "the call failed")
        return outcome.result

    async def _hold(self, index: int, tool: Tool, kwargs: JsonObject) -> None:
        """Wait for the calls in flight to finish, then end this call (and the run) without making it."""
        self.entries[index] = Entry(tool=tool.name, arguments=kwargs, kind="held")
        await self._quiet.wait()
        raise FunctionError("the run paused here, waiting for a person's approval", type_name=PAUSED_NAME)

    def _finished(
        self,
        index: int,
        tool: Tool,
        kwargs: JsonObject,
        result: JsonValue,
        error: str | None,
        duration: float,
        *,
        ok: bool = False,
    ) -> None:
        kind: Literal["ok", "error"] = "ok" if ok else "error"
        self.entries[index] = Entry(tool=tool.name, arguments=kwargs, kind=kind, result=result, error=error)
        self.calls.append(
            ToolCall(name=tool.name, arguments=kwargs, duration=duration, ok=ok, error=error, result=result)
        )

    def _off_record(self) -> FunctionError:
        return FunctionError(
            f"the resumed run went off its record ({self.diverged}); nothing more is called", type_name="ReplayError"
        )


def _divergence(index: int, expected: Entry, tool: Tool, kwargs: JsonObject) -> str:
    def shown(name: str, arguments: JsonObject) -> str:
        return f"tools.{name}({', '.join(f'{k}={json.dumps(v, ensure_ascii=False)}' for k, v in arguments.items())})"

    return f"call {index + 1} was {shown(expected.tool, expected.arguments)}, now {shown(tool.name, kwargs)}"


def _canonical(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _mac(body: JsonValue, secret: bytes) -> str:
    return hmac.new(secret, _canonical(body).encode("utf-8"), hashlib.sha256).hexdigest()


def _tool_call(entry: Entry) -> ToolCall:
    return ToolCall(
        name=entry.tool,
        arguments=entry.arguments,
        duration=0.0,
        ok=entry.kind == "ok",
        error=entry.error,
        result=entry.result,
    )


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None
