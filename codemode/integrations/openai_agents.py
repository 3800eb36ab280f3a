"""`code_tool`: the one `code` tool as an OpenAI Agents SDK `FunctionTool` (the `openai-agents` extra).

Announcements go in the tool result (a `function_call_output` item), after the run's text: the SDK has no
mid-conversation system message, and the tool result is content the SDK already replays in every later request.

Discovery state is per agent run: at a run's first `code` call it is rebuilt from the run's input (the
conversation so far, which carries every earlier announcement), so a conversation continued with
`result.to_input_list()`, a session, or a stored history never re-announces a tool, and concurrent runs sharing
one tool never share state. The run is recognised by its `RunContextWrapper.usage`, one object per run that every
`ToolContext` of the run shares.

Approvals use the SDK's interruptions. The SDK asks whether a call needs approval before it invokes the tool,
but only running the code tells: so the tool's `needs_approval` callable runs the code. A run that finishes says
no, and the invocation that follows returns its result without running anything again; a run that stops at a
call needing approval says yes, so the agent run ends with the `code` call in `result.interruptions`.
`tool.paused(item)` is the paused run as JSON (the call, its arguments, the calls made, the signed record), and
`tool.decide(state, item, approved=..., reason=...)` answers it: it approves the `code` call in the SDK's
`RunState` (a denial too: the code then runs on and gets a `ToolError` with the reason, and the model reads what
was done), and `Runner.run(agent, state)` resumes the code through `CodeMode.resume`. After a restart, pass the
saved `paused(item)` to `decide` with the `RunState` restored from its string. The SDK interrupts only before an
invocation, so a resumed run that reaches a second call needing approval does not make it, and the model reads
that it must call `code` again for it. Since the code runs when the SDK asks about approval, it runs before any
tool input guardrail of the `code` tool sees the call. The SDK also takes a call whose arguments are not valid JSON
for one needing approval whenever `needs_approval` is a callable, so the tool has the callable only while some
call could need approval (the policy has `before` hooks, or a catalog tool has an approval rule), following the
catalog's changes; otherwise such a call is answered with how to call `code`.
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codemode.errors import ApprovalError
from codemode.integrations import MISSING_CODE, code_argument, texts_of, tool_output
from codemode.integrations._approvals import execute, paused_data, record_of, resume_paused

try:
    from agents import FunctionTool
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `openai-agents` extra: pip install "codemode[openai-agents]"') from e

if TYPE_CHECKING:
    from agents import RunContextWrapper, RunState, ToolApprovalItem, ToolContext

    from codemode import PendingApproval
    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.discovery import DiscoveryState
    from sandbox import JsonObject

__all__ = ["CodeModeTool", "code_tool"]

MAX_PENDING = 10_000
"""`code` calls whose run a tool keeps between the SDK's approval check and its invocation (or a decision)."""


class _RunStates:
    """Discovery state per agent run, keyed by the identity of the run's `usage` and dropped with it."""

    def __init__(self, code_mode: CodeMode) -> None:
        self._code_mode = code_mode
        self._states: dict[int, DiscoveryState] = {}

    def get(self, ctx: RunContextWrapper[Any]) -> DiscoveryState:
        run = ctx.usage  # a mutable dataclass: unhashable, so keyed by id and dropped by a finalizer
        state = self._states.get(id(run))
        if state is None:
            state = self._code_mode.state_from_history(texts_of(ctx.turn_input))
            self._states[id(run)] = state
            weakref.finalize(run, self._states.pop, id(run), None)
        return state


@dataclass
class _Paused:
    """A `code` call whose run stopped for approval: its `paused_data`, and the person's decision once given."""

    data: JsonObject
    approved: bool | None = None
    reason: str | None = None


@dataclass
class _Calls:
    """What `needs_approval` learned about each `code` call, by call id, until its invocation takes it."""

    code_mode: CodeMode
    states: _RunStates
    runs: dict[str, ExecuteResult | _Paused] = field(default_factory=dict)

    async def needs_approval(self, ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        """Run the code; say yes when it stopped at a call needing approval."""
        known = self.runs.get(call_id)
        if known is None:
            code = params.get("code")
            if not isinstance(code, str):
                return False  # the invocation answers with how to call `code`
            state = self.states.get(ctx)
            result = await execute(self.code_mode, code, state)
            known = _Paused(paused_data(result, state)) if result.pending is not None else result
            self.runs[call_id] = known
            if len(self.runs) > MAX_PENDING:  # calls the SDK rejected are never invoked: drop the oldest
                del self.runs[next(iter(self.runs))]
        return isinstance(known, _Paused)

    async def invoke(self, ctx: ToolContext[Any], arguments: str) -> str:
        """The result of the run `needs_approval` made, or of its resumption once a person decided."""
        known = self.runs.pop(ctx.tool_call_id, None)
        if known is None:
            code = code_argument(arguments)
            if code is None:
                return MISSING_CODE
            if ctx.is_tool_approved(ctx.tool_name, ctx.tool_call_id):
                raise ApprovalError(
                    "this approved `code` call has no paused run in this process: after a restart, pass the saved "
                    "`tool.paused(item)` to `tool.decide(state, item, ..., paused=...)`"
                )
            return tool_output(await execute(self.code_mode, code, self.states.get(ctx)))
        if not isinstance(known, _Paused):
            return tool_output(known)
        approved = known.approved is not False  # the SDK invokes only approved calls; `decide` may carry a denial
        state = self.states.get(ctx)
        result = await resume_paused(self.code_mode, state, known.data, approved=approved, reason=known.reason)
        if result.pending is not None:
            state.approval = None  # nobody will decide this one: the model is told to ask again
            return _second_approval(result.pending)
        return tool_output(result)


def _second_approval(pending: PendingApproval) -> str:
    made = "; ".join(f"{call.name}: {'ok' if call.ok else call.error}" for call in pending.calls) or "none"
    why = f" ({pending.reason})" if pending.reason else ""
    return (
        f"Stopped: `tools.{pending.alias}(...)` needs a person's approval too{why}, and the Agents SDK asks only "
        f"before a `code` call runs, so it was not made. Calls made before it, in order: {made}. Call `code` "
        "again to ask for it."
    )


@dataclass
class CodeModeTool(FunctionTool):
    """The `code` `FunctionTool`, with the answers to its approval interruptions (`code_tool` makes one)."""

    _calls: _Calls | None = field(default=None, kw_only=True, repr=False)

    def paused(self, item: ToolApprovalItem) -> JsonObject | None:
        """The paused run an interruption of this tool waits on, as JSON (see the module docs), or None."""
        known = self._calls.runs.get(item.call_id or "") if self._calls is not None else None
        return copy.deepcopy(known.data) if isinstance(known, _Paused) else None

    def decide(
        self,
        state: RunState[Any],
        item: ToolApprovalItem,
        *,
        approved: bool,
        reason: str | None = None,
        paused: JsonObject | None = None,
    ) -> None:
        """Answer an interruption of this tool; then `Runner.run(agent, state)` resumes the code.

        Args:
            state: The interrupted run's state (`result.to_state()`, or `RunState.from_string(...)`).
            item: The interruption (from `result.interruptions` or `state.get_interruptions()`).
            approved: Make the call (True), or deny it: the code gets a `ToolError` with `reason`.
            reason: Why it was denied.
            paused: `paused(item)` as saved before a restart; not needed in the process that paused.

        Raises:
            ApprovalError: Nothing of this tool is paused under `item`, and no `paused` was given.
        """
        assert self._calls is not None
        call_id = item.call_id or ""
        data = paused if paused is not None else self.paused(item)
        if data is None:
            raise ApprovalError(f"no paused `code` run for the call {call_id!r}: pass the saved `paused(item)`")
        record_of(data)  # fail here, not in the resumed run, when `paused` holds no record
        self._calls.runs[call_id] = _Paused(data, approved=approved, reason=reason)
        state.approve(item)


def code_tool(code_mode: CodeMode) -> CodeModeTool:
    """The `code` tool of `code_mode`, for `Agent(tools=[...])`; enter `code_mode` yourself (`async with`).

    Its name, description and parameters schema are `code_mode.tool`'s, byte for byte (the schema is already
    strict, so the SDK's strict mode leaves it as it is).

    Example:
        ```python
        async with CodeMode(catalog) as cm:
            tool = code_tool(cm)
            agent = Agent(name="assistant", tools=[tool])
            result = await Runner.run(agent, "Refund order A1.")
            if result.interruptions:
                state = result.to_state()
                for item in result.interruptions:
                    tool.decide(state, item, approved=True)
                result = await Runner.run(agent, state)
        ```
    """
    calls = _Calls(code_mode, _RunStates(code_mode))
    tool = code_mode.tool
    made = CodeModeTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=copy.deepcopy(tool.input_schema),
        on_invoke_tool=calls.invoke,
        strict_json_schema=True,
        _calls=calls,
    )

    def follow(_change: object = None) -> None:
        # the SDK takes arguments it cannot parse for an approval whenever `needs_approval` is callable: so it is
        # callable only while some call could need approval, and the invocation answers unreadable arguments
        asks = code_mode.policy.may_ask(code_mode.catalog)
        made.needs_approval = calls.needs_approval if asks else False

    follow()
    code_mode.catalog.subscribe(follow)
    return made
