"""LangGraph's `interrupt`: a paused `code` run stops a real `StateGraph` (with `InMemorySaver`), and
`Command(resume=decision(...))` continues it. The model is langchain_core's `GenericFakeChatModel`."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("langgraph")

from approval_shop import SECRET, make_shop
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

from codemode import ApprovalError, CodeMode, Policy
from codemode.integrations import BlockingCodeMode
from codemode.integrations.langchain import code_tool
from codemode.integrations.langgraph import decision

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph

CODE = 'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
DENIABLE = """
order = await tools.get_order(order_id="A1")
try:
    await tools.refund(order_id="A1", amount=order["total"])
except ToolError as error:
    print("refund failed:", error)
"""
TWICE = 'await tools.delete_order(order_id="A1")\nreturn await tools.delete_order(order_id="B2")'
REFUNDED = 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
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


def policy() -> Policy:
    return Policy(secret=SECRET)


async def test_a_paused_run_interrupts_the_graph_and_an_approval_makes_the_call_once() -> None:
    """The interrupt's value names the call and what was made; `Command(resume=decision(...))` makes the refund."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(CODE), AIMessage("done")])
        paused = await app.ainvoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        (pause,) = paused["__interrupt__"]
        shown = {key: value for key, value in pause.value.items() if key != "codemode/approval"}
        assert shown == {
            "id": pause.value["codemode/approval"]["signature"][:16],
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

        done = await app.ainvoke(Command(resume=decision(pause.value, approved=True)), CONFIG)
    assert tool_texts(done) == [REFUNDED]
    assert "# new tool: refund [" in done["messages"][-2].content  # the resumed run announces what it found
    assert done["messages"][-1].content == "done"
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_denial_reaches_the_code_as_a_tool_error_it_handles() -> None:
    """`decision(..., approved=False, reason=...)`: the code catches the `ToolError` and prints the reason."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(DENIABLE), AIMessage("done")])
        paused = await app.ainvoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        answer = decision(paused["__interrupt__"][0].value, approved=False, reason="ask finance")
        done = await app.ainvoke(Command(resume=answer), CONFIG)
    assert tool_texts(done) == ["refund failed: tools.refund() was not approved: ask finance"]
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_an_approval_after_a_restart_resumes_from_the_checkpoint() -> None:
    """The checkpoints move to a new saver; a new shop, `CodeMode`, tool and graph resume and make the refund."""
    first, saver = make_shop(), InMemorySaver()
    async with CodeMode(first.catalog, isolation="inline", policy=policy()) as cm:
        paused = await graph(code_tool(cm), saver, [call(CODE)]).ainvoke({"messages": [("user", "Refund A1.")]}, CONFIG)
    value = json.loads(json.dumps(paused["__interrupt__"][0].value))  # shown to a person elsewhere, as JSON
    restarted = InMemorySaver()  # what a persistent checkpointer would read back: the serialised checkpoints
    restarted.storage, restarted.writes, restarted.blobs = copy.deepcopy((saver.storage, saver.writes, saver.blobs))

    second = make_shop()
    async with CodeMode(second.catalog, isolation="inline", policy=policy()) as cm:
        app = graph(code_tool(cm), restarted, [AIMessage("done")])
        done = await app.ainvoke(Command(resume=decision(value, approved=True)), CONFIG)
    assert tool_texts(done) == [REFUNDED]
    assert first.made["refund"] == 0
    assert second.made == {"refund": 1}


async def test_a_resumed_run_that_needs_a_second_approval_interrupts_again_and_replays_the_first() -> None:
    """Two deletes: two interrupts; after both approvals each delete was made once."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(TWICE), AIMessage("done")])
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
    with BlockingCodeMode(CodeMode(shop.catalog, isolation="inline", policy=policy())) as blocking:
        app = graph(code_tool(blocking), InMemorySaver(), [call(CODE), AIMessage("done")])
        paused = app.invoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        done = app.invoke(Command(resume=decision(paused["__interrupt__"][0].value, approved=True)), CONFIG)
    assert tool_texts(done) == [REFUNDED]
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_resume_value_that_is_not_a_decision_raises_a_clear_error_and_calls_nothing() -> None:
    """`Command(resume=True)` carries no record: an `ApprovalError` says how to resume."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        app = graph(code_tool(cm), InMemorySaver(), [call(CODE), AIMessage("done")])
        await app.ainvoke({"messages": [("user", "Refund order A1.")]}, CONFIG)
        with pytest.raises(ApprovalError) as raised:
            await app.ainvoke(Command(resume=True), CONFIG)
    assert "decision(interrupt.value, approved=True)" in str(raised.value)
    assert shop.made["refund"] == 0


async def test_outside_a_graph_the_call_is_not_made_and_the_model_reads_that_no_one_can_be_asked() -> None:
    """A plain LangChain `ainvoke` has no one to ask: the tool result says so, and nothing needing approval ran."""
    shop = make_shop()
    async with CodeMode(shop.catalog, isolation="inline", policy=policy()) as cm:
        message = await code_tool(cm).ainvoke(call(CODE).tool_calls[0])
    assert message.content == (
        "Stopped: `tools.refund(...)` needs a person's approval, and this tool runs outside a LangGraph graph, "
        "where no one can be asked, so it was not made; 1 call was made before it. Tell the user what needs "
        "approval."
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1}
