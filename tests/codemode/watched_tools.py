"""The catalog of the tests that watch a run's calls as they happen (progress events, traces, run logs).

Three tools, one outcome each: `get_weather` works, `charge_card` fails, `wait_for_gate` waits until the test
opens its gate (forever, without one), so a run can be caught with a call in flight.
"""

from __future__ import annotations

import anyio

from codemode import Catalog


def watched_catalog(gate: anyio.Event | None = None) -> Catalog:
    """A tool that works, one that fails, and one that waits on `gate`."""
    catalog = Catalog()

    @catalog.tool
    async def get_weather(city: str) -> dict[str, object]:
        """Get the weather forecast for a city."""
        return {"city": city, "celsius": 21}

    @catalog.tool
    async def charge_card(amount: float) -> str:
        """Charge the card on file."""
        raise ValueError("card declined")

    @catalog.tool
    async def wait_for_gate() -> str:
        """Wait until the test opens the gate."""
        await (gate or anyio.Event()).wait()
        return "through"

    return catalog
