"""The LangChain adapter: a scripted chat model (langchain_core's `GenericFakeChatModel`) bound to the tool with
`bind_tools`, which records the tool definitions LangChain formats for the provider on every call."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("langchain_core")

import anyio.to_thread
from integration_fakes import ANNOUNCED, ARGUMENT_MISTAKES, CALL, CALLED, SEARCH, USED
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations import BlockingCodeMode
from codemode.integrations.langchain import code_tool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.outputs import ChatResult
    from langchain_core.tools import BaseTool


class ScriptedChatModel(GenericFakeChatModel):
    """Replies with the scripted messages; `bind_tools` formats tools as a provider integration does."""

    tools_sent: list[str]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.tools_sent.append(json.dumps(kwargs["tools"]))
        return super()._generate(messages, stop, run_manager, **kwargs)


def scripted(codes: Sequence[str]) -> ScriptedChatModel:
    calls = [
        AIMessage("", tool_calls=[{"name": "code", "args": {"code": c}, "id": f"call_{i}"}])
        for i, c in enumerate(codes)
    ]
    return ScriptedChatModel(messages=iter([*calls, AIMessage("done")]), tools_sent=[])


async def run_agent(model: ScriptedChatModel, tool: BaseTool, prompt: str) -> list[BaseMessage]:
    """The tool-calling loop LangGraph's prebuilt agent runs: model, tool messages, model, ... until no calls."""
    bound = model.bind_tools([tool])
    history: list[BaseMessage] = [HumanMessage(prompt)]
    while True:
        reply = await bound.ainvoke(history)
        history.append(reply)
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return history
        history += [await tool.ainvoke({**call, "type": "tool_call"}) for call in reply.tool_calls]


def tool_messages(history: Sequence[BaseMessage]) -> list[str]:
    return [str(message.content) for message in history if isinstance(message, ToolMessage)]


async def test_an_agent_searches_then_calls_a_discovered_tool_with_the_same_tool_definition_every_step(
    code_mode: CodeMode,
) -> None:
    """Async: the tool runs in the caller's event loop; the formatted definition is `cm.tool` at every step."""
    model = scripted([SEARCH, CALL])

    history = await run_agent(model, code_tool(code_mode), "What is the weather in Berlin tomorrow?")

    assert history[-1].content == "done"
    search, call = tool_messages(history)
    assert search.startswith("['weather_get_forecast']\n\n<tools-discovered>")
    assert ANNOUNCED in search
    assert call.startswith(CALLED)
    assert USED in call
    assert len(model.tools_sent) == 3
    assert set(model.tools_sent) == {model.tools_sent[0]}
    tool = code_mode.tool
    expected = {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
    assert model.tools_sent[0] == json.dumps([{"type": "function", "function": expected}])


def test_a_blocking_code_mode_serves_sync_invoke_with_one_state_per_langgraph_thread() -> None:
    """Sync: a `BlockingCodeMode` (process sandbox) runs the code; each LangGraph thread is its own conversation."""
    with BlockingCodeMode(CodeMode(build_demo_catalog())) as blocking:
        tool = code_tool(blocking)
        first = tool.invoke({"code": SEARCH}, config={"configurable": {"thread_id": "a"}})
        again = tool.invoke({"code": SEARCH}, config={"configurable": {"thread_id": "a"}})
        other = tool.invoke({"code": SEARCH}, config={"configurable": {"thread_id": "b"}})
        unthreaded = tool.invoke({"code": CALL})

    assert ANNOUNCED in first
    assert again == "['weather_get_forecast']"
    assert ANNOUNCED in other
    assert unthreaded.startswith('Returned: "light snow"\n\n<tools-discovered>')
    assert blocking.closed


async def test_sync_invoke_of_an_async_code_mode_works_from_a_worker_thread_and_explains_itself_elsewhere(
    code_mode: CodeMode,
) -> None:
    """`invoke` reaches the entered `CodeMode` from a worker thread of its loop, and says what to do otherwise."""
    tool = code_tool(code_mode)

    assert await anyio.to_thread.run_sync(tool.invoke, {"code": "return 6 * 7"}) == "Returned: 42"
    with pytest.raises(RuntimeError) as raised:
        tool.invoke({"code": "return 1"})
    assert "BlockingCodeMode" in str(raised.value)


@pytest.mark.parametrize(("arguments", "expected"), ARGUMENT_MISTAKES)
async def test_ainvoke_answers_a_code_argument_mistake_as_the_other_adapters_do(
    code_mode: CodeMode, arguments: dict[str, object], expected: str
) -> None:
    """The async path: the same answers from `ainvoke` with a tool call."""
    message = await code_tool(code_mode).ainvoke({"name": "code", "args": arguments, "id": "c1", "type": "tool_call"})
    assert message.content == expected
