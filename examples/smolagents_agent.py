"""A smolagents `ToolCallingAgent` with the whole 300-tool demo catalog behind one `code` tool.

Run: python examples/smolagents_agent.py      offline: a scripted `Model` plays the model
     OPENAI_API_KEY=... python examples/smolagents_agent.py      a real model through smolagents' `OpenAIServerModel`
     (CODEMODE_MODEL, default gpt-5-mini)
Needs: pip install -e ".[smolagents]"
"""

from __future__ import annotations

import os
from typing import Any

from smolagents import Model, OpenAIServerModel, ToolCallingAgent
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.integrations.smolagents import CodeModeTool

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


class ScriptedModel(Model):  # type: ignore[misc]
    """Plays the model offline: one `code` call per script step, then `final_answer`."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted")
        self.calls = [("code", {"code": code}) for code in SCRIPT]
        self.calls.append(("final_answer", {"answer": "(scripted) See the last observation."}))

    def generate(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        name, arguments = self.calls.pop(0)
        function = ChatMessageToolCallFunction(name=name, arguments=arguments)
        call = ChatMessageToolCall(id=f"call_{len(self.calls)}", type="function", function=function)
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def main() -> None:
    if os.environ.get("OPENAI_API_KEY"):
        model: Model = OpenAIServerModel(model_id=os.environ.get("CODEMODE_MODEL", "gpt-5-mini"))
    else:
        model = ScriptedModel()
    with CodeModeTool(CodeMode(build_demo_catalog())) as tool:  # the tool owns the CodeMode and its loop thread
        agent = ToolCallingAgent(tools=[tool], model=model, verbosity_level=0)
        answer = agent.run(QUESTION)
        for step in agent.memory.steps:
            if observations := getattr(step, "observations", None):
                print(f"--- step {step.step_number}\n{observations}")
        print("=== answer:", answer)


if __name__ == "__main__":
    main()
