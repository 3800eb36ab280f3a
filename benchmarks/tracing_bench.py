"""Per-run cost of tracing: `CodeMode.execute` with tracing off, with the OpenTelemetry API only, and with the SDK.

Three `CodeMode`s over the same catalog, all inline (so the sandbox's own cost is the same small floor in every
mode and the difference is the tracing): `tracing=False`; `tracing=True` with no SDK configured (the API's
no-op tracer, what a user gets who installs the extra but exports nothing); and an SDK `TracerProvider` with a
`SimpleSpanProcessor` into an `InMemorySpanExporter` (every span built, ended and exported; cleared between
runs). Two scripts: one search and five tool calls (7 spans a run), and a trivial `return 1` (1 span). Runs are
interleaved mode by mode, after a warm-up, and each cell is the median of `--repeat` runs; the overhead column
is the median's difference to tracing off. Also: the same with `on_event` progress events on and tracing off.

Run: .venv/bin/python benchmarks/tracing_bench.py --repeat 2000
Check that it runs (3 runs a cell after 2 warm-up rounds): `--quick`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import time
from typing import TYPE_CHECKING

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from codemode import Catalog, CodeMode
from codemode.tracing import Tracing

if TYPE_CHECKING:
    from codemode.events import RunEvent

CALLS = """
found = await tools.search("weather forecast")
rows = []
for city in ["Oslo", "Rome", "Lima", "Pune", "Kyiv"]:
    rows.append(await tools.get_weather(city=city))
return len(rows)
"""
TRIVIAL = "return 1"


def make_catalog() -> Catalog:
    """A few tools; `get_weather` answers at once, so the run is all overhead."""
    catalog = Catalog()

    @catalog.tool
    async def get_weather(city: str) -> dict[str, object]:
        """Get the weather forecast for a city."""
        return {"city": city, "celsius": 21}

    @catalog.tool
    async def send_email(to: str, subject: str) -> str:
        """Send an email."""
        return "sent"

    return catalog


async def measure(repeat: int, warm_up: int) -> dict[tuple[str, str], list[float]]:
    """Seconds per run, by (mode, script)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    catalog = make_catalog()
    events: list[RunEvent] = []
    modes = {
        "off": CodeMode(catalog, isolation="inline"),
        "API only (no SDK)": CodeMode(catalog, isolation="inline", tracing=True),
        "SDK, in-memory exporter": CodeMode(catalog, isolation="inline", tracing=Tracing(tracer_provider=provider)),
        "off, with on_event": CodeMode(catalog, isolation="inline"),
    }
    timings: dict[tuple[str, str], list[float]] = {(m, s): [] for m in modes for s in ("calls", "trivial")}
    for cm in modes.values():
        await cm.__aenter__()
    try:
        for round_number in range(warm_up + repeat):  # the warm-up rounds are not kept
            for mode, cm in modes.items():
                for script, code in (("calls", CALLS), ("trivial", TRIVIAL)):
                    sink = events.append if mode == "off, with on_event" else None
                    started = time.perf_counter()
                    result = await cm.execute(code, cm.new_state(), on_event=sink)
                    elapsed = time.perf_counter() - started
                    assert result.ok, result.text
                    if round_number >= warm_up:
                        timings[mode, script].append(elapsed)
                    exporter.clear()
                    events.clear()
    finally:
        for cm in modes.values():
            await cm.__aexit__(None, None, None)
    return timings


def report(timings: dict[tuple[str, str], list[float]], repeat: int) -> None:
    """A Markdown table of medians and overheads."""
    print(f"Python {platform.python_version()}, median of {repeat} runs per cell, inline isolation\n")
    print("| mode | search + 5 calls (7 spans) | overhead | trivial run (1 span) | overhead |")
    print("|---|---:|---:|---:|---:|")
    base = {script: statistics.median(timings["off", script]) for script in ("calls", "trivial")}
    for mode in dict.fromkeys(m for m, _ in timings):
        cells = []
        for script in ("calls", "trivial"):
            median = statistics.median(timings[mode, script])
            cells += [f"{median * 1e6:,.0f} µs", "" if mode == "off" else f"{(median - base[script]) * 1e6:+,.0f} µs"]
        print(f"| {mode} | " + " | ".join(cells) + " |")


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="check that it runs: 3 runs a cell, 2 warm-up rounds")
    args = parser.parse_args()
    warm_up = 20
    if args.quick:
        args.repeat, warm_up = 3, 2
    gc.collect()
    report(asyncio.run(measure(args.repeat, warm_up)), args.repeat)


if __name__ == "__main__":
    main()
