"""pydantic-ai's deferred tool approval: a paused `code` run ends the agent run, and the next one resumes it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("pydantic_ai")

from approval_shop import DENIABLE_CODE, REFUND_ASKED, REFUND_CODE, REFUNDED, TWICE_CODE, make_shop
from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from codemode import ApprovalError, CodeMode
from codemode.integrations.pydantic_ai import CodeModeToolset, decide

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


TOOLS_SENT: list[str] = []
"""The tool definitions of every request `one_code_call` models answered, as JSON."""


def one_code_call(code: str) -> FunctionModel:
    """A model that calls `code` once, then answers with the run's text from the tool result (before any stubs)."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        TOOLS_SENT.append(json.dumps([[t.name, t.description, t.parameters_json_schema] for t in info.function_tools]))
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


async def test_a_paused_run_ends_with_deferred_tool_requests_and_an_approval_makes_the_call_once() -> None:
    """The run ends with the `code` call in `approvals`; `decide(..., True)` resumes: refund made, order replayed."""
    shop = make_shop()
    TOOLS_SENT.clear()
    async with shop.code_mode() as cm:
        agent = agent_for(cm, REFUND_CODE)
        paused = await agent.run("Refund order A1.")
        requests = paused.output
        assert isinstance(requests, DeferredToolRequests)
        assert [call.tool_call_id for call in requests.approvals] == ["call_1"]
        record = requests.metadata["call_1"]["codemode/approval"]
        assert requests.metadata["call_1"] == {
            "codemode/approval": record,
            "id": record["signature"][:16],
            **REFUND_ASKED,
        }
        assert shop.made == {"get_order": 1, "get_order:A1": 1}

        done = await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=decide(requests, {"call_1": True})
        )
    assert done.output == REFUNDED + " [stubs]"
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
    assert len(TOOLS_SENT) == 2
    assert len(set(TOOLS_SENT)) == 1  # the paused and the resumed run send the same `code` tool


async def test_a_tool_denied_reaches_the_code_as_a_tool_error_it_handles() -> None:
    """`ToolDenied("ask finance")` through `decide`: the code catches the `ToolError` and prints the reason."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        agent = agent_for(cm, DENIABLE_CODE)
        paused = await agent.run("Refund order A1.")
        assert isinstance(paused.output, DeferredToolRequests)
        answers = decide(paused.output, {"call_1": ToolDenied("ask finance")})
        done = await agent.run(message_history=paused.all_messages(), deferred_tool_results=answers)
    assert done.output == "refund failed: tools.refund() was not approved: ask finance [stubs]"
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_an_approval_after_a_restart_resumes_from_the_serialised_history_and_requests() -> None:
    """History and requests go through JSON; a new shop, `CodeMode` and `Agent` make the refund, nothing else."""
    first = make_shop()
    async with first.code_mode() as cm:
        paused = await agent_for(cm, REFUND_CODE).run("Refund order A1.")
    requests_json = TypeAdapter(DeferredToolRequests).dump_json(paused.output)  # type: ignore[arg-type]
    history_json = ModelMessagesTypeAdapter.dump_json(paused.all_messages())

    second = make_shop()  # a new process: new handlers, new counters
    async with second.code_mode() as cm:
        requests = TypeAdapter(DeferredToolRequests).validate_json(requests_json)
        done = await agent_for(cm, REFUND_CODE).run(
            message_history=ModelMessagesTypeAdapter.validate_json(history_json),
            deferred_tool_results=decide(requests, {"call_1": True}),
        )
    assert done.output == REFUNDED + " [stubs]"
    assert first.made["refund"] == 0
    assert second.made == {"refund": 1}


async def test_a_resumed_run_that_needs_a_second_approval_defers_again_and_then_finishes() -> None:
    """Two calls needing approval in one run: two deferrals of the same `code` call, each answered with `decide`."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        agent = agent_for(cm, TWICE_CODE)
        run = await agent.run("Delete A1 and B2.")
        asked: list[Any] = []
        while isinstance(run.output, DeferredToolRequests):
            asked.append(run.output.metadata["call_1"]["arguments"])
            answers = decide(run.output, {"call_1": True})
            run = await agent.run(message_history=run.all_messages(), deferred_tool_results=answers)
    assert asked == [{"order_id": "A1"}, {"order_id": "B2"}]
    assert run.output == 'Returned: "deleted B2" [stubs]'
    assert shop.made == {"delete_order": 2}


async def test_a_plain_approval_resumes_in_the_same_process_and_after_a_restart_says_what_to_pass() -> None:
    """`DeferredToolResults(approvals={id: True})` works where the toolset kept the run; a new one raises."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        paused = await agent_for(cm, REFUND_CODE).run("Refund order A1.")
        plain = DeferredToolResults(approvals={"call_1": True})
        with pytest.raises(ApprovalError) as raised:  # a new toolset: as after a restart
            await agent_for(cm, REFUND_CODE).run(message_history=paused.all_messages(), deferred_tool_results=plain)
        assert shop.made["refund"] == 0
    assert "metadata=requests.metadata" in str(raised.value)

    async with shop.code_mode() as cm:
        agent = agent_for(cm, REFUND_CODE)
        paused = await agent.run("Refund order A1.")
        done = await agent.run(message_history=paused.all_messages(), deferred_tool_results=plain)
    assert done.output == REFUNDED + " [stubs]"
    assert shop.made["refund"] == 1


async def test_an_inline_handler_approves_within_the_run() -> None:
    """pydantic-ai's `HandleDeferredToolCalls` answers in the same run; the code resumes and the run finishes."""
    shop = make_shop()
    asked: list[Any] = []

    def handler(ctx: Any, requests: DeferredToolRequests) -> DeferredToolResults:
        asked.extend(requests.metadata[call.tool_call_id]["tool"] for call in requests.approvals)
        return requests.build_results(approve_all=True)

    async with shop.code_mode() as cm:
        agent = Agent(
            one_code_call(REFUND_CODE),
            toolsets=[CodeModeToolset(cm)],
            capabilities=[HandleDeferredToolCalls(handler=handler)],
        )
        done = await agent.run("Refund order A1.")
    assert asked == ["refund"]
    assert done.output == REFUNDED + " [stubs]"
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_tool_denied_passed_without_decide_is_pydantic_ais_own_denial_and_the_code_is_not_resumed() -> None:
    """pydantic-ai answers a raw `ToolDenied` itself: the model reads its message, and nothing more is called."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        agent = agent_for(cm, DENIABLE_CODE)
        paused = await agent.run("Refund order A1.")
        done = await agent.run(
            message_history=paused.all_messages(),
            deferred_tool_results=DeferredToolResults(approvals={"call_1": ToolDenied("not today")}),
        )
    assert done.output == "not today"
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_two_code_calls_of_one_response_pause_together_and_each_resumes_its_own_run() -> None:
    """Parallel `code` calls both defer; answering both makes each run's own call, once."""
    shop = make_shop()
    codes = {"call_a": 'return await tools.delete_order(order_id="A1")', "call_b": REFUND_CODE}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(
                parts=[TextPart(" | ".join(r.model_response_str().split("\n\n<")[0] for r in returns))]
            )
        return ModelResponse(parts=[ToolCallPart("code", {"code": c}, tool_call_id=i) for i, c in codes.items()])

    async with shop.code_mode() as cm:
        agent = Agent(FunctionModel(respond), toolsets=[CodeModeToolset(cm)], output_type=[str, DeferredToolRequests])
        paused = await agent.run("Delete A1 and refund A1.")
        assert isinstance(paused.output, DeferredToolRequests)
        assert {c.tool_call_id: paused.output.metadata[c.tool_call_id]["tool"] for c in paused.output.approvals} == {
            "call_a": "delete_order",
            "call_b": "refund",
        }
        answers = decide(paused.output, {"call_a": ToolDenied("keep it"), "call_b": True})
        done = await agent.run(message_history=paused.all_messages(), deferred_tool_results=answers)
    assert done.output == (
        'Traceback (most recent call last):\n  line 1, in <module>\n    return await tools.delete_order(order_id="A1")'
        "\nToolError: tools.delete_order() was not approved: keep it (line 1) | "
        'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
