"""LangGraph's `interrupt`: a paused `code` run stops a real `StateGraph` (with `InMemorySaver`), and
`Command(resume=decision(...))` continues it. The model is langchain_core's `GenericFakeChatModel`."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("langgraph")

from approval_shop import DENIABLE_CODE, REFUND_ASKED, REFUND_CODE, REFUNDED, TWICE_CODE, make_shop
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

from codemode import ApprovalError
from codemode.integrations import BlockingCodeMode
from codemode.integrations.langchain import code_tool
from codemode.integrations.langgraph import decision

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph

CONFIG: Any = {"configurable": {"thread_id": "thread-1"}}


def call(code: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "code", "args": {"code": code}, "id": "call_1", "type": "tool_call"}])


def graph(tool: BaseTool, saver: InMemorySaver, replies: list[AIMessage]) -> CompiledStateGraph[Any]:
    """model -> tools -> model, the ReAct loop as a `StateGraph`."""
    model = GenericFakeChatModel(messages=iter(replies))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def tool_texts(state: dict[str, Any]) -> list[str]:
    return [
        str(m.content).partition("\n\n<tools-discovered>")[0] for m in state["messages"] if isinstance(m, ToolMessage)
    ]


async def test_a_paused_run_interrupts_the_graph_and_an_approval_makes_the_call_once() -> None:
    """The interrupt's value names the call and what was made; `Command(resume=decision(...))` makes the refund."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(REFUND_CODE), AIMessage("done")])
        paused = await app.ainvoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        (pause,) = paused["__interrupt__"]
        record = pause.value["codemode/approval"]
        assert pause.value == {"codemode/approval": record, "id": record["signature"][:16], **REFUND_ASKED}
        assert shop.made == {"get_order": 1, "get_order:A1": 1}

        done = await app.ainvoke(Command(resume=decision(pause.value, approved=True)), CONFIG)
    assert tool_texts(done) == [REFUNDED]
    assert "# new tool: refund [" in done["messages"][-2].content  # the resumed run announces what it found
    assert done["messages"][-1].content == "done"
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_denial_reaches_the_code_as_a_tool_error_it_handles() -> None:
    """`decision(..., approved=False, reason=...)`: the code catches the `ToolError` and prints the reason."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(DENIABLE_CODE), AIMessage("done")])
        paused = await app.ainvoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        answer = decision(paused["__interrupt__"][0].value, approved=False, reason="ask finance")
        done = await app.ainvoke(Command(resume=answer), CONFIG)
    assert tool_texts(done) == ["refund failed: tools.refund() was not approved: ask finance"]
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_an_approval_after_a_restart_resumes_from_the_checkpoint() -> None:
    """The checkpoints move to a new saver; a new shop, `CodeMode`, tool and graph resume and make the refund."""
    first, saver = make_shop(), InMemorySaver()
    async with first.code_mode() as cm:
        paused = await graph(code_tool(cm), saver, [call(REFUND_CODE)]).ainvoke(
            {"messages": [("user", "Refund A1.")]}, CONFIG
        )
    value = json.loads(json.dumps(paused["__interrupt__"][0].value))  # shown to a person elsewhere, as JSON
    restarted = InMemorySaver()  # what a persistent checkpointer would read back: the serialised checkpoints
    restarted.storage, restarted.writes, restarted.blobs = copy.deepcopy((saver.storage, saver.writes, saver.blobs))

    second = make_shop()
    async with second.code_mode() as cm:
        app = graph(code_tool(cm), restarted, [AIMessage("done")])
        done = await app.ainvoke(Command(resume=decision(value, approved=True)), CONFIG)
    assert tool_texts(done) == [REFUNDED]
    assert first.made["refund"] == 0
    assert second.made == {"refund": 1}


async def test_a_resumed_run_that_needs_a_second_approval_interrupts_again_and_replays_the_first() -> None:
    """Two deletes: two interrupts; after both approvals each delete was made once."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(TWICE_CODE), AIMessage("done")])
        state = await app.ainvoke({"messages": [("user", "Delete A1 and B2.")]}, CONFIG)
        asked = []
        while "__interrupt__" in state:
            value = state["__interrupt__"][0].value
            asked.append(value["arguments"])
            state = await app.ainvoke(Command(resume=decision(value, approved=True)), CONFIG)
    assert asked == [{"order_id": "A1"}, {"order_id": "B2"}]
    assert tool_texts(state) == ['Returned: "deleted B2"']
    assert shop.made == {"delete_order": 2}


def test_a_sync_graph_with_a_blocking_code_mode_interrupts_and_resumes() -> None:
    """`invoke` end to end: the sync tool interrupts from the graph's thread and resumes through the portal."""
    shop = make_shop()
    with BlockingCodeMode(shop.code_mode()) as blocking:
        app = graph(code_tool(blocking), InMemorySaver(), [call(REFUND_CODE), AIMessage("done")])
        paused = app.invoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        done = app.invoke(Command(resume=decision(paused["__interrupt__"][0].value, approved=True)), CONFIG)
    assert tool_texts(done) == [REFUNDED]
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_resume_value_that_is_not_a_decision_raises_a_clear_error_and_calls_nothing() -> None:
    """`Command(resume=True)` carries no record: an `ApprovalError` says how to resume."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(REFUND_CODE), AIMessage("done")])
        await app.ainvoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        with pytest.raises(ApprovalError) as raised:
            await app.ainvoke(Command(resume=True), CONFIG)
    assert "decision(interrupt.value, approved=True)" in str(raised.value)
    assert shop.made["refund"] == 0


async def test_outside_a_graph_the_call_is_not_made_and_the_model_reads_that_no_one_can_be_asked() -> None:
    """A plain LangChain `ainvoke` has no one to ask: the tool result says so, and nothing needing approval ran."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        message = await code_tool(cm).ainvoke(call(REFUND_CODE).tool_calls[0])
    assert message.content == (
        "Stopped: `tools.refund(...)` needs a person's approval, and this tool runs outside a LangGraph graph, "
        "where no one can be asked, so it was not made; 1 call was made before it. Tell the user what needs "
        "approval."
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1}
