"""The smolagents adapter, driven by a real `ToolCallingAgent` and a scripted `Model` that records the tool
definitions smolagents prepares for the provider (`_prepare_completion_kwargs`) on every step."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("smolagents")

from approval_shop import SECRET, make_shop
from integration_fakes import ANNOUNCED, CALL, CALLED, SEARCH, USED
from smolagents import Model, ToolCallingAgent
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole

from codemode import CodeMode, Policy
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations.smolagents import CodeModeTool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from smolagents import Tool


class ScriptedModel(Model):  # type: ignore[misc]
    """Calls `code` once per script entry, then `final_answer`; records the tools sent with each request."""

    def __init__(self, codes: Sequence[str]) -> None:
        super().__init__(model_id="scripted")
        self.calls = [("code", {"code": code}) for code in codes] + [("final_answer", {"answer": "done"})]
        self.tools_sent: list[str] = []

    def generate(
        self,
        messages: list[ChatMessage],
        stop_sequences: list[str] | None = None,
        tools_to_call_from: list[Tool] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        request = self._prepare_completion_kwargs(
            messages=messages, stop_sequences=stop_sequences, tools_to_call_from=tools_to_call_from
        )
        self.tools_sent.append(json.dumps(request["tools"]))
        name, arguments = self.calls[len(self.tools_sent) - 1]
        call = ChatMessageToolCall(
            id=f"call_{len(self.tools_sent)}",
            type="function",
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def observations(agent: ToolCallingAgent) -> list[str]:
    return [step.observations for step in agent.memory.steps if getattr(step, "observations", None)]


def test_an_agent_searches_then_calls_a_discovered_tool_with_the_same_tool_definition_every_step() -> None:
    """The agent's sync tool calls reach the process sandbox through the tool's own event-loop thread."""
    model = ScriptedModel([SEARCH, CALL])
    with CodeModeTool(CodeMode(build_demo_catalog())) as tool:
        agent = ToolCallingAgent(tools=[tool], model=model, verbosity_level=0)
        answer = agent.run("What is the weather in Berlin tomorrow?")
        cm_tool = tool._blocking.tool

    assert answer == "done"
    search, call, _final = observations(agent)
    assert search.startswith("['weather_get_forecast']\n\n<tools-discovered>")
    assert ANNOUNCED in search
    assert call.startswith(CALLED)
    assert USED in call
    assert len(model.tools_sent) == 3
    assert set(model.tools_sent) == {model.tools_sent[0]}
    sent = json.loads(model.tools_sent[0])[0]["function"]
    assert (sent["name"], sent["description"]) == (cm_tool.name, cm_tool.description)
    schema = cm_tool.input_schema
    assert sent["parameters"] == {"type": "object", "properties": schema["properties"], "required": schema["required"]}


def test_reset_starts_a_new_conversation_and_close_closes_what_the_tool_made() -> None:
    """After `reset` the tool announces again; `close` stops the `BlockingCodeMode` the tool made."""
    tool = CodeModeTool(CodeMode(build_demo_catalog(), isolation="inline"))
    try:
        first, again = tool(code=SEARCH), tool(code=SEARCH)
        tool.reset()
        after_reset = tool(code=SEARCH)
    finally:
        tool.close()

    assert ANNOUNCED in first
    assert again == "['weather_get_forecast']"
    assert ANNOUNCED in after_reset
    assert tool._blocking.closed


def test_a_call_needing_approval_is_not_made_and_the_model_reads_that_no_one_can_be_asked() -> None:
    """smolagents cannot pause a run for a person: the refund is not made, the lookup was, and the result says so."""
    shop = make_shop()
    code = 'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=150)'
    with CodeModeTool(CodeMode(shop.catalog, isolation="inline", policy=Policy(secret=SECRET))) as tool:
        text = tool(code=code)
    assert text == (
        "Stopped: `tools.refund(...)` needs a person's approval, and smolagents runs this tool, where no one can be "
        "asked, so it was not made; 1 call was made before it. Tell the user what needs approval."
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1}
