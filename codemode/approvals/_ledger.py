"""One run's tool calls in the order the code issues them: checked by the policy, held, or replayed from a record.

A fresh run's calls are checked by the host's `Policy` and made; the first that needs approval is held, with every
later one, until the calls in flight finish, and the run ends with a `Record` (`_record`). A resumed run
runs the same code with the same seed and clock; each call is checked against the record in order and gets its
recorded result without its handler running, the decided call is made (or raises `ToolError` if denied), and calls
past the record run live. A call that differs from the record stops the replay: it and every later call fail, and
nothing new is called.

A live call's result reaches the code as the `JsonText` its handler's conversion made, unchecked, only when no
`after` hook saw it: a hook may replace the result or change it in place, so what a hook saw (and a replayed
result) goes to the sandbox as plain data, to be checked and copied in full there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import anyio

from codemode.approvals import Decision, call_text
from codemode.approvals._record import PAUSED_NAME, Entry, Record, canonical
from codemode.errors import tool_error
from codemode.events import ToolCall
from codemode.policy import CallInfo, CallOutcome, Deny, RequireApproval
from codemode.run._runtime import MAY_HAVE_ACTED, Converted, CutOffError
from sandbox import FunctionError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from codemode.policy import Caller, Policy
    from codemode.tools import Tool
    from sandbox import JsonObject, JsonText, JsonValue


@dataclass(frozen=True, kw_only=True)
class _Attempt:
    """One call the code asked for, at its place in the order of issue."""

    index: int
    tool: Tool
    kwargs: JsonObject
    """The arguments as the code passed them."""
    prepare: Callable[[JsonObject], Awaitable[JsonObject]]
    """Validates and converts the arguments for the handler."""
    invoke: Callable[[JsonObject], Awaitable[Converted]]
    """Runs the handler; its result converted and measured."""


class Ledger:
    """One run's calls, in issue order: replayed from a record, checked by the policy, held while pausing."""

    def __init__(
        self,
        policy: Policy,
        *,
        replay: Record | None = None,
        decision: Decision | None = None,
        caller: Caller | None = None,
    ) -> None:
        self.policy = policy
        self.caller = caller
        """Who asked for the run: hooks see it, and a paused run's record is bound to it."""
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
        prepare: Callable[[JsonObject], Awaitable[JsonObject]],
        invoke: Callable[[JsonObject], Awaitable[Converted]],
    ) -> JsonValue | JsonText:
        """Make (or replay, or hold) one call; `prepare` validates the arguments, `invoke` runs the handler."""
        attempt = _Attempt(index=len(self.entries), tool=tool, kwargs=kwargs, prepare=prepare, invoke=invoke)
        self.entries.append(None)
        if self.diverged is not None:
            raise self._off_record()
        record = self.replay
        if record is not None and attempt.index < len(record.calls):
            expected = record.calls[attempt.index]
            if expected.tool != tool.name or canonical(expected.arguments) != canonical(kwargs):
                self.diverged = _divergence(attempt, expected)
                raise self._off_record()
            if attempt.index == record.pending:
                return await self._decided(attempt)
            if expected.kind != "held":
                return self._replayed(attempt.index, expected)
        return await self._live(attempt)

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
            code=code,
            seed=seed,
            clock=clock,
            calls=entries,
            pending=index,
            reason=reason,
            variables=variables,
            caller=None if self.caller is None else self.caller.principal,
        )

    def _replayed(self, index: int, entry: Entry) -> JsonValue:
        self.entries[index] = entry
        self.calls.append(entry.tool_call(replayed=True))
        if entry.kind == "error":
            raise tool_error(entry.error or "the call failed")
        return entry.result  # the sandbox checks and copies it, so the code's copy is its own

    async def _decided(self, attempt: _Attempt) -> JsonValue | JsonText:
        self.reached_decision = True
        decision = self.decision or Decision(approved=False, reason="no decision was given")
        if decision.approved:
            return await self._make(attempt, await self._info(attempt))
        because = f": {decision.reason}" if decision.reason else ""
        message = f"tools.{attempt.tool.alias}() was not approved{because}"
        self._finished(attempt, None, message, 0.0)
        raise tool_error(message)

    async def _live(self, attempt: _Attempt) -> JsonValue | JsonText:
        if self.pending is not None:
            await self._hold(attempt)
        info = await self._info(attempt)
        verdict = await self.policy.check(attempt.tool, info)
        if isinstance(verdict, Deny):
            message = f"tools.{attempt.tool.alias}() was refused by the host's policy: {verdict.reason}"
            self._finished(attempt, None, message, 0.0)
            raise tool_error(message)
        if isinstance(verdict, RequireApproval) and self.pending is None:
            self.pending = (attempt.index, verdict.reason)
            if self._in_flight == 0:
                self._quiet.set()
        if self.pending is not None:  # this call needs approval, or another one does (set while we checked)
            await self._hold(attempt)
        return await self._make(attempt, info)

    async def _info(self, attempt: _Attempt) -> CallInfo:
        self._in_flight += 1  # a call still being validated may yet be made: a pause waits for it too
        try:
            arguments = await attempt.prepare(attempt.kwargs)
        except FunctionError as error:
            self._finished(attempt, None, error.message, 0.0)
            raise
        finally:
            self._settled()
        return CallInfo(tool=attempt.tool.name, alias=attempt.tool.alias, arguments=arguments, caller=self.caller)

    async def _make(self, attempt: _Attempt, info: CallInfo) -> JsonValue | JsonText:
        tool = attempt.tool
        self._in_flight += 1
        started = time.monotonic()
        self._running[attempt.index] = (tool.name, attempt.kwargs, started)
        try:
            converted: Converted | None = None
            error: str | None = None
            cut_off = False
            try:
                converted = await self.policy.limited(tool, lambda: attempt.invoke(info.arguments))
            except FunctionError as failure:
                error, cut_off = failure.message, isinstance(failure, CutOffError)
            except TimeoutError:  # a sync handler's thread runs on; an async one stopped at any await
                cut_off = True
                error = f"tools.{tool.alias}() did not finish within its {_limit(tool):g} s limit; {MAY_HAVE_ACTED}"
            result = None if converted is None else converted.value
            outcome = CallOutcome(
                call=info, ok=error is None, result=result, error=error, duration=time.monotonic() - started
            )
            del self._running[attempt.index]  # a cancelled call stays: it was in flight when the run stopped
            outcome = await self.policy.finish(outcome)
        finally:
            self._settled()
        self._finished(attempt, outcome.result, outcome.error, outcome.duration, ok=outcome.ok, cut_off=cut_off)
        if not outcome.ok:
            raise tool_error(outcome.error or "the call failed")
        if converted is not None and not self.policy.after:  # no hook saw the value, so its text is still its own
            return converted.text
        return outcome.result

    def _settled(self) -> None:
        """One call less in flight; the last one lets a pause go ahead."""
        self._in_flight -= 1
        if self._in_flight == 0 and self.pending is not None:
            self._quiet.set()

    async def _hold(self, attempt: _Attempt) -> None:
        """Wait for the calls in flight to finish, then end this call (and the run) without making it."""
        self.entries[attempt.index] = Entry(tool=attempt.tool.name, arguments=attempt.kwargs, kind="held")
        await self._quiet.wait()
        raise FunctionError("the run paused here, waiting for a person's approval", type_name=PAUSED_NAME)

    def _finished(
        self,
        attempt: _Attempt,
        result: JsonValue,
        error: str | None,
        duration: float,
        *,
        ok: bool = False,
        cut_off: bool = False,
    ) -> None:
        name, kwargs = attempt.tool.name, attempt.kwargs
        kind: Literal["ok", "error"] = "ok" if ok else "error"
        self.entries[attempt.index] = Entry(tool=name, arguments=kwargs, kind=kind, result=result, error=error)
        in_flight = cut_off and not ok  # an `after` hook that gave a result made it an answer
        self.calls.append(
            ToolCall(
                name=name, arguments=kwargs, duration=duration, ok=ok, error=error, result=result, in_flight=in_flight
            )
        )

    def _off_record(self) -> FunctionError:
        return FunctionError(
            f"the resumed run went off its record ({self.diverged}); nothing more is called", type_name="ReplayError"
        )


def _limit(tool: Tool) -> float:
    return tool.limits.timeout if tool.limits and tool.limits.timeout is not None else 0.0


def _divergence(attempt: _Attempt, expected: Entry) -> str:
    was, now = call_text(expected.tool, expected.arguments), call_text(attempt.tool.name, attempt.kwargs)
    return f"call {attempt.index + 1} was tools.{was}, now tools.{now}"
