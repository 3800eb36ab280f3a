"""A pydantic-ai agent with the whole 300-tool demo catalog behind one `code` tool.

Run: python examples/pydantic_ai_agent.py      offline: a scripted `FunctionModel` plays the model
     OPENAI_API_KEY=... python examples/pydantic_ai_agent.py      a real model (CODEMODE_MODEL, default
     openai:gpt-5-mini; any pydantic-ai model string works)
Needs: pip install -e ".[pydantic-ai]"
"""

from __future__ import annotations

import os

import anyio
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations.pydantic_ai import CodeModeToolset

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


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Plays the model offline: one `code` call per script step, then an answer."""
    step = sum(isinstance(message, ModelResponse) for message in messages)
    if step < len(SCRIPT):
        return ModelResponse(parts=[ToolCallPart("code", {"code": SCRIPT[step]})])
    return ModelResponse(parts=[TextPart("(scripted) See the last tool result for the answer.")])


async def main() -> None:
    model = os.environ.get("CODEMODE_MODEL", "openai:gpt-5-mini") if os.environ.get("OPENAI_API_KEY") else None
    async with CodeMode(build_demo_catalog()) as cm:
        agent = Agent(model or FunctionModel(scripted), toolsets=[CodeModeToolset(cm)])
        result = await agent.run(QUESTION)
        for message in result.all_messages():
            for part in message.parts:
                print(f"--- {part.part_kind}\n{getattr(part, 'content', None) or getattr(part, 'args', '')}")
        print("=== answer:", result.output)


if __name__ == "__main__":
    anyio.run(main)
