"""The cost of `Sandbox(fresh_workers=True)`: the trivial run back to back, reused workers against fresh ones.

Run: .venv/bin/python benchmarks/fresh_workers_bench.py --repeat 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from sandbox import Limits, Sandbox


async def case(*, fresh: bool, repeat: int) -> tuple[float, float]:
    """Median and p90 seconds of `return 1` on a two-worker pool, runs back to back."""
    async with Sandbox(isolation="process", limits=Limits(timeout=30), workers=2, fresh_workers=fresh) as sb:
        await sb.run("return 1")
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            result = await sb.run("return 1")
            times.append(time.perf_counter() - started)
            assert result.value == 1
    return statistics.median(times), statistics.quantiles(times, n=10)[-1]


async def main(args: argparse.Namespace) -> None:
    """Print one line per setting."""
    for fresh, repeat in ((False, args.repeat), (True, max(args.repeat // 10, 5))):
        median, p90 = await case(fresh=fresh, repeat=repeat)
        print(f"fresh_workers={fresh}: median {median * 1e3:.2f} ms, p90 {p90 * 1e3:.2f} ms over {repeat} runs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=200, help="timed runs with reused workers (a tenth fresh)")
    asyncio.run(main(parser.parse_args()))
