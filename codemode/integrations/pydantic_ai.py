"""`CodeModeToolset`: the one `code` tool as a pydantic-ai toolset (the `pydantic-ai` extra).

Announcements go in the tool result, after the run's text. pydantic-ai's prefix-stable mechanism for changing
context (`InstructionPart(on_change="append")`) appends the *whole* changed instruction block each time it
changes, so a growing list of stubs would be resent in full at every discovery; the tool result carries each stub
once, in the history pydantic-ai already keeps.

Discovery state is per agent run, rebuilt at the run's first `code` call from the run's messages (which include
any `message_history` passed in), so a conversation continued over several runs, processes or stores never
re-announces a tool, and concurrent runs of one agent never share state.

Approvals use pydantic-ai's deferred tool calls. A run of the code that stops at a call needing approval raises
`ApprovalRequired` with `paused_data` as its metadata, so the agent run ends with `DeferredToolRequests` (put it
in the agent's `output_type`). Answer with `decide(requests, {call_id: True | ToolDenied("why")})`: its
`DeferredToolResults` carries the paused run back (the metadata, JSON, so the answer can come from another
process), and the next run resumes the code through `CodeMode.resume`. A denial still runs the code, so the
code's `ToolError` handling runs and the model learns what was done: `decide` sends it as an approval of the
`code` call with the denial in the metadata, since pydantic-ai never calls a tool whose call is `ToolDenied`.
A plain approval (`True`, `requests.build_results(approve_all=True)`, as a `HandleDeferredToolCalls` handler
answers within the run) works in the process that paused, where the toolset keeps the paused run.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

import anyio

from codemode.errors import ApprovalError
from codemode.integrations import MISSING_CODE, code_argument, texts_of, tool_output
from codemode.integrations._approvals import RECORD_KEY, execute, paused_code, paused_data, resume_paused

try:
    from pydantic_ai import ApprovalRequired, DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `pydantic-ai` extra: pip install "codemode[pydantic-ai]"') from e

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pydantic_ai import RunContext

    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.discovery import DiscoveryState
    from sandbox import JsonObject

__all__ = ["DECISION_KEY", "CodeModeToolset", "decide"]

MAX_PAUSED = 1_000
"""Paused runs a toolset keeps in memory for approvals that come back without their metadata."""
DECISION_KEY = "codemode/decision"
"""Key of the decision (`{"approved": bool, "reason": str | None}`) in a resumed `code` call's metadata."""

_ARGS_VALIDATOR = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
"""Any JSON object: `call_tool` answers a call with no `code` string with `MISSING_CODE`, as every adapter does,
and runs the code beside keys it does not use (`"explanation"`), rather than spend one of pydantic-ai's retries."""


@dataclass
class _Lifecycle:
    """How many runs have entered an owned `CodeMode`; shared by a toolset and its per-run copies."""

    entered: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)


class CodeModeToolset(AbstractToolset[Any]):
    """The `code` tool of a `CodeMode`, for `Agent(toolsets=[...])`.

    Its definition is `code_mode.tool`, byte for byte, in every request of every run.

    Args:
        code_mode: The `CodeMode` to run code with. Enter it yourself (`async with code_mode:`), or pass
            `own=True` to have the toolset enter it when pydantic-ai enters the toolset (at each run, or once
            for many runs under `async with agent:`) and close it when the last one exits.
        own: Whether the toolset enters and closes `code_mode`.
        id: The toolset's id, unique among the agent's toolsets.
        max_retries: Retries pydantic-ai allows when the model's arguments do not validate.

    Example:
        ```python
        async with CodeMode(catalog) as cm:
            agent = Agent("anthropic:claude-sonnet-4-5", toolsets=[CodeModeToolset(cm)])
            result = await agent.run("Which Berlin customers have overdue invoices?")
        ```
    """

    def __init__(self, code_mode: CodeMode, *, own: bool = False, id: str = "codemode", max_retries: int = 1) -> None:
        self.code_mode = code_mode
        self.own = own
        self.max_retries = max_retries
        self._id = id
        self._lifecycle = _Lifecycle()
        self._state: DiscoveryState | None = None
        self._paused: OrderedDict[str, JsonObject] = OrderedDict()  # shared with the per-run copies

    @property
    def id(self) -> str:
        """The toolset's id."""
        return self._id

    async def for_run(self, ctx: RunContext[Any]) -> Self:
        """A copy with its own discovery state for this run."""
        run = copy.copy(self)
        run._state = None
        return run

    async def __aenter__(self) -> Self:
        if self.own:
            async with self._lifecycle.lock:
                if self._lifecycle.entered == 0:
                    await self.code_mode.__aenter__()
                self._lifecycle.entered += 1
        return self

    async def __aexit__(self, *args: object) -> bool | None:
        if self.own:
            async with self._lifecycle.lock:
                self._lifecycle.entered -= 1
                if self._lifecycle.entered == 0:
                    await self.code_mode.aclose()
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The `code` tool, as `code_mode.tool` defines it."""
        tool = self.code_mode.tool
        definition = ToolDefinition(
            name=tool.name, description=tool.description, parameters_json_schema=copy.deepcopy(tool.input_schema)
        )
        return {
            tool.name: ToolsetTool(
                toolset=self, tool_def=definition, max_retries=self.max_retries, args_validator=_ARGS_VALIDATOR
            )
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        """Run the model's code; the result text ends with the announcement of any newly discovered tools."""
        code = code_argument(tool_args)
        if code is None:
            return MISSING_CODE
        if self._state is None:
            self._state = self.code_mode.state_from_history(texts_of(ctx.messages))
        if ctx.tool_call_approved:
            result = await self._resume(ctx, code)
        else:
            result = await execute(self.code_mode, code, self._state)
        if result.pending is not None:
            paused = paused_data(result, self._state)
            self._remember(ctx.tool_call_id, paused)
            raise ApprovalRequired(metadata=paused)
        return tool_output(result)

    def _remember(self, call_id: str | None, paused: JsonObject) -> None:
        """Keep a paused run for an approval without metadata in this process (an inline handler's, say)."""
        if call_id is None:
            return
        self._paused[call_id] = paused
        if len(self._paused) > MAX_PAUSED:
            self._paused.popitem(last=False)

    async def _resume(self, ctx: RunContext[Any], code: str) -> ExecuteResult:
        assert self._state is not None
        metadata = ctx.tool_call_metadata
        kept = self._paused.pop(ctx.tool_call_id or "", None)
        # tool call ids are unique per model, not per process: take a kept run only if it paused this very code
        if paused_code(metadata) is None and kept is not None and paused_code(kept) == code:
            metadata = {**kept, **(metadata if isinstance(metadata, dict) else {})}
        decision = metadata.get(DECISION_KEY) if isinstance(metadata, dict) else None
        approved, reason = True, None
        if isinstance(decision, dict):
            approved, reason = decision.get("approved") is not False, decision.get("reason")
        try:
            return await resume_paused(
                self.code_mode, self._state, metadata, approved=approved, reason=reason if reason else None
            )
        except ApprovalError as error:
            raise ApprovalError(
                f"{error}. Answer a paused `code` call with `decide(requests, ...)`, or pass "
                "`DeferredToolResults(approvals=..., metadata=requests.metadata)`"
            ) from None


def decide(
    requests: DeferredToolRequests, approvals: Mapping[str, bool | ToolApproved | ToolDenied]
) -> DeferredToolResults:
    """The `DeferredToolResults` that answers `requests` with a person's decisions, keyed by tool call id.

    Paused `code` calls get their paused run back in the metadata, and a denial (`False`, `ToolDenied(message)`)
    reaches the code as a `ToolError` with the message. Other calls' answers pass through unchanged.

    Example:
        ```python
        result = await agent.run("Refund order A1.", output_type=[str, DeferredToolRequests])
        if isinstance(result.output, DeferredToolRequests):
            answers = decide(result.output, {call.tool_call_id: True for call in result.output.approvals})
            result = await agent.run(message_history=result.all_messages(), deferred_tool_results=answers)
        ```
    """
    results = DeferredToolResults()
    for call_id, answer in approvals.items():
        paused = requests.metadata.get(call_id)
        if not (isinstance(paused, dict) and RECORD_KEY in paused):
            results.approvals[call_id] = answer
            continue
        if isinstance(answer, ToolDenied):
            decision: dict[str, Any] = {"approved": False, "reason": answer.message}
        else:
            decision = {"approved": answer is True or isinstance(answer, ToolApproved), "reason": None}
        results.approvals[call_id] = ToolApproved()
        results.metadata[call_id] = {**paused, DECISION_KEY: decision}
    return results
