"""Approvals in `codemode serve`: ask the person through MCP elicitation, or say how to approve with `_meta`.

A `code` run that stops at a call needing approval asks the client with a form elicitation (approve yes/no and
an optional reason) when the client declared the `elicitation` capability, and resumes with the answer in the
same request. A client that cannot ask a person gets an `isError` result saying which call waits and how to
decide it: call `code` again with the same code, the `_meta["codemode/state"]` of that result (it carries the
signed record of the paused run, so a stateless server needs nothing else), and
`_meta["codemode/approval"] = {"id": ..., "approved": true}` (or `false` with a `"reason"`).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Final

from codemode._replay import Decision, approval_id
from codemode.mcp._sdk import types

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from codemode._replay import PendingApproval
    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.discovery import DiscoveryState

logger = logging.getLogger("codemode.mcp.server")

APPROVAL_META_KEY: Final = "codemode/approval"
"""`_meta` key of a decision on a pending call: `{"id", "approved", "reason"}`."""
_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve this call?"},
        "reason": {"type": "string", "title": "Reason (optional, shown to the model when denied)"},
    },
    "required": ["approve"],
}


class DecisionError(ValueError):
    """A request's decision does not fit the state it came with; the message is for the client."""


async def run_code(
    cm: CodeMode, ctx: ServerRequestContext[Any], code: str, state: DiscoveryState, meta: object
) -> ExecuteResult:
    """Run `code` (or resume it with the request's decision), asking the person while the client can."""
    decision = _decision(meta, state, code)
    if decision is None:
        result = await cm.execute(code, state)
    else:
        result = await cm.resume(state, approved=decision.approved, reason=decision.reason)
    while result.pending is not None and _can_elicit(ctx):
        asked = await _elicit(ctx, result.pending)
        if asked is None:
            break
        result = await cm.resume(state, approved=asked.approved, reason=asked.reason)
    return result


def fallback_text(pending: PendingApproval, state: DiscoveryState) -> str:
    """What a client that cannot ask a person reads: the call that waits, and how to decide it."""
    decision = json.dumps({"id": approval_id(state.approval), "approved": True})
    return (
        f"The call {pending.describe()} needs a person's approval and was not made. This client cannot ask one "
        "(no MCP elicitation), so ask the user, then call `code` again with the same code, this result's "
        f'`_meta["codemode/state"]`, and `_meta["{APPROVAL_META_KEY}"] = {decision}` (or `"approved": false` '
        'with a `"reason"`).'
    )


def _decision(meta: object, state: DiscoveryState, code: str) -> Decision | None:
    given = meta.get(APPROVAL_META_KEY) if isinstance(meta, dict) else None
    if given is None:
        return None
    if not isinstance(given, dict) or not isinstance(given.get("approved"), bool):
        raise DecisionError(f'`_meta["{APPROVAL_META_KEY}"]` must be an object with `"approved": true|false`.')
    if state.approval is None or given.get("id") != approval_id(state.approval):
        raise DecisionError(
            'The decision names no call waiting in this conversation: send the `_meta["codemode/state"]` of the '
            "result that asked for approval, with its id."
        )
    record = state.approval.get("record")
    if isinstance(record, dict) and record.get("code") != code:
        raise DecisionError("To decide a waiting call, call `code` again with the same code as the paused run.")
    reason = given.get("reason")
    return Decision(approved=given["approved"], reason=reason if isinstance(reason, str) and reason else None)


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None and ctx.session.can_send_request


async def _elicit(ctx: ServerRequestContext[Any], pending: PendingApproval) -> Decision | None:
    """The person's answer through the client, or None if the client could not ask."""
    why = f" ({pending.reason})" if pending.reason else ""
    message = f"The code wants to call {pending.describe()}{why}. Approve it?"
    try:
        answer = await ctx.session.elicit_form(message, _FORM, related_request_id=ctx.request_id)
    except Exception:  # the client refused or failed the request: fall back to the error result
        logger.warning("elicitation failed; answering with how to approve instead", exc_info=True)
        return None
    if not isinstance(answer, types.ElicitResult):
        return None
    content = answer.content or {}
    reason = content.get("reason")
    text = reason if isinstance(reason, str) and reason else None
    if answer.action == "accept" and content.get("approve") is True:
        return Decision(approved=True)
    if answer.action == "cancel":
        return Decision(approved=False, reason=text or "the user dismissed the question")
    return Decision(approved=False, reason=text or "the user declined")
