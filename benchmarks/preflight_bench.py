"""Per-run cost of the pre-flight check: reading a script's syntax tree and judging its `tools` calls.

Two scripts against the 300-tool demo catalog: a typical 30-line one (a search, a loop, a gather, eight tool calls
with literal and computed arguments) and a 300-line one (the same ten times over). Each cell is the median of
`--repeat` checks after a warm-up (the validators are cached per tool, as they are in a `CodeMode`). For scale, the
same 30-line script's whole inline `CodeMode.execute` (the check included) is timed too.

Run: .venv/bin/python benchmarks/preflight_bench.py            (or --quick for a few hundred checks)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import time

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.run._preflight import check
from codemode.run._runtime import StubCache

TYPICAL = """\
import asyncio

found = await tools.search("customers and invoices", max_results=3)
print([tool["name"] for tool in found])
customers = await tools.crm_list_customers(city="Berlin")
invoices = await tools.billing_list_invoices(status="overdue")
by_id = {customer["id"]: customer for customer in customers}
late = []
for invoice in invoices:
    customer = by_id.get(invoice["customer_id"])
    if customer is None:
        continue
    late.append((customer["email"], invoice["number"], invoice["amount"]))


async def meetings(email):
    try:
        return email, await tools.calendar_list_events(attendee_email=email)
    except ToolError as error:
        return email, f"unknown ({error})"


found = await asyncio.gather(*(meetings(email) for email, _, _ in late))
forecast = await tools.weather_get_forecast(city="Berlin", days=3)
summary = [day["summary"] for day in forecast["days"]]
sent = []
for email, number, amount in late:
    subject = f"Invoice {number} is overdue"
    sent.append(await tools.mail_send_message(to=email, subject=subject, body=f"{amount:,.2f} EUR is due."))
return {"late": len(late), "sent": len(sent), "weather": summary}
"""
LONG = "\n".join(
    [TYPICAL.rsplit("return", 1)[0]] + [TYPICAL.split("\n", 2)[2].rsplit("return", 1)[0] for _ in range(9)]
)


def median_us(code: str, repeat: int) -> float:
    catalog = build_demo_catalog()
    cache = StubCache()
    assert check(code, catalog, cache) == [], check(code, catalog, cache)
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        check(code, catalog, cache)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1e6


async def execute_us(code: str, repeat: int) -> float:
    timings = []
    async with CodeMode(build_demo_catalog(), isolation="inline") as cm:
        for _ in range(repeat):
            started = time.perf_counter()
            await cm.execute(code, cm.new_state())
            timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1e6


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="200 checks a cell")
    args = parser.parse_args()
    repeat = 200 if args.quick else args.repeat
    gc.collect()
    typical, long = median_us(TYPICAL, repeat), median_us(LONG, repeat)
    run = asyncio.run(execute_us(TYPICAL, max(20, repeat // 20)))
    print(f"Python {platform.python_version()}, {repeat} checks a cell (median)")
    print("| script | lines | check | whole inline run |")
    print("|---|---:|---:|---:|")
    print(f"| typical | {len(TYPICAL.splitlines())} | {typical:,.0f} µs | {run:,.0f} µs |")
    print(f"| long | {len(LONG.splitlines())} | {long:,.0f} µs | |")


if __name__ == "__main__":
    main()
