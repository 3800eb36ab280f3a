"""A LangChain tool-calling loop with the whole 300-tool demo catalog behind one `code` tool, async then sync.

Run: python examples/langchain_agent.py      offline: a scripted chat model (langchain_core's fake) plays the model
     OPENAI_API_KEY=... python examples/langchain_agent.py      a real model through `langchain-openai`, if installed
     (CODEMODE_MODEL, default gpt-5-mini)
Needs: pip install -e ".[langchain]"
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import anyio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations import BlockingCodeMode
from codemode.integrations.langchain import code_tool

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

QUESTION = "Which Berlin customers have overdue invoices, and what is the weather in Berlin tomorrow?"
SCRIPT = [
    """\
for q in ["list customers", "list invoices", "weather forecast"]:
    print(q, "->", [t["name"] for t in await tools.search(q, max_results=2)])
""",
    """\
import asyncio
customers, invoices, forecast = await asyncio.gather(
    tools.crm_list_customers(city="Berlin"),
    tools.billing_list_invoices(status="overdue"),
    tools.weather_get_forecast(city="Berlin", days=1),
)
ids = {c["id"]: c["name"] for c in customers}
overdue = sorted({ids[i["customer_id"]] for i in invoices if i["customer_id"] in ids})
return {"overdue": overdue, "weather": forecast["days"][0]["summary"]}
""",
]


class ScriptedChatModel(GenericFakeChatModel):
    """The fake chat model, with `bind_tools` as provider integrations have it."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)


def chat_model() -> BaseChatModel:
    if os.environ.get("OPENAI_API_KEY"):
        try:
            from langchain_openai import ChatOpenAI  # type: ignore[import-not-found]
        except ImportError:
            print("(OPENAI_API_KEY is set but langchain-openai is not installed: running offline)")
        else:
            model: BaseChatModel = ChatOpenAI(model=os.environ.get("CODEMODE_MODEL", "gpt-5-mini"))
            return model
    calls = [
        AIMessage("", tool_calls=[{"name": "code", "args": {"code": c}, "id": f"call_{n}"}])
        for n, c in enumerate(SCRIPT)
    ]
    return ScriptedChatModel(messages=iter([*calls, AIMessage("(scripted) See the last tool result.")]))


async def main() -> None:
    async with CodeMode(build_demo_catalog()) as cm:
        tool = code_tool(cm)  # async: runs in this event loop
        model = chat_model().bind_tools([tool])
        history: list[BaseMessage] = [HumanMessage(QUESTION)]
        while True:
            reply = await model.ainvoke(history)
            history.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                break
            history += [await tool.ainvoke({**call, "type": "tool_call"}) for call in reply.tool_calls]
        for message in history:
            print(f"--- {message.type}\n{message.content or getattr(message, 'tool_calls', '')}")


def sync_use() -> None:
    """From sync code: a `BlockingCodeMode` runs the `CodeMode` in its own event-loop thread."""
    with BlockingCodeMode(CodeMode(build_demo_catalog())) as blocking:
        tool = code_tool(blocking)
        print("=== sync invoke:", tool.invoke({"code": 'return await tools.weather_get_forecast(city="Berlin")'})[:80])


if __name__ == "__main__":
    anyio.run(main)
    sync_use()
