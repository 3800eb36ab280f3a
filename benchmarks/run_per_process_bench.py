"""A process per run, measured: many runs waiting at once, runs back to back, the CPU of a fork, the start-up.

Run: python benchmarks/run_per_process_bench.py            (the figures in benchmarks/README.md)
     python benchmarks/run_per_process_bench.py --quick    (a few seconds: checks that it runs, as CI does)

- concurrent: `--runs` runs at once, each awaiting a host function that sleeps `--seconds`, with a default
  `Sandbox()`: the wall time, and the peak private memory (Private_Clean + Private_Dirty of
  `/proc/PID/smaps_rollup`) of the host and every process under it, sampled every 20 ms;
- back to back: trivial runs one after another, in runs per second;
- CPU per run: the host's CPU and the template's (its own and its reaped children's: fork, run, exit, reap)
  over the back-to-back runs, per run;
- start-up: entering `Sandbox()` until its first run's result.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import Sandbox

_TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> set[int]:
    """Every process under `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def private_bytes(pid: int) -> int:
    """Private_Clean + Private_Dirty of one process (0 if it is gone)."""
    total = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1]) * 1024
    except OSError:
        return 0
    return total


def cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds of `pid` (with its reaped children's, if `reaped`), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if reaped else 0)
    return ticks / _TICK


async def sample_memory(peak: list[int], stop: asyncio.Event) -> None:
    """Keep the largest sum of private memory of the host and its processes seen until `stop`."""
    host = os.getpid()
    while not stop.is_set():
        peak[0] = max(peak[0], sum(private_bytes(pid) for pid in {host, *descendants(host)}))
        await asyncio.sleep(0.02)


async def concurrent(runs: int, seconds: float) -> tuple[float, int]:
    """Wall time of `runs` runs at once, each awaiting a `seconds` host function; peak private bytes."""

    async def wait() -> int:
        await asyncio.sleep(seconds)
        return 1

    async with Sandbox() as sandbox:
        peak, stop = [0], asyncio.Event()
        sampler = asyncio.ensure_future(sample_memory(peak, stop))
        started = time.perf_counter()
        results = await asyncio.gather(
            *(sandbox.run("return await wait()", functions={"wait": wait}) for _ in range(runs))
        )
        elapsed = time.perf_counter() - started
        stop.set()
        await sampler
    failed = [result.error for result in results if result.value != 1]
    assert not failed, failed[:3]
    return elapsed, peak[0]


async def back_to_back(runs: int) -> tuple[float, float, float]:
    """Runs per second of trivial runs one after another; host and template CPU seconds per run."""
    async with Sandbox() as sandbox:
        await sandbox.run("return 1")
        assert sandbox._template is not None
        template = sandbox._template.pid
        assert template is not None
        host_before, template_before = time.process_time(), cpu_seconds(template, reaped=True)
        started = time.perf_counter()
        for _ in range(runs):
            result = await sandbox.run("return 1")
            assert result.value == 1, result.error
        elapsed = time.perf_counter() - started
        await asyncio.sleep(0.2)  # the last runs' processes reaped
        host = time.process_time() - host_before
        forks = cpu_seconds(template, reaped=True) - template_before
    return runs / elapsed, host / runs, forks / runs


async def startup(times: int) -> float:
    """Median seconds from entering `Sandbox()` to its first run's result."""
    measured = []
    for _ in range(times):
        started = time.perf_counter()
        async with Sandbox() as sandbox:
            await sandbox.run("return 1")
            measured.append(time.perf_counter() - started)
    return statistics.median(measured)


async def main(args: argparse.Namespace) -> None:
    """Run every measure and print one line each."""
    elapsed, peak = await concurrent(args.runs, args.seconds)
    print(f"{args.runs} runs at once, each awaiting a {args.seconds:g} s host function: {elapsed:.2f} s wall")
    print(f"  peak private memory of the host and all its processes: {peak / 2**20:,.0f} MB")
    rate, host, forks = await back_to_back(args.serial)
    print(f"trivial runs back to back: {rate:.1f} runs/s over {args.serial}")
    print(f"  CPU per run: host {host * 1e3:.1f} ms, template with its run processes {forks * 1e3:.1f} ms")
    print(f"start-up until the first run (median of {args.starts}): {await startup(args.starts) * 1e3:.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=64, help="runs at once (default 64)")
    parser.add_argument("--seconds", type=float, default=1.0, help="what each run's host function sleeps")
    parser.add_argument("--serial", type=int, default=200, help="trivial runs back to back")
    parser.add_argument("--starts", type=int, default=5, help="start-ups timed")
    parser.add_argument("--quick", action="store_true", help="a few seconds in all: checks that it runs")
    options = parser.parse_args()
    if options.quick:
        options.runs, options.seconds, options.serial, options.starts = 8, 0.2, 10, 1
    asyncio.run(main(options))
