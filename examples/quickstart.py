"""A catalog behind one `code` tool: search, call, and see what gets announced.

Run: python examples/quickstart.py   (offline, no API key)
"""

from __future__ import annotations

import anyio

from codemode import Catalog, CodeMode

catalog = Catalog()


@catalog.tool
async def get_weather(city: str, days: int = 1) -> dict[str, object]:
    """Get the weather forecast for a city.

    Args:
        city: City name, e.g. "Paris".
        days: Number of days to forecast.
    """
    return {"city": city, "days": [{"day": n + 1, "summary": "sunny", "high_c": 20 + n} for n in range(days)]}


@catalog.tool(name="math.factorial")
def factorial(n: int) -> int:
    """Compute n! for a non-negative integer."""
    if n < 0:
        raise ValueError("n must be >= 0")
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result


MODEL_CODE = """\
import asyncio
found = await tools.search("weather forecast")
print("found:", [tool["signature"] for tool in found])
paris, rome = await asyncio.gather(tools.get_weather(city="Paris", days=2), tools.get_weather(city="Rome"))
try:
    await tools.math_factorial(n=-1)
except ToolError as error:
    print("handled:", error)
return {"paris": paris["days"][-1]["high_c"], "rome": rome["days"][0]["summary"]}
"""


async def main() -> None:
    async with CodeMode(catalog) as cm:
        state = cm.new_state()
        result = await cm.execute(MODEL_CODE, state)
        print("--- tool result (what the model reads) ---")
        print(result.text)
        print("--- announcement (appended to the conversation) ---")
        print(result.announcement)
        again = await cm.execute('return await tools.get_weather(city="Oslo")', state)
        print("--- second run: nothing new to announce:", again.announcement is None)


if __name__ == "__main__":
    anyio.run(main)
