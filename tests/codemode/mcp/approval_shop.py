"""A small shop catalog whose refunds over 100 need approval, with counters of every handler call."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from codemode import Catalog

SECRET = b"test-approval-key"


@dataclass
class Shop:
    """The catalog and what its handlers were asked to do."""

    catalog: Catalog
    made: Counter[str] = field(default_factory=Counter)
    """Handler calls by tool name (and `get_order:<id>` for each order looked up)."""


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
