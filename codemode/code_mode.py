"""`CodeMode`: a catalog behind one fixed `code` tool, and `execute`, which runs the model's code against it.

What a run does with each call (`codemode.run._runtime`), the announcement it leaves (`codemode.discovery`), and the
record of a run paused for approval (`codemode.approvals`) are their own modules; this one owns
the sandbox, the search that follows the catalog, and the order of the steps of one `execute` or `resume`.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Self

import anyio

from codemode.approvals import Decision, PendingApproval
from codemode.approvals._ledger import Ledger
from codemode.approvals._record import Record, pending_from, sign, verify
from codemode.code_tool import CodeTool, build_code_tool
from codemode.discovery import Announcement, DiscoveryState, plan_announcement
from codemode.errors import ERROR_NAME, ApprovalError
from codemode.policy import Caller, Policy
from codemode.run import _preflight as preflight
from codemode.run._display import DISPLAY_BUDGET, render_text
from codemode.run._observe import EventListener, Observer
from codemode.run._persistence import carry_over
from codemode.run._runtime import CatalogStubs, StubCache, ToolRuntime
from codemode.run._text import readable
from codemode.runlog import RunLog, json_line, log_record
from codemode.search import CatalogSearch
from sandbox import Limits, RunError, RunResult, Sandbox

if TYPE_CHECKING:
    import os
    from types import TracebackType

    from codemode.catalog import Catalog
    from codemode.events import EventSink, ToolCall
    from codemode.run._observe import Listener
    from codemode.search import SearchOption
    from codemode.tracing import Tracing
    from sandbox import JsonValue


@dataclass(frozen=True, kw_only=True)
class ExecuteResult:
    """The outcome of one `execute`."""

    text: str
    """The tool result for the model: printed output, the returned value (JSON), then the error if any, within
    `CodeMode.display_budget` characters, about (`run` has them whole)."""
    announcement: str | None
    """Conversation content announcing newly discovered (or changed, or removed) tools; None if nothing new."""
    run: RunResult
    """The sandbox's own result."""
    calls: tuple[ToolCall, ...] = ()
    """The tool calls the code made: completed ones in the order they ended, then any still in flight."""
    announced: Announcement = field(default_factory=Announcement)
    """What the announcement holds, as data."""
    value_truncated: bool = False
    """Whether `text` shows the returned value cut to fit the display budget (`run.value` is whole)."""
    code: str = ""
    """The code that ran."""
    pending: PendingApproval | None = None
    """The call the run stopped at because it needs a person's approval (`CodeMode.resume` continues it)."""
    caller: Caller | None = None
    """Who asked for the run (`execute(..., caller=...)`), or None."""
    decision: Decision | None = None
    """The decision a resumed run carried out (with who decided), or None for a fresh run."""

    @property
    def ok(self) -> bool:
        """Whether the code ran to its end without error."""
        return self.run.ok and self.pending is None

    def log_line(self) -> str:
        """This result as one JSON line for a person to read: the code, each call, the outcome, output sizes."""
        return json_line(log_record(self))


class CodeMode:
    """A catalog of any size behind one `code` tool whose definition never changes.

    Args:
        catalog: The tools.
        search: `"bm25"` (the default), `"hybrid"` (BM25 fused with offline embeddings; needs the `semantic`
            extra, see `codemode.search.hybrid.HybridSearch`), an index object such as `HybridSearch(fusion=...)`
            (filled with the catalog and kept in step with it until `aclose`; see `codemode.search.ToolIndex`),
            or a custom ranker (sync or async; see `codemode.search.Ranker`).
        sandbox: A sandbox to run code in, with its own limits and isolation; by default one is made (and owned)
            with `limits`, `isolation` and `max_runs`.
        limits: Per-run limits for the default sandbox (not with `sandbox=`).
        isolation: `process` (default, the security boundary) or `inline` (fast, cooperative limits only); not
            with `sandbox=`.
        max_runs: Runs in flight at once (default 64); a run over the cap waits for one to end. In process
            isolation each run has a process of its own while it lasts; not with `sandbox=`.

        hide_errors: Show the model only the exception type of a failing tool, not its message.
        max_tool_result: Largest tool result, in bytes of JSON, handed to the code.
        policy: Hooks before and after each tool call, per-tool limits and the key that signs approval records
            (see `codemode.policy`); by default no hooks and a key for this process only.
        persist_variables: Keep the top-level variables a run leaves that convert to JSON for the next run of
            the same conversation. They live in the state (`DiscoveryState.variables`, JSON), never in a worker,
            within `Limits.variables` bytes; the names not kept are listed in the result.
        tracing: OpenTelemetry spans for each `execute` and its tool calls and searches: `True`, or a
            `codemode.tracing.Tracing` to choose the provider and what is recorded (needs the `otel` extra).
        log: A file (or `RunLog`) to append one JSON line per `execute` to: the code, each call with its
            arguments, duration and outcome, the output size (see `codemode.runlog`).
        display_budget: Characters the model reads of one run (`ExecuteResult.text`), about: the printed output,
            the returned value, the error and the calls listing share them, each cut past its share (the output
            in its middle, the value keeping its JSON shape). `ExecuteResult.run` keeps them whole.

    Raises:
        ValueError: `sandbox=` together with `limits=` or `isolation=` (the sandbox's own settings would win
            silently), or an unknown `search=` name.
        TypeError: `search=` is neither an index nor callable.

    Example:
        ```python
        async with CodeMode(catalog, isolation="inline") as cm:
            state = cm.new_state()  # one per conversation; `DiscoveryState.from_history` rebuilds it
            result = await cm.execute(model_code, state)
            if result.pending is not None:  # a call needs a person's approval: decide, maybe much later
                result = await cm.resume(state, approved=True)
            reply_to_model(result.text, result.announcement)
        ```
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        search: SearchOption = None,
        sandbox: Sandbox | None = None,
        limits: Limits | None = None,
        isolation: Literal["process", "inline"] | None = None,
        max_runs: int | None = None,
        hide_errors: bool = False,
        max_tool_result: int = 1024 * 1024,
        policy: Policy | None = None,
        persist_variables: bool = False,
        tracing: Tracing | bool = False,
        log: RunLog | str | os.PathLike[str] | None = None,
        display_budget: int = DISPLAY_BUDGET,
    ) -> None:
        settings = [
            f"{name}=..."
            for name, value in (("limits", limits), ("isolation", isolation), ("max_runs", max_runs))
            if value is not None
        ]
        if sandbox is not None and settings:
            raise ValueError(
                f"CodeMode(sandbox=..., {', '.join(settings)}): a given sandbox runs with its own limits, "
                "isolation and cap on runs; pass them to `Sandbox(...)` instead, or leave out `sandbox=`"
            )
        self.catalog = catalog
        self.policy = policy or Policy()
        self._may_ask: tuple[int, bool] = (-1, False)
        self.persist_variables = persist_variables
        """Whether runs of one conversation keep their variables."""
        self._tracing = _tracing(tracing)
        self._log = log if isinstance(log, RunLog) or log is None else RunLog(log)
        self._owns_sandbox = sandbox is None
        if sandbox is None and max_runs is not None:
            sandbox = Sandbox(limits=limits, isolation=isolation or "process", max_runs=max_runs)
        self.sandbox = sandbox or Sandbox(limits=limits, isolation=isolation or "process")
        self.limits = self.sandbox.limits
        self._hide_errors = hide_errors
        self.display_budget = display_budget
        """Characters the model reads of one run, about (see `codemode.run._display.render_text`)."""
        self._max_tool_result = max_tool_result
        self._cache = StubCache()
        self._turns: dict[int, anyio.Lock] = {}
        """Each state's lock (by `id`, while the state lives): its runs go one at a time."""
        self._search = CatalogSearch(catalog, search)
        self._loaded = tuple(tool.name for tool in catalog if not tool.deferred)
        self.tool: CodeTool = build_code_tool(
            limits=self.limits,
            loaded_stubs=[self._cache.stub(tool) for tool in catalog if not tool.deferred],
            persist_variables=persist_variables,
            display_budget=display_budget,
        )
        """The `code` tool: the same bytes for the life of this object."""

    async def __aenter__(self) -> Self:
        self._search.follow()  # again, after an `aclose`: the index catches up with the catalog
        if self._owns_sandbox:
            await self.sandbox.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop following the catalog and release the sandbox (if this object made it); `async with` reopens."""
        self._search.close()
        if self._owns_sandbox:
            await self.sandbox.aclose()

    def new_state(self) -> DiscoveryState:
        """A fresh discovery state, for a new conversation."""
        return DiscoveryState()

    def state_from_history(self, texts: list[str]) -> DiscoveryState:
        """The discovery state of a conversation, from the texts of its messages."""
        return DiscoveryState.from_history(texts)

    async def execute(
        self, code: str, state: DiscoveryState, *, on_event: EventSink | None = None, caller: Caller | None = None
    ) -> ExecuteResult:
        """Run the model's code; `state` records what gets announced, the variables kept, and a pending approval.

        A pending approval already in `state` is dropped: new code means the model moved on. Runs of one state go
        one at a time, in the order they came (a model's parallel `code` calls, run at once by a framework), so
        each sees what the one before left: its variables and its announcements.

        Args:
            code: The model's Python source.
            state: The conversation's state; updated in place.
            on_event: Called as each tool call starts and ends (`codemode.events`), to show a long run live.
            caller: Who asks (a server's authenticated identity): policy hooks see it as `CallInfo.caller`, the
                run log and traces record it, and only the same caller may resume the run if it pauses.
        """
        state.approval = None
        async with self._turn(state):
            repeatable = self._repeatable()
            plan = _Plan(
                ledger=Ledger(self.policy, caller=caller),
                seed=secrets.randbits(63) if repeatable else None,
                clock=time.time() if repeatable else None,
                variables=self._variables(state),
            )
            return await self._observed(code, state, on_event, plan)

    async def resume(
        self,
        state: DiscoveryState,
        *,
        approved: bool,
        reason: str | None = None,
        on_event: EventSink | None = None,
        caller: Caller | None = None,
    ) -> ExecuteResult:
        """Continue the run that `state`'s pending approval stopped, with a person's decision.

        The same code runs again: calls already made get their recorded results (their handlers do not run
        again), then the pending call is made, or raises `ToolError` in the code with `reason` if denied.
        `caller` must be who started the run (`execute(..., caller=...)`); the decision records it as who decided.

        Raises:
            ApprovalError: `state` has no pending approval, its record was changed or signed with another key, or
                another caller started the run.
        """
        record = self._record(state, caller)  # the record as the caller set it: another resume may set the next one
        state.approval = None
        decision = Decision(approved=approved, reason=reason, decided_by=None if caller is None else caller.subject)
        async with self._turn(state):
            plan = _Plan(
                ledger=Ledger(self.policy, replay=record, decision=decision, caller=caller),
                seed=record.seed,
                clock=record.clock,
                variables=record.variables,
            )
            return await self._observed(record.code, state, on_event, plan)

    def _turn(self, state: DiscoveryState) -> anyio.Lock:
        """The lock one state's runs take in turn (dropped with the state)."""
        turn = self._turns.get(id(state))
        if turn is None:
            turn = self._turns[id(state)] = anyio.Lock()
            weakref.finalize(state, self._turns.pop, id(state), None)
        return turn

    def pending(self, state: DiscoveryState) -> PendingApproval | None:
        """The call `state` is waiting on a decision for, or None.

        Raises:
            ApprovalError: The record in `state` was changed or signed with another key.
        """
        if state.approval is None:
            return None
        return pending_from(state.approval_id or "", self._record(state, bound=False), self.catalog.get)

    def _record(self, state: DiscoveryState, caller: Caller | None = None, *, bound: bool = True) -> Record:
        if state.approval is None:
            raise ApprovalError("this conversation has no call waiting for approval; nothing to resume")
        record = verify(state.approval, self.policy.secret)
        if bound and record.caller != (None if caller is None else caller.principal):
            raise ApprovalError(
                "this paused run was started by another caller, and only they can approve or resume it; nothing was run"
            )
        return record

    def _repeatable(self) -> bool:
        version, answer = self._may_ask
        if version != self.catalog.version:
            answer = self.policy.may_ask(self.catalog)
            self._may_ask = (self.catalog.version, answer)
        return answer

    async def _observed(
        self, code: str, state: DiscoveryState, on_event: EventSink | None, plan: _Plan
    ) -> ExecuteResult:
        if self._tracing is None:
            result = await self._execute(code, state, on_event, None, plan)
        else:
            from codemode.tracing import RunTrace  # the optional `otel` extra, imported when tracing is on

            trace = RunTrace(self._tracing, code)
            with trace.current():
                result = await self._execute(code, state, on_event, trace, plan)
                trace.finish(result)
        if self._log is not None:
            self._log.write(result)
        return result

    async def _execute(
        self, code: str, state: DiscoveryState, on_event: EventSink | None, trace: Listener | None, plan: _Plan
    ) -> ExecuteResult:
        runtime = ToolRuntime(
            catalog=self.catalog,
            search=self._search,
            cache=self._cache,
            hide_errors=self._hide_errors,
            max_result=self._max_tool_result,
            ledger=plan.ledger,
        )
        listeners = [*([trace] if trace is not None else []), *([EventListener(on_event)] if on_event else [])]
        observer = Observer(runtime, listeners) if listeners else None
        # a resumed run replays code that passed this check when it first ran
        problems = preflight.check(code, self.catalog, self._cache) if plan.ledger.replay is None else []
        # a tool the refused code meant to call is announced in full, as a call at run time would have made it
        for problem in problems:
            if problem.tool is not None:
                runtime.discovered.setdefault(problem.tool)
                runtime.used.add(problem.tool)
        run = (
            preflight.refusal(problems)
            if problems
            else await self.sandbox.run(
                code,
                functions={"tools": runtime.namespace() if observer is None else observer.namespace()},
                error_names=(ERROR_NAME,),
                variables=plan.variables,
                seed=plan.seed,
                clock=plan.clock,
            )
        )
        announced = plan_announcement(
            state,
            runtime.discovered,
            CatalogStubs(self.catalog, self._cache),
            lines=CatalogStubs(self.catalog, self._cache, lines=True),
            used=runtime.used,
            exclude=self._loaded,
        )
        run, pending, note = self._settle(run, code, state, plan)
        if pending is None:
            announced.apply(state)
        else:  # the model never reads a paused run: the run that finishes announces what it found
            announced = Announcement()
        # a paused run has not finished: the state keeps the variables it started from, for the resumed run
        notes = carry_over(state, run, persist=self.persist_variables and pending is None)
        calls = runtime.record()
        if observer is not None:
            observer.finish(calls, paused=pending is not None)
        text, value_truncated = render_text(run, calls, budget=self.display_budget)
        return ExecuteResult(
            code=code,
            text=readable(pending_text(pending) if pending else "\n".join([text + note, *notes])),
            announcement=announced.text() if announced else None,
            run=run,
            calls=calls,
            announced=announced,
            value_truncated=value_truncated,
            pending=pending,
            caller=plan.ledger.caller,
            decision=plan.ledger.decision,
        )

    def _variables(self, state: DiscoveryState) -> dict[str, JsonValue] | None:
        if not self.persist_variables:
            return None
        return {name: value for name, value in state.variables.items() if name not in ("tools", ERROR_NAME)}

    def _settle(
        self, run: RunResult, code: str, state: DiscoveryState, plan: _Plan
    ) -> tuple[RunResult, PendingApproval | None, str]:
        """The run as the model reads it, the pending approval it stopped at (recorded in `state`), and a note."""
        ledger = plan.ledger
        replay = ledger.replay
        if replay is not None and not ledger.reached_decision and run.error and run.error.kind == "timeout":
            alias = _alias(self.catalog, replay.calls[replay.pending].tool)
            return run, None, f"\n(the resumed run stopped before it reached `tools.{alias}(...)`, which was not made)"
        if ledger.diverged is not None or (replay is not None and not ledger.reached_decision):
            what = ledger.diverged or "the code did not reach the call that was waiting for approval"
            message = (
                f"the resumed run went off its record: {what}. Nothing more was called. A resumed run must make "
                "the same calls in the same order; run the code again to start over"
            )
            return dataclasses.replace(run, value=None, error=RunError(kind="runtime", message=message)), None, ""
        if plan.seed is None or plan.clock is None:
            return run, None, ""
        record = ledger.paused(code=code, seed=plan.seed, clock=plan.clock, variables=plan.variables)
        if record is None:
            return run, None, ""
        state.approval = sign(record, self.policy.secret)
        return run, pending_from(state.approval_id or "", record, self.catalog.get), ""


def _alias(catalog: Catalog, name: str) -> str:
    tool = catalog.get(name)
    return tool.alias if tool is not None else name


def pending_text(pending: PendingApproval) -> str:
    """What the model reads while a call waits for a person's decision."""
    why = f" ({pending.reason})" if pending.reason else ""
    made = len(pending.calls)
    earlier = f"; the {made} call{'s' if made != 1 else ''} made before it will not be made again" if made else ""
    return (
        f"Paused: `tools.{pending.alias}(...)` needs a person's approval{why}, so the run stopped before making "
        f"it{earlier}. The run continues from there once someone decides."
    )


def _tracing(tracing: Tracing | bool) -> Tracing | None:
    if tracing is False:
        return None
    from codemode.tracing import Tracing  # the optional `otel` extra, imported only when tracing is asked for

    return Tracing() if tracing is True else tracing


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """How one run goes: its ledger (fresh, or replaying a record), and what makes it repeatable."""

    ledger: Ledger
    seed: int | None
    clock: float | None
    variables: dict[str, JsonValue] | None
