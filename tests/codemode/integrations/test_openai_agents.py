"""The OpenAI Agents SDK adapter, driven by the SDK's real `OpenAIResponsesModel`: the official `openai` client
talks to an `httpx2.MockTransport` that plays the Responses API, so the test sees the request bodies as sent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("agents")

import httpx2
from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled
from integration_fakes import ANNOUNCED, ARGUMENT_MISTAKES, CALL, CALLED, MISSING, SEARCH, USED
from openai import AsyncOpenAI

from codemode.integrations.openai_agents import code_tool

if TYPE_CHECKING:
    from codemode import CodeMode

set_tracing_disabled(True)


@dataclass
class ResponsesServer:
    """Replies to each request with the next scripted `code` call, then a text answer; records the bodies."""

    codes: list[str]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    arguments: list[dict[str, object]] = field(default_factory=list)
    """The arguments of each `code` call, when a test sends other arguments than `{"code": ...}`."""
    raw: str | None = None
    """The first call's arguments as sent, when a test sends text that is not JSON."""

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        step = len(self.bodies) - 1
        calls = self.arguments or [{"code": code} for code in self.codes]
        if step < len(calls):
            output: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{step}",
                "call_id": f"call_{step}",
                "name": "code",
                "arguments": self.raw if self.raw is not None and step == 0 else json.dumps(calls[step]),
                "status": "completed",
            }
        else:
            text = {"type": "output_text", "text": "done", "annotations": [], "logprobs": []}
            output = {"type": "message", "id": "msg", "status": "completed", "role": "assistant", "content": [text]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5}
        usage |= {"output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        return httpx2.Response(
            200,
            json={
                "id": f"resp_{step}",
                "object": "response",
                "created_at": 1_760_000_000,
                "status": "completed",
                "model": "gpt-test",
                "output": [output],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "error": None,
                "incomplete_details": None,
                "usage": usage,
            },
        )

    def agent(self, cm: CodeMode) -> Agent[Any]:
        client = AsyncOpenAI(
            api_key="test",
            base_url="http://test/v1",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self)),
        )
        model = OpenAIResponsesModel("gpt-test", openai_client=client)
        return Agent(name="assistant", instructions="Use `code`.", model=model, tools=[code_tool(cm)])

    def tool_outputs(self, body: int) -> list[str]:
        return [item["output"] for item in self.bodies[body]["input"] if item.get("type") == "function_call_output"]


async def test_an_agent_searches_then_calls_a_discovered_tool_with_the_same_tool_definition_every_request(
    code_mode: CodeMode,
) -> None:
    """Through the SDK's own model, the `code` definition sent is `cm.tool` and identical in every request."""
    server = ResponsesServer([SEARCH, CALL])

    result = await Runner.run(server.agent(code_mode), "What is the weather in Berlin tomorrow?")

    assert result.final_output == "done"
    assert len(server.bodies) == 3
    search, call = server.tool_outputs(2)
    assert search.startswith("['weather_get_forecast']\n\n<tools-discovered>")
    assert ANNOUNCED in search
    assert call.startswith(CALLED)
    assert USED in call
    tools = [json.dumps(body["tools"]) for body in server.bodies]
    assert set(tools) == {tools[0]}
    (sent,) = server.bodies[0]["tools"]
    assert (sent["name"], sent["description"]) == (code_mode.tool.name, code_mode.tool.description)
    assert json.dumps(sent["parameters"]) == json.dumps(code_mode.tool.input_schema)


async def test_a_conversation_continued_from_its_input_list_announces_nothing_again(code_mode: CodeMode) -> None:
    """Discovery state is rebuilt from the run's input, so a continued conversation does not re-announce."""
    first_server, second_server = ResponsesServer([SEARCH]), ResponsesServer([SEARCH])
    first = await Runner.run(first_server.agent(code_mode), "Find a forecast tool.")
    history = [*first.to_input_list(), {"role": "user", "content": "Search again."}]

    await Runner.run(second_server.agent(code_mode), history)

    assert ANNOUNCED in first_server.tool_outputs(1)[0]
    assert second_server.tool_outputs(1)[-1] == "['weather_get_forecast']"


@pytest.mark.parametrize(("arguments", "expected"), ARGUMENT_MISTAKES)
async def test_a_code_argument_mistake_is_answered_as_the_other_adapters_do(
    code_mode: CodeMode, arguments: dict[str, object], expected: str
) -> None:
    """The arguments as the Responses API sent them: no `code` string gets `MISSING_CODE`; extra keys are ignored."""
    server = ResponsesServer([], arguments=[arguments])

    result = await Runner.run(server.agent(code_mode), "Print one.")

    assert (result.final_output, server.tool_outputs(1)) == ("done", [expected])


async def test_arguments_that_are_not_json_get_a_tool_result_not_an_approval_interruption(code_mode: CodeMode) -> None:
    """With no tool needing approval, the SDK's `needs_approval` is off, so the model reads how to call `code`."""
    server = ResponsesServer([], arguments=[{}], raw='{"code": "print(1)')

    result = await Runner.run(server.agent(code_mode), "Print one.")

    assert (result.final_output, result.interruptions) == ("done", [])
    assert server.tool_outputs(1) == [MISSING]


async def test_the_tool_asks_about_approval_once_the_catalog_has_a_tool_that_needs_it(code_mode: CodeMode) -> None:
    """`needs_approval` follows the catalog: off for a catalog without approvals, the run-the-code check after."""
    tool = code_tool(code_mode)
    assert tool.needs_approval is False
    code_mode.catalog.add(name="refund", description="Refund.", parameters={"type": "object"}, approval=True)
    assert callable(tool.needs_approval)
