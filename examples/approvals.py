"""Approvals offline: a refund over 100 pauses the run, the state is saved as JSON, and a decision resumes it.

Run it with `python examples/approvals.py`. It shows the three ways a host decides: the `Agent` callback, a
stop-and-resume through saved JSON (as another process would, minutes later), and a hook that denies.
"""

from __future__ import annotations

import json

import anyio

from codemode import CallInfo, Catalog, CodeMode, Decision, Deny, DiscoveryState, PendingApproval, Policy
from codemode.agent import Agent
from codemode.providers.anthropic import AnthropicWire
from codemode.testing import ScriptedModel, step

SECRET = b"use a long random key from your secret store"
catalog = Catalog()


@catalog.tool
async def get_order(order_id: str) -> dict[str, object]:
    """Look up an order."""
    return {"order_id": order_id, "total": 240.0}


@catalog.tool(approval=lambda args: args["amount"] > 100)
async def refund(order_id: str, amount: float) -> dict[str, object]:
    """Refund part or all of an order."""
    print(f"  (the refund handler ran: {amount} for {order_id})")
    return {"order_id": order_id, "refunded": amount}


@catalog.tool
async def delete_order(order_id: str) -> str:
    """Delete an order."""
    return f"deleted {order_id}"


CODE = """
order = await tools.get_order(order_id="A1")
result = await tools.refund(order_id="A1", amount=order["total"])
print("refunded", result["refunded"])
"""


def no_deletes(call: CallInfo) -> Deny | None:
    return Deny("orders are archived, never deleted") if call.tool == "delete_order" else None


async def main() -> None:
    policy = Policy(before=[no_deletes], secret=SECRET)
    async with CodeMode(catalog, isolation="inline", policy=policy) as cm:
        print("1. stop, save, resume:")
        state = cm.new_state()
        paused = await cm.execute(CODE, state)
        assert paused.pending is not None
        print("  paused at", paused.pending.describe(), "after", [call.name for call in paused.pending.calls])
        saved = json.dumps(state.to_json())  # store it with the conversation; no worker waits
        resumed = await cm.resume(DiscoveryState.from_json(json.loads(saved)), approved=True)
        print("  ", resumed.text)

        print("2. an Agent that asks a callback:")

        def approve(pending: PendingApproval) -> Decision:
            print("  asked about", pending.describe())
            return Decision(approved=False, reason="refunds over 100 go through finance")

        script = [
            step(
                "",
                "try:\n"
                + "".join(f"    {line}\n" for line in CODE.strip().splitlines())
                + "except ToolError as error:\n    print(error)",
            ),
            step("Finance will handle it."),
        ]
        agent = Agent(cm, ScriptedModel(AnthropicWire(), script), approve=approve)
        print("  answer:", (await agent.run("Refund order A1.")).answer)

        print("3. a hook that denies:")
        denied = await cm.execute('await tools.delete_order(order_id="A1")', cm.new_state())
        print("  ", denied.text.splitlines()[-1])


if __name__ == "__main__":
    anyio.run(main)
