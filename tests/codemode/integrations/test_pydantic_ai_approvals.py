"""pydantic-ai's deferred tool approval: a paused `code` run ends the agent run, and the next one resumes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("pydantic_ai")

from approval_shop import SECRET, make_shop
from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from codemode import ApprovalError, CodeMode, Policy
from codemode.integrations.pydantic_ai import CodeModeToolset, decide

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

CODE = 'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
DENIABLE = """
order = await tools.get_order(order_id="A1")
try:
    await tools.refund(order_id="A1", amount=order["total"])
except ToolError as error:
    print("refund failed:", error)
"""
TWICE = 'await tools.delete_order(order_id="A1")\nreturn await tools.delete_order(order_id="B2")'


def one_code_call(code: str) -> FunctionModel:
    """A model that calls `code` once, then answers with the run's text from the tool result (before any stubs)."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        if returns:
            text, _, stubs = returns[-1].model_response_str().partition("\n\n<tools-discovered>")
            return ModelResponse(parts=[TextPart(text + (" [stubs]" if stubs else ""))])
        return ModelResponse(parts=[ToolCallPart("code", {"code": code}, tool_call_id="call_1")])

    return FunctionModel(respond)


def agent_for(cm: CodeMode, code: str) -> Agent[None, str | DeferredToolRequests]:
    return Agent(one_code_call(code), toolsets=[CodeModeToolset(cm)], output_type=[str, DeferredToolRequests])


def policy() -> Policy:
    return Policy(secret=SECRET)


async def test_a_paused_run_ends_with_deferred_tool_requests_and_an_approval_makes_the_call_once() -> None:
    """The run ends with the `code` call in `approvals`; `decide(..., True)` resumes: refund made, order replayed."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        agent = agent_for(cm, CODE)
        paused = await agent.run("Refund order A1.")
        requests = paused.output
        assert isinstance(requests, DeferredToolRequests)
        assert [call.tool_call_id for call in requests.approvals] == ["call_1"]
        shown = {k: v for k, v in requests.metadata["call_1"].items() if k != "codemode/approval"}
        assert shown == {
            "id": requests.metadata["call_1"]["codemode/approval"]["signature"][:16],
            "tool": "refund",
            "arguments": {"order_id": "A1", "amount": 150.0},
            "reason": None,
            "calls": [
                {
                    "tool": "get_order",
                    "arguments": {"order_id": "A1"},
                    "ok": True,
                    "result": {"order_id": "A1", "total": 150.0, "email": "a1@example.com"},
                }
            ],
        }
        assert shop.made == {"get_order": 1, "get_order:A1": 1}

        done = await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=decide(requests, {"call_1": True})
        )
    assert done.output == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n} [stubs]'
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_tool_denied_reaches_the_code_as_a_tool_error_it_handles() -> None:
    """`ToolDenied("ask finance")` through `decide`: the code catches the `ToolError` and prints the reason."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        agent = agent_for(cm, DENIABLE)
        paused = await agent.run("Refund order A1.")
        assert isinstance(paused.output, DeferredToolRequests)
        answers = decide(paused.output, {"call_1": ToolDenied("ask finance")})
        done = await agent.run(message_history=paused.all_messages(), deferred_tool_results=answers)
    assert done.output == "refund failed: tools.refund() was not approved: ask finance [stubs]"
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_an_approval_after_a_restart_resumes_from_the_serialised_history_and_requests() -> None:
    """History and requests go through JSON; a new shop, `CodeMode` and `Agent` make the refund, nothing else."""
    first = make_shop()
    async with CodeMode(first.catalog, isolation="inline", policy=policy()) as cm:
        paused = await agent_for(cm, CODE).run("Refund order A1.")
    requests_json = TypeAdapter(DeferredToolRequests).dump_json(paused.output)  # type: ignore[arg-type]
    history_json = ModelMessagesTypeAdapter.dump_json(paused.all_messages())

    second = make_shop()  # a new process: new handlers, new counters
    async with CodeMode(second.catalog, isolation="inline", policy=policy()) as cm:
        requests = TypeAdapter(DeferredToolRequests).validate_json(requests_json)
        done = await agent_for(cm, CODE).run(
            message_history=ModelMessagesTypeAdapter.validate_json(history_json),
            deferred_tool_results=decide(requests, {"call_1": True}),
        )
    assert done.output == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n} [stubs]'
    assert first.made["refund"] == 0
    assert second.made == {"refund": 1}


async def test_a_resumed_run_that_needs_a_second_approval_defers_again_and_then_finishes() -> None:
    """Two calls needing approval in one run: two deferrals of the same `code` call, each answered with `decide`."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        agent = agent_for(cm, TWICE)
        run = await agent.run("Delete A1 and B2.")
        asked: list[Any] = []
        while isinstance(run.output, DeferredToolRequests):
            asked.append(run.output.metadata["call_1"]["arguments"])
            answers = decide(run.output, {"call_1": True})
            run = await agent.run(message_history=run.all_messages(), deferred_tool_results=answers)
    assert asked == [{"order_id": "A1"}, {"order_id": "B2"}]
    assert run.output == 'Returned: "deleted B2" [stubs]'
    assert shop.made == {"delete_order": 2}


async def test_an_approval_without_the_paused_run_raises_a_clear_error_and_calls_nothing() -> None:
    """`DeferredToolResults(approvals={id: True})` alone carries no record: an `ApprovalError` says what to pass."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        agent = agent_for(cm, CODE)
        paused = await agent.run("Refund order A1.")
        with pytest.raises(ApprovalError) as raised:
            await agent.run(
                message_history=paused.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals={"call_1": True}),
            )
    assert "metadata=requests.metadata" in str(raised.value)
    assert shop.made["refund"] == 0


async def test_a_tool_denied_passed_without_decide_is_pydantic_ais_own_denial_and_the_code_is_not_resumed() -> None:
    """pydantic-ai answers a raw `ToolDenied` itself: the model reads its message, and nothing more is called."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        agent = agent_for(cm, DENIABLE)
        paused = await agent.run("Refund order A1.")
        done = await agent.run(
            message_history=paused.all_messages(),
            deferred_tool_results=DeferredToolResults(approvals={"call_1": ToolDenied("not today")}),
        )
    assert done.output == "not today"
    assert shop.made == {"get_order": 1, "get_order:A1": 1}
