"""What the framework adapters share about approvals: a paused run as JSON, and resuming it from that JSON.

Each framework has its own way to stop a run for a person (pydantic-ai's deferred tool calls, the Agents SDK's
interruptions, LangGraph's `interrupt`), and each carries a JSON payload with the stop. `paused_data` is that
payload: what a person needs to decide (the call, its arguments, why, and every call already made with its
result) and what the adapter needs to continue (the signed record of the paused run, under `RECORD_KEY`). The
framework keeps it wherever it keeps its own pause (a message history, a `RunState`, a checkpoint), so the
decision can come from another process; `resume_paused` continues the run from it with `CodeMode.resume`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from codemode.discovery import DiscoveryState
from codemode.errors import ApprovalError
from codemode.integrations import BlockingCodeMode

if TYPE_CHECKING:
    from codemode import PendingApproval, ToolCall
    from codemode.code_mode import CodeMode, ExecuteResult
    from sandbox import JsonObject, JsonValue

__all__ = ["RECORD_KEY", "cannot_ask", "execute", "paused_code", "paused_data", "record_of", "resume_paused"]

RECORD_KEY: Final = "codemode/approval"
"""Key of the signed record of the paused run in `paused_data`."""


def paused_data(result: ExecuteResult, state: DiscoveryState) -> JsonObject:
    """A paused run as JSON: `id`, `tool`, `arguments`, `reason`, `calls` made before it, and its signed record."""
    pending = result.pending
    if pending is None or state.approval is None:
        raise ValueError("`paused_data` takes the result of a run that paused for approval")
    return {
        "id": pending.id,
        "tool": pending.tool,
        "arguments": pending.arguments,
        "reason": pending.reason,
        "calls": [_call_json(call) for call in pending.calls],
        RECORD_KEY: state.approval,
    }


def record_of(data: object) -> dict[str, JsonValue]:
    """The signed record inside `paused_data` output; `ApprovalError` if there is none."""
    record = data.get(RECORD_KEY) if isinstance(data, Mapping) else None
    if not isinstance(record, dict):
        raise ApprovalError(
            f"no paused codemode run to resume: pass back the payload the pause came with (its {RECORD_KEY!r} key "
            "holds the signed record)"
        )
    return record


def paused_code(data: object) -> str | None:
    """The code of the run `paused_data` output describes, or None if it holds no record."""
    signed = data.get(RECORD_KEY) if isinstance(data, Mapping) else None
    return DiscoveryState(approval=signed).paused_code if isinstance(signed, dict) else None


async def execute(code_mode: CodeMode | BlockingCodeMode, code: str, state: DiscoveryState) -> ExecuteResult:
    """`execute` on either kind of `CodeMode`."""
    if isinstance(code_mode, BlockingCodeMode):
        return await code_mode.aexecute(code, state)
    return await code_mode.execute(code, state)


async def resume_paused(
    code_mode: CodeMode | BlockingCodeMode,
    state: DiscoveryState,
    data: object,
    *,
    approved: bool,
    reason: str | None = None,
) -> ExecuteResult:
    """Continue the run `data` (`paused_data` output) describes, in `state`, with a person's decision.

    Raises:
        ApprovalError: `data` holds no record, or its record was changed or signed with another key.
    """
    state.approval = record_of(data)
    if isinstance(code_mode, BlockingCodeMode):
        return await code_mode.aresume(state, approved=approved, reason=reason)
    return await code_mode.resume(state, approved=approved, reason=reason)


def cannot_ask(pending: PendingApproval, where: str) -> str:
    """What the model reads when a run paused where no one can be asked: the call was not made, the rest was."""
    why = f" ({pending.reason})" if pending.reason else ""
    made = len(pending.calls)
    calls = f"{made} call{'s were' if made != 1 else ' was'}"
    return (
        f"Stopped: `tools.{pending.alias}(...)` needs a person's approval{why}, and {where}, where no one can be "
        f"asked, so it was not made; {calls} made before it. Tell the user what needs approval."
    )


def _call_json(call: ToolCall) -> JsonObject:
    data: JsonObject = {"tool": call.name, "arguments": call.arguments, "ok": call.ok}
    if call.ok:
        data["result"] = call.result
    else:
        data["error"] = call.error
    return data
