"""The Agents SDK's interruptions: a paused `code` run interrupts the agent run, and `RunState` resumes it.

Driven by the SDK's real `OpenAIResponsesModel`; the official `openai` client talks to an `httpx2.MockTransport`
that plays the Responses API (one `code` call, then an answer quoting the tool output it was sent).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("agents")

import httpx2
from agents import Agent, OpenAIResponsesModel, Runner, RunState, set_tracing_disabled
from approval_shop import DENIABLE_CODE, REFUND_ASKED, REFUND_CODE, REFUNDED, TWICE_CODE, make_shop
from openai import AsyncOpenAI

from codemode.integrations.openai_agents import CodeModeTool, code_tool

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from approval_shop import Shop

    from codemode import CodeMode

set_tracing_disabled(True)


@dataclass
class ResponsesServer:
    """Answers the first request with a `code` call, later ones with the text of the last tool output sent."""

    code: str | dict[str, str]
    """The code of the one `code` call (`call_1`), or of several parallel calls by call id."""
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        outputs = [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]
        codes = self.code if isinstance(self.code, dict) else {"call_1": self.code}
        items: list[dict[str, Any]] = []
        if not outputs:
            for call_id, code in codes.items():
                item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": "code"}
                items.append(item | {"arguments": json.dumps({"code": code}), "status": "completed"})
        else:
            texts = [output.partition("\n\n<tools-discovered>") for output in outputs[-len(codes) :]]
            text = " | ".join(text + (" [stubs]" if stubs else "") for text, _, stubs in texts)
            content = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            items.append({"type": "message", "id": "msg", "status": "completed", "role": "assistant"})
            items[0]["content"] = [content]
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5}
        usage |= {"output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        response = {"id": f"resp_{len(self.bodies)}", "object": "response", "created_at": 1_760_000_000}
        response |= {"status": "completed", "model": "gpt-test", "output": items, "parallel_tool_calls": True}
        response |= {"tool_choice": "auto", "tools": [], "error": None, "incomplete_details": None, "usage": usage}
        return httpx2.Response(200, json=response)

    def agent(self, tool: CodeModeTool) -> Agent[Any]:
        client = AsyncOpenAI(
            api_key="test",
            base_url="http://test/v1",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self)),
        )
        model = OpenAIResponsesModel("gpt-test", openai_client=client)
        return Agent(name="assistant", instructions="Use `code`.", model=model, tools=[tool])


@pytest.fixture
def shop() -> Shop:
    return make_shop()


@pytest.fixture
async def cm(shop: Shop) -> AsyncIterator[CodeMode]:
    async with shop.code_mode() as code_mode:
        yield code_mode


async def test_a_paused_run_interrupts_the_agent_run_and_an_approval_makes_the_call_once(
    shop: Shop, cm: CodeMode
) -> None:
    """`result.interruptions` holds the `code` call; `decide(approved=True)` and `Runner.run(agent, state)` finish."""
    server, tool = ResponsesServer(REFUND_CODE), code_tool(cm)
    agent = server.agent(tool)
    paused = await Runner.run(agent, "Refund order A1.")
    (item,) = paused.interruptions
    shown = tool.paused(item)
    assert shown is not None
    record = shown["codemode/approval"]
    assert shown == {"codemode/approval": record, "id": record["signature"][:16], **REFUND_ASKED}
    assert shop.made == {"get_order": 1, "get_order:A1": 1}

    state = paused.to_state()
    tool.decide(state, item, approved=True)
    done = await Runner.run(agent, state)
    assert done.final_output == REFUNDED + " [stubs]"
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
    tools = {json.dumps(body["tools"]) for body in server.bodies}
    assert len(server.bodies) == 2
    assert len(tools) == 1


async def test_a_denial_reaches_the_code_as_a_tool_error_it_handles(shop: Shop, cm: CodeMode) -> None:
    """`decide(approved=False, reason=...)`: the code catches the `ToolError`, and the model reads its output."""
    server, tool = ResponsesServer(DENIABLE_CODE), code_tool(cm)
    agent = server.agent(tool)
    paused = await Runner.run(agent, "Refund order A1.")
    state = paused.to_state()
    tool.decide(state, paused.interruptions[0], approved=False, reason="ask finance")
    done = await Runner.run(agent, state)
    assert done.final_output == "refund failed: tools.refund() was not approved: ask finance [stubs]"
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_an_approval_after_a_restart_resumes_from_the_saved_run_state_and_paused_run() -> None:
    """`RunState.to_string()` and `paused(item)` saved; a new shop, `CodeMode`, tool and agent make the refund."""
    first = make_shop()
    async with first.code_mode() as cm:
        tool = code_tool(cm)
        paused = await Runner.run(ResponsesServer(REFUND_CODE).agent(tool), "Refund order A1.")
        saved = json.dumps({"run": paused.to_state().to_string(), "paused": tool.paused(paused.interruptions[0])})

    second = make_shop()
    async with second.code_mode() as cm:
        tool = code_tool(cm)
        agent = ResponsesServer(REFUND_CODE).agent(tool)
        data = json.loads(saved)
        state = await RunState.from_string(agent, data["run"])
        (item,) = state.get_interruptions()
        tool.decide(state, item, approved=True, paused=data["paused"])
        done = await Runner.run(agent, state)
    assert done.final_output == REFUNDED + " [stubs]"
    assert first.made["refund"] == 0
    assert second.made == {"refund": 1}


async def test_the_sdks_own_rejection_answers_the_model_and_does_not_resume_the_code(shop: Shop, cm: CodeMode) -> None:
    """`state.reject(item, rejection_message=...)` is the SDK's denial: the model reads the message, nothing runs."""
    server, tool = ResponsesServer(DENIABLE_CODE), code_tool(cm)
    agent = server.agent(tool)
    paused = await Runner.run(agent, "Refund order A1.")
    state = paused.to_state()
    state.reject(paused.interruptions[0], rejection_message="not today")
    done = await Runner.run(agent, state)
    assert done.final_output == "not today"
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_a_second_approval_in_a_resumed_run_is_not_made_and_the_model_reads_so(shop: Shop, cm: CodeMode) -> None:
    """The SDK interrupts only before an invocation: the second delete waits on nobody, so the model is told."""
    server, tool = ResponsesServer(TWICE_CODE), code_tool(cm)
    agent = server.agent(tool)
    paused = await Runner.run(agent, "Delete A1 and B2.")
    state = paused.to_state()
    tool.decide(state, paused.interruptions[0], approved=True)
    done = await Runner.run(agent, state)
    assert done.final_output == (
        "Stopped: `tools.delete_order(...)` needs a person's approval too, and the Agents SDK asks only before a "
        "`code` call runs, so it was not made. Calls made before it, in order: delete_order: ok. Call `code` again "
        "to ask for it."
    )
    assert shop.made == {"delete_order": 1}


async def test_a_run_that_needs_no_approval_runs_the_code_once(shop: Shop, cm: CodeMode) -> None:
    """`needs_approval` runs the code and the invocation returns that run's result: each handler is called once."""
    server = ResponsesServer('return await tools.get_order(order_id="A1")')
    done = await Runner.run(server.agent(code_tool(cm)), "Look up A1.")
    assert done.interruptions == []
    assert done.final_output.startswith('Returned: {\n "order_id": "A1",')
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_two_code_calls_of_one_response_interrupt_together_and_each_resumes_its_own_run(
    shop: Shop, cm: CodeMode
) -> None:
    """Parallel `code` calls give two interruptions; a denial and an approval each reach their own run."""
    codes = {"call_a": 'return await tools.delete_order(order_id="A1")', "call_b": REFUND_CODE}
    server, tool = ResponsesServer(codes), code_tool(cm)
    agent = server.agent(tool)
    paused = await Runner.run(agent, "Delete A1 and refund A1.")
    shown = {item.call_id: (tool.paused(item) or {}).get("tool") for item in paused.interruptions}
    assert shown == {"call_a": "delete_order", "call_b": "refund"}
    state = paused.to_state()
    for item in paused.interruptions:
        tool.decide(state, item, approved=item.call_id == "call_b", reason="keep it")
    done = await Runner.run(agent, state)
    assert done.final_output == (
        'Traceback (most recent call last):\n  line 1, in <module>\n    return await tools.delete_order(order_id="A1")'
        "\nToolError: tools.delete_order() was not approved: keep it (line 1) [stubs] | " + REFUNDED + " [stubs]"
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
