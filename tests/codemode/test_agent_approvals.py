"""`Agent` with approvals: a callback that decides, or a run that stops, is saved, and continues with a decision."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import pytest
from approval_shop import make_shop

from codemode import ApprovalError, CodeMode, Decision, PendingApproval
from codemode.agent import Agent
from codemode.providers.anthropic import AnthropicWire
from codemode.providers.openai_chat import OpenAIChatWire
from codemode.providers.openai_responses import OpenAIResponsesWire
from codemode.testing import ScriptedModel, prompt_text, step

if TYPE_CHECKING:
    from codemode.providers.base import WireFormat

WIRES = [AnthropicWire(), OpenAIChatWire(), OpenAIResponsesWire()]
REFUND = 'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
DELETE = """
try:
    return await tools.delete_order(order_id="A1")
except ToolError as error:
    return str(error)
"""
SCRIPT = [step("Refunding.", REFUND), step("Deleting.", DELETE), step("Refunded; the order was kept.")]


def saved_json(agent: Agent) -> Any:
    """The agent's saved conversation, as another process would read it back."""
    return json.loads(json.dumps(agent.save()))


@pytest.mark.parametrize("wire", WIRES, ids=lambda wire: wire.name)
async def test_a_conversation_paused_twice_and_resumed_from_saved_state_keeps_every_request_a_prefix(
    wire: WireFormat,
) -> None:
    """Two pauses, each saved and resumed in a fresh `Agent` and `CodeMode`; requests grow as byte prefixes."""
    shop = make_shop()
    model = ScriptedModel(wire, SCRIPT)
    async with shop.code_mode() as cm:
        agent = Agent(cm, model)
        first = await agent.run("Refund order A1, then delete it.")
        saved = saved_json(agent)
    assert first.stopped == "approval"
    assert first.pending is not None
    assert (first.pending.tool, first.pending.arguments) == ("refund", {"order_id": "A1", "amount": 150.0})
    assert len(model.requests) == 1

    async with shop.code_mode() as cm:
        agent = Agent.resume(cm, model, saved)
        second = await agent.decide(True)
        saved = saved_json(agent)
    assert second.stopped == "approval"
    assert second.pending is not None
    assert second.pending.tool == "delete_order"

    async with shop.code_mode() as cm:
        agent = Agent.resume(cm, model, saved)
        third = await agent.decide(False, reason="orders are kept for audits")

    assert (third.stopped, third.answer) == ("answer", "Refunded; the order was kept.")
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
    texts = wire.history_texts(agent.messages)
    assert any('"refunded": 150.0' in text for text in texts)
    assert any("tools.delete_order() was not approved: orders are kept for audits" in text for text in texts)
    assert len({json.dumps(request["tools"]) for request in model.requests}) == 1
    prompts = [prompt_text(request) for request in model.requests]
    assert len(prompts) == 3
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(prompts))


async def test_an_approval_callback_decides_each_call_and_the_run_goes_on_without_stopping() -> None:
    """`Agent(approve=...)` is asked with the pending call; a `Decision` with a reason denies, `True` approves."""
    shop = make_shop()
    asked: list[PendingApproval] = []

    async def approve(pending: PendingApproval) -> bool | Decision:
        asked.append(pending)
        return True if pending.tool == "refund" else Decision(approved=False, reason="never delete")

    model = ScriptedModel(AnthropicWire(), SCRIPT)
    async with shop.code_mode() as cm:
        agent = Agent(cm, model, approve=approve)
        result = await agent.run("Refund order A1, then delete it.")

    assert (result.stopped, result.answer) == ("answer", "Refunded; the order was kept.")
    assert [(p.tool, [call.name for call in p.calls]) for p in asked] == [
        ("refund", ["get_order"]),
        ("delete_order", []),
    ]
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
    assert agent.paused is None
    assert "approval" not in agent.save()["state"]  # type: ignore[operator]  # a dict


async def test_a_turn_with_two_code_calls_pauses_at_the_second_and_keeps_the_first_result() -> None:
    """The first call's result waits with the paused turn; both results are written once the second is decided."""
    shop = make_shop()
    script = [step("", 'return await tools.get_order(order_id="B2")', REFUND), step("Done.")]
    model = ScriptedModel(OpenAIChatWire(), script)
    async with shop.code_mode() as cm:
        agent = Agent(cm, model)
        paused = await agent.run("Look up B2 and refund A1.")
        assert paused.stopped == "approval"
        agent = Agent.resume(cm, model, saved_json(agent))
        done = await agent.decide(True)
    assert done.answer == "Done."
    results = [message for message in agent.messages if message.get("role") == "tool"]
    assert len(results) == 2
    assert shop.made == {"get_order": 2, "get_order:B2": 1, "get_order:A1": 1, "refund": 1}


async def test_deciding_with_nothing_pending_raises() -> None:
    """`decide` on an agent that is not waiting is the host's mistake."""
    async with CodeMode(make_shop().catalog, isolation="inline") as cm:
        with pytest.raises(ApprovalError):
            await Agent(cm, ScriptedModel(AnthropicWire(), [])).decide(True)
