"""Approvals in `codemode serve`: ask the person through MCP elicitation, or say how to approve with `_meta`.

A `code` run that stops at a call needing approval asks the client with a form elicitation (approve yes/no and
an optional reason) when the client declared the `elicitation` capability. A client on a handshake-era protocol
is asked over the session's back-channel, and the run resumes with the answer in the same request. A client on
the 2026-07-28 protocol, which has no back-channel, gets an `InputRequiredResult` that embeds the elicitation
and carries the conversation state (with the signed record of the paused run) as its `requestState`; the
client asks the person and retries the call with the answer, and the run resumes from that state, so any
replica can serve the retry. A client that cannot ask a person gets an `isError` result with what the run
printed, which call waits, the calls already made, and, since a model cannot set a request's `_meta`, that the
model should tell the user rather than retry. The application decides it: it calls `code` again with the same
code, the `_meta["codemode/state"]` of that result (it carries the signed record, so a stateless server needs
nothing else), and `_meta["codemode/approval"] = {"id": ..., "approved": true}` (or `false` with a `"reason"`).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Final

from codemode import Decision
from codemode.discovery import DiscoveryState
from codemode.mcp._sdk import MODERN_PROTOCOL_VERSIONS, types
from codemode.run._text import readable, summary

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from codemode import PendingApproval
    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.policy import Caller

logger = logging.getLogger("codemode.mcp.server")

APPROVAL_META_KEY: Final = "codemode/approval"
"""`_meta` key of a decision on a pending call: `{"id", "approved", "reason"}`."""
PENDING_META_KEY: Final = "codemode/pending"
"""`_meta` key of a paused result's waiting call, as data: `{"id", "tool", "arguments", "reason"}` (the `id` is
what a decision under `APPROVAL_META_KEY` names)."""
INPUT_KEY: Final = "codemode/approval"
"""Key of the approval form in an `InputRequiredResult`'s `inputRequests` (and of its answer)."""
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
    cm: CodeMode,
    ctx: ServerRequestContext[Any],
    code: str,
    state: DiscoveryState,
    params: types.CallToolRequestParams,
    *,
    caller: Caller | None = None,
) -> ExecuteResult | types.InputRequiredResult:
    """Run `code` (or resume it with the request's decision), asking the person while the client can.

    `state` is the request's: from `round_state` on a retry that answers an `InputRequiredResult`. `caller` is
    who the request authenticated as: the run is theirs, and only they can resume it.
    """
    decision = _answered(params, state, code) or _decision(params.meta, state, code)
    if decision is None:
        result = await cm.execute(code, state, caller=caller)
    else:
        result = await cm.resume(state, approved=decision.approved, reason=decision.reason, caller=caller)
    while result.pending is not None:
        if _can_ask_in_round(ctx):
            return _input_required(result.pending, state)
        asked = await _elicit(ctx, result.pending) if _can_elicit(ctx) else None
        if asked is None:
            break
        result = await cm.resume(state, approved=asked.approved, reason=asked.reason, caller=caller)
    return result


def round_state(params: types.CallToolRequestParams) -> DiscoveryState | None:
    """The state a retry answering an `InputRequiredResult` carries back in `requestState`, or None."""
    if params.request_state is None or INPUT_KEY not in (params.input_responses or {}):
        return None
    try:
        data = json.loads(params.request_state)
        return DiscoveryState.from_json(data) if isinstance(data, dict) else None
    except (TypeError, ValueError):
        logger.warning("ignored a malformed `requestState` on a `code` retry")
        return None


def pending_meta(pending: PendingApproval) -> dict[str, Any]:
    """The waiting call of a paused result, as data for a client that decides it (`PENDING_META_KEY`)."""
    return {"id": pending.id, "tool": pending.alias, "arguments": pending.arguments, "reason": pending.reason}


def fallback_text(result: ExecuteResult, pending: PendingApproval) -> str:
    """What a client that cannot ask a person reads about `result`, paused at `pending`.

    The run so far (its output, the pause, the calls it made) and how to decide.
    """
    parts = [result.run.stdout.rstrip("\n")] if result.run.stdout else []
    parts.append(result.text)
    if pending.calls:
        parts.append(
            "These calls were already made and took effect; resuming does not make them again, "
            "but new code would make them a second time:"
        )
        parts.extend(f"  {'ok    ' if call.ok else 'failed'} {summary(call)}" for call in pending.calls)
    decision = json.dumps({"id": pending.id, "approved": True})
    parts.append(
        f"{pending.describe()} needs a person's approval, and this client cannot ask one (it has no MCP "
        "elicitation), so you cannot make this call from here: tell the user it waits for their approval, and do "
        "not run it again with new code (that pauses again, or repeats the calls above). "
        "(For the application, not the model: it approves by calling `code` again with the same code, this "
        f'result\'s `_meta["codemode/state"]`, and `_meta["{APPROVAL_META_KEY}"] = {decision}`, or '
        '`"approved": false` with a `"reason"`.)'
    )
    return readable("\n".join(parts))


def _answered(params: types.CallToolRequestParams, state: DiscoveryState, code: str) -> Decision | None:
    """The person's answer a 2026-07-28 retry carries, checked against the paused run in its state."""
    answer = (params.input_responses or {}).get(INPUT_KEY)
    if answer is None or params.request_state is None:
        return None
    if not isinstance(answer, types.ElicitResult):
        raise DecisionError(f"The input response {INPUT_KEY!r} must answer the elicitation it was asked with.")
    if state.paused_code != code:
        raise DecisionError("To decide a waiting call, retry `code` with the same code and its `requestState`.")
    return _answer_of(answer)


def _decision(meta: object, state: DiscoveryState, code: str) -> Decision | None:
    given = meta.get(APPROVAL_META_KEY) if isinstance(meta, dict) else None
    if given is None:
        return None
    if not isinstance(given, dict) or not isinstance(given.get("approved"), bool):
        raise DecisionError(f'`_meta["{APPROVAL_META_KEY}"]` must be an object with `"approved": true|false`.')
    if state.approval is None or given.get("id") != state.approval_id:
        raise DecisionError(
            'The decision names no call waiting in this conversation: send the `_meta["codemode/state"]` of the '
            "result that asked for approval, with its id."
        )
    if state.paused_code not in (None, code):
        raise DecisionError("To decide a waiting call, call `code` again with the same code as the paused run.")
    reason = given.get("reason")
    return Decision(approved=given["approved"], reason=reason if isinstance(reason, str) and reason else None)


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None and ctx.session.can_send_request


def _can_ask_in_round(ctx: ServerRequestContext[Any]) -> bool:
    """A 2026-07-28 client that declared form elicitation: it can answer an `InputRequiredResult`."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and elicitation is not None and _forms(elicitation)


def _forms(elicitation: types.ElicitationCapability) -> bool:
    # a capability declared empty (`{}`) means form elicitation, as before modes existed
    return elicitation.form is not None or elicitation.url is None


def _question(pending: PendingApproval) -> str:
    why = f" ({pending.reason})" if pending.reason else ""
    return f"The code wants to call {pending.describe()}{why}. Approve it?"


def _input_required(pending: PendingApproval, state: DiscoveryState) -> types.InputRequiredResult:
    ask = types.ElicitRequest(params=types.ElicitRequestFormParams(message=_question(pending), requested_schema=_FORM))
    return types.InputRequiredResult(input_requests={INPUT_KEY: ask}, request_state=json.dumps(state.to_json()))


async def _elicit(ctx: ServerRequestContext[Any], pending: PendingApproval) -> Decision | None:
    """The person's answer through the client, or None if the client could not ask."""
    try:
        answer = await ctx.session.elicit_form(_question(pending), _FORM, related_request_id=ctx.request_id)
    except Exception:  # the client refused or failed the request: fall back to the error result
        logger.warning("elicitation failed; answering with how to approve instead", exc_info=True)
        return None
    if not isinstance(answer, types.ElicitResult):
        return None
    return _answer_of(answer)


def _answer_of(answer: types.ElicitResult) -> Decision:
    """The decision in a person's answer to the approval form."""
    content = answer.content or {}
    reason = content.get("reason")
    text = reason if isinstance(reason, str) and reason else None
    if answer.action == "accept" and content.get("approve") is True:
        return Decision(approved=True)
    if answer.action == "cancel":
        return Decision(approved=False, reason=text or "the user dismissed the question")
    return Decision(approved=False, reason=text or "the user declined")
