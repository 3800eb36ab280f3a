"""The approval tests' shared setup: a shop catalog whose refunds over 100 need approval, counters of every handler
call, a `CodeMode` over it with a signing policy, and the scripted codes and outcomes every adapter test drives."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from codemode import Catalog, CodeMode, Policy

SECRET = b"test-approval-key"

REFUND_CODE = (
    'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
)
"""Looks up A1 and refunds its total of 150: pauses on the refund, after one free call."""
REFUNDED = 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
"""What the model reads once `REFUND_CODE`'s refund is approved and made (before any announced stubs)."""
REFUND_ASKED: dict[str, Any] = {
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
"""What a person is shown when `REFUND_CODE` pauses (besides the id and the signed record)."""
DENIABLE_CODE = """
order = await tools.get_order(order_id="A1")
try:
    await tools.refund(order_id="A1", amount=order["total"])
except ToolError as error:
    print("refund failed:", error)
"""
"""Like `REFUND_CODE`, but catches a denial and prints it."""
TWICE_CODE = 'await tools.delete_order(order_id="A1")\nreturn await tools.delete_order(order_id="B2")'
"""Two deletes, each needing its own approval."""


@dataclass
class Shop:
    """The catalog and what its handlers were asked to do."""

    catalog: Catalog
    made: Counter[str] = field(default_factory=Counter)
    """Handler calls by tool name (and `get_order:<id>` for each order looked up)."""

    def code_mode(self, **options: Any) -> CodeMode:
        """A `CodeMode` over the shop (inline unless `isolation=` says otherwise) whose policy signs with `SECRET`."""
        return CodeMode(self.catalog, **{"isolation": "inline", "policy": Policy(secret=SECRET)} | options)


def make_shop() -> Shop:
    """`get_order` (free), `refund` (approval over 100), `delete_order` (always approval), `log` (free)."""
    catalog = Catalog()
    shop = Shop(catalog)

    @catalog.tool
    async def get_order(order_id: str) -> dict[str, object]:
        """Look up an order."""
        shop.made["get_order"] += 1
        shop.made[f"get_order:{order_id}"] += 1
        return {"order_id": order_id, "total": 150.0, "email": f"{order_id.lower()}@example.com"}

    @catalog.tool(approval=lambda args: args["amount"] > 100)
    async def refund(order_id: str, amount: float) -> dict[str, object]:
        """Refund part or all of an order."""
        shop.made["refund"] += 1
        return {"order_id": order_id, "refunded": amount}

    @catalog.tool(approval=True)
    def delete_order(order_id: str) -> str:
        """Delete an order for good."""
        shop.made["delete_order"] += 1
        return f"deleted {order_id}"

    @catalog.tool
    async def log(note: str) -> None:
        """Write a note to the audit log."""
        shop.made["log"] += 1

    return shop
