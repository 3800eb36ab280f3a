"""Approvals inside agent frameworks, offline: a refund over 100 stops each framework's run its own way.

Run: python examples/framework_approvals.py
Needs: pip install -e ".[pydantic-ai,openai-agents,langgraph]" (a framework that is missing is skipped)

The same code runs in each: it looks an order up, then refunds it. The refund needs a person's approval, so the
run stops the framework's way (pydantic-ai: `DeferredToolRequests`; Agents SDK: `result.interruptions`;
LangGraph: `interrupt`), what the person sees is printed, the pause goes through JSON as it would to another
process, and a decision resumes it: the order lookup is replayed from the record, the refund made once.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import anyio

from codemode import Catalog, CodeMode, Policy

SECRET = b"use a long random key from your secret store"
CODE = 'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
catalog = Catalog()


@catalog.tool
async def get_order(order_id: str) -> dict[str, object]:
    """Look up an order."""
    print(f"    (get_order ran for {order_id})")
    return {"order_id": order_id, "total": 240.0}


@catalog.tool(approval=lambda args: args["amount"] > 100)
async def refund(order_id: str, amount: float) -> dict[str, object]:
    """Refund part or all of an order."""
    print(f"    (refund ran: {amount} for {order_id})")
    return {"order_id": order_id, "refunded": amount}


def show(paused: dict[str, Any]) -> None:
    made = [call["tool"] for call in paused["calls"]]
    print(f"  a person is asked about {paused['tool']}({paused['arguments']}), after {made}")


async def with_pydantic_ai(cm: CodeMode) -> None:
    from pydantic import TypeAdapter
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from codemode.integrations.pydantic_ai import CodeModeToolset, decide

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("code", {"code": CODE}, tool_call_id="call_1")])
        return ModelResponse(parts=[TextPart("(scripted) Refund done.")])

    agent = Agent(FunctionModel(model), toolsets=[CodeModeToolset(cm)], output_type=[str, DeferredToolRequests])
    result = await agent.run("Refund order A1.")
    assert isinstance(result.output, DeferredToolRequests)
    show(result.output.metadata["call_1"])
    saved = TypeAdapter(DeferredToolRequests).dump_json(result.output), result.all_messages_json()
    requests = TypeAdapter(DeferredToolRequests).validate_json(saved[0])
    done = await agent.run(
        message_history=ModelMessagesTypeAdapter.validate_json(saved[1]),
        deferred_tool_results=decide(requests, {"call_1": True}),
    )
    print("  answer:", done.output)


async def with_openai_agents(cm: CodeMode) -> None:
    from agents import Agent, Runner, RunState, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    from codemode.integrations.openai_agents import code_tool

    set_tracing_disabled(True)
    model = ScriptedModel(
        [[function_call("code", {"code": CODE}, call_id="call_1")], [assistant_message("(scripted) Refund done.")]]
    )
    tool = code_tool(cm)
    agent = Agent(name="shop", instructions="Use `code`.", model=model, tools=[tool])
    result = await Runner.run(agent, "Refund order A1.")
    (item,) = result.interruptions
    paused = tool.paused(item)
    assert paused is not None
    show(paused)
    saved = json.dumps({"run": result.to_state().to_string(), "paused": paused})
    data = json.loads(saved)
    state = await RunState.from_string(agent, data["run"])
    tool.decide(state, state.get_interruptions()[0], approved=True, paused=data["paused"])
    done = await Runner.run(agent, state)
    print("  answer:", done.final_output)


async def with_langgraph(cm: CodeMode) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import Command

    from codemode.integrations.langchain import code_tool
    from codemode.integrations.langgraph import decision

    call = {"name": "code", "args": {"code": CODE}, "id": "call_1", "type": "tool_call"}
    model = GenericFakeChatModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("(scripted) Done.")]))
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", ToolNode([code_tool(cm)]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "order-A1"}}
    state = await graph.ainvoke({"messages": [("user", "Refund order A1.")]}, config)
    (pause,) = state["__interrupt__"]
    value = json.loads(json.dumps(pause.value))
    show(value)
    done = await graph.ainvoke(Command(resume=decision(value, approved=True)), config)
    print("  answer:", done["messages"][-1].content)


async def main() -> None:
    runs = [("pydantic_ai", with_pydantic_ai), ("agents", with_openai_agents), ("langgraph", with_langgraph)]
    async with CodeMode(catalog, isolation="inline", policy=Policy(secret=SECRET)) as cm:
        for module, run in runs:
            if importlib.util.find_spec(module) is None:
                print(f"{module}: not installed, skipped")
                continue
            print(f"{module}:")
            await run(cm)


if __name__ == "__main__":
    anyio.run(main)
