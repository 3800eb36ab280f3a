"""LangGraph's own `ToolNode` in a `StateGraph` calling the `code` tool with the arguments models get wrong."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")

from integration_fakes import ARGUMENT_MISTAKES
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from codemode import Catalog, CodeMode
from codemode.integrations import BlockingCodeMode
from codemode.integrations.langchain import code_tool


@pytest.mark.parametrize(("arguments", "expected"), ARGUMENT_MISTAKES)
def test_langgraphs_tool_node_answers_a_misspelt_missing_or_non_string_code_argument_with_how_to_call_it(
    arguments: dict[str, object], expected: str
) -> None:
    """Through a `StateGraph` with LangGraph's own `ToolNode`: a `ToolMessage` the model can act on, never a crash."""
    graph = StateGraph(MessagesState)
    with BlockingCodeMode(CodeMode(Catalog(), isolation="inline")) as blocking:
        graph.add_node("tools", ToolNode([code_tool(blocking)]))
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        call = AIMessage("", tool_calls=[{"name": "code", "args": arguments, "id": "call_1", "type": "tool_call"}])
        out = graph.compile().invoke({"messages": [call]})
    answer = out["messages"][-1]
    assert (type(answer), answer.content) == (ToolMessage, expected)
