"""An OpenAI Agents SDK agent with the whole 300-tool demo catalog behind one `code` tool.

Run: python examples/openai_agents_agent.py      offline: the SDK's own `agents.testing.ScriptedModel` plays the model
     OPENAI_API_KEY=... python examples/openai_agents_agent.py      a real model (CODEMODE_MODEL, default gpt-5-mini)
Needs: pip install -e ".[openai-agents]"
"""

from __future__ import annotations

import os

import anyio
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations.openai_agents import code_tool

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


async def main() -> None:
    if os.environ.get("OPENAI_API_KEY"):
        model: str | ScriptedModel = os.environ.get("CODEMODE_MODEL", "gpt-5-mini")
    else:
        set_tracing_disabled(True)
        steps = [[function_call("code", {"code": code}, call_id=f"call_{n}")] for n, code in enumerate(SCRIPT)]
        model = ScriptedModel([*steps, [assistant_message("(scripted) See the last tool result for the answer.")]])
    async with CodeMode(build_demo_catalog()) as cm:
        agent = Agent(name="assistant", instructions="Answer with the `code` tool.", model=model, tools=[code_tool(cm)])
        result = await Runner.run(agent, QUESTION)
        for item in result.new_items:
            raw = item.raw_item
            print(f"--- {item.type}\n{getattr(item, 'output', None) or getattr(raw, 'arguments', None) or raw}")
        print("=== answer:", result.final_output)


if __name__ == "__main__":
    anyio.run(main)
