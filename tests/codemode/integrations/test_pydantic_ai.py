from __future__ import annotations

import json
from typing import TYPE_CHECKING, Self

import pytest

pytest.importorskip("pydantic_ai")

from integration_fakes import ANNOUNCED, ARGUMENT_MISTAKES, CALL, CALLED, SEARCH, USED
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations.pydantic_ai import CodeModeToolset

if TYPE_CHECKING:
    from collections.abc import Sequence


class ScriptedModel:
    """A `FunctionModel` function: one `code` call per script entry, then a text answer; records the tools sent."""

    def __init__(self, codes: Sequence[str]) -> None:
        self.codes = list(codes)
        self.tools_sent: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools_sent.append(
            json.dumps([[t.name, t.description, t.parameters_json_schema] for t in info.function_tools])
        )
        step = len(self.tools_sent) - 1
        if step < len(self.codes):
            return ModelResponse(parts=[ToolCallPart("code", {"code": self.codes[step]}, tool_call_id=f"call_{step}")])
        return ModelResponse(parts=[TextPart("done")])


def tool_returns(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        part.model_response_str()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


async def test_an_agent_searches_then_calls_a_discovered_tool_with_the_same_tool_definition_every_step(
    code_mode: CodeMode,
) -> None:
    """The agent searches, reads the announcement in the tool result, calls the tool; `code` never changes."""
    model = ScriptedModel([SEARCH, CALL])
    agent = Agent(FunctionModel(model), toolsets=[CodeModeToolset(code_mode)])

    result = await agent.run("What is the weather in Berlin tomorrow?")

    assert result.output == "done"
    search, call = tool_returns(result.all_messages())
    assert search.startswith("['weather_get_forecast']\n\n<tools-discovered>")
    assert ANNOUNCED in search
    assert call.startswith(CALLED)
    assert USED in call
    assert len(model.tools_sent) == 3
    assert set(model.tools_sent) == {model.tools_sent[0]}
    tool = code_mode.tool
    assert model.tools_sent[0] == json.dumps([[tool.name, tool.description, tool.input_schema]])


async def test_a_conversation_continued_with_message_history_announces_nothing_again(code_mode: CodeMode) -> None:
    """Discovery state is rebuilt from the run's messages, so a later run does not re-announce a tool."""
    toolset = CodeModeToolset(code_mode)
    first = await Agent(FunctionModel(ScriptedModel([SEARCH])), toolsets=[toolset]).run("Find a forecast tool.")
    second = await Agent(FunctionModel(ScriptedModel([SEARCH])), toolsets=[toolset]).run(
        "Search again.", message_history=first.all_messages()
    )
    fresh = await Agent(FunctionModel(ScriptedModel([SEARCH])), toolsets=[toolset]).run("A new conversation.")

    assert ANNOUNCED in tool_returns(first.new_messages())[0]
    assert tool_returns(second.new_messages()) == ["['weather_get_forecast']"]
    assert ANNOUNCED in tool_returns(fresh.new_messages())[0]


class CountingCodeMode(CodeMode):
    """A `CodeMode` that counts how often it is entered and closed."""

    entered = 0
    closed = 0

    async def __aenter__(self) -> Self:
        self.entered += 1
        return await super().__aenter__()

    async def aclose(self) -> None:
        self.closed += 1
        await super().aclose()


async def test_an_owning_toolset_enters_the_code_mode_once_for_the_agent_and_closes_it_after() -> None:
    """With `own=True` the toolset enters the `CodeMode` when the agent does, once for all its runs."""
    cm = CountingCodeMode(build_demo_catalog(), isolation="inline")
    agent = Agent(FunctionModel(ScriptedModel([CALL, CALL])), toolsets=[CodeModeToolset(cm, own=True)])

    async with agent:
        result = await agent.run("Weather in Berlin?")
        assert (cm.entered, cm.closed) == (1, 0)

    assert (cm.entered, cm.closed) == (1, 1)
    assert [text.split("\n")[0] for text in tool_returns(result.all_messages())] == ['Returned: "light snow"'] * 2


@pytest.mark.parametrize(("arguments", "expected"), ARGUMENT_MISTAKES)
async def test_a_code_argument_mistake_is_answered_as_the_other_adapters_do(
    code_mode: CodeMode, arguments: dict[str, object], expected: str
) -> None:
    """No `code` string: `MISSING_CODE` as the tool's answer (no retry spent); a key beside `code` is ignored."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("code", arguments, tool_call_id="call_1")])
        return ModelResponse(parts=[TextPart("done")])

    result = await Agent(FunctionModel(model), toolsets=[CodeModeToolset(code_mode)]).run("Print one.")

    assert (result.output, tool_returns(result.all_messages())) == ("done", [expected])
