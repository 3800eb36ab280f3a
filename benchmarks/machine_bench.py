"""What this machine gives two processes that take turns over a pipe, as a host and its worker do.

Three measurements, each with no sandbox code in it:
- parallel throughput: one CPU-bound loop alone, then one in each of two processes at once (on a machine with two
  free cores both take as long as the one alone);
- waking a process: the parent writes a byte, the child answers after busy-looping `B` µs; the round trip minus
  `B`, by `B` (how long the parent's core sat idle before the answer woke it);
- a write that wakes the other process: how long the child's `os.write` of its answer takes, by `B` (a few µs
  when the reader runs elsewhere; as long as the reader's own work when the writer's core is handed to it).
Cells are medians over `--rounds` round trips per row.

Run: .venv/bin/python benchmarks/machine_bench.py --rounds 300
Check that it runs (5 round trips a row, a loop of 100,000): `--quick`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import select
import statistics
import subprocess
import sys
import time

IDLE_US = (0, 20, 50, 100, 200, 500, 1000, 2000, 5000)


def spin(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def count(n: int) -> tuple[float, float]:
    """Wall and CPU seconds of a plain loop of `n` additions."""
    wall, cpu = time.perf_counter(), time.process_time()
    total = 0
    for i in range(n):
        total += i
    return time.perf_counter() - wall, time.process_time() - cpu


def child(inbound: int, outbound: int) -> None:
    """Answer each order (`B` in µs) after busy-looping `B` µs; then send how long the answer's write took."""
    while True:
        order = os.read(inbound, 64)
        if order == b"q":
            return
        spin(int(order) / 1e6)
        start = time.perf_counter()
        os.write(outbound, b"x")
        took = time.perf_counter() - start
        os.write(outbound, f"{took:.9f}".encode().ljust(16))


def wake_rows(rounds: int) -> list[tuple[int, float, float]]:
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    code = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import machine_bench as b; "
    code += f"b.child({to_child_r}, {from_child_w})"
    process = subprocess.Popen([sys.executable, "-c", code], pass_fds=(to_child_r, from_child_w))
    os.close(to_child_r)
    os.close(from_child_w)
    poller = select.epoll()
    poller.register(from_child_r, select.EPOLLIN)
    rows = []
    try:
        for idle in IDLE_US:
            trips, writes = [], []
            for _ in range(rounds + 10):
                start = time.perf_counter()
                os.write(to_child_w, str(idle).encode())
                poller.poll()
                os.read(from_child_r, 1)
                trips.append(time.perf_counter() - start - idle / 1e6)
                writes.append(float(os.read(from_child_r, 16)))
            rows.append((idle, statistics.median(trips[10:]) * 1e6, statistics.median(writes[10:]) * 1e6))
    finally:
        os.write(to_child_w, b"q")
        process.wait(10)
    return rows


def main(args: argparse.Namespace) -> None:
    n = args.loop
    alone = [count(n) for _ in range(3)]
    with multiprocessing.Pool(2) as pool:
        together = [pair for _ in range(3) for pair in pool.map(count, [n, n])]
    rows = wake_rows(args.rounds)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"Command: `.venv/bin/python benchmarks/machine_bench.py {' '.join(sys.argv[1:])}`".replace("  ", " "))
    print(f"\n{os.cpu_count()} CPUs; load average at the end {load}\n")
    print("| a loop of", f"{n:,}", "additions | wall | CPU |")
    print("|---|---:|---:|")
    for label, runs in (("alone", alone), ("two processes at once, each", together)):
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"| {label} | {wall * 1e3:.1f} ms | {cpu * 1e3:.1f} ms |")
    print("\n| the child computes before it answers | round trip minus that | the child's write of its answer |")
    print("|---:|---:|---:|")
    for idle, trip, write in rows:
        print(f"| {idle:,} µs | {trip:.1f} µs | {write:.1f} µs |")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=300, help="round trips per row")
    parser.add_argument("--loop", type=int, default=3_000_000, help="additions in the CPU-bound loop")
    parser.add_argument("--quick", action="store_true", help="check that it runs: 5 round trips a row, a short loop")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.loop = 5, 100_000
    return args


if __name__ == "__main__":
    main(parse_args())
