"""The floor under a process-mode host call: bare JSON round trips over two pipes, with no sandbox in them.

A child process plays the worker: it writes a call frame (a 4-byte length, then JSON, as `sandbox._shared.frames`)
and waits for the reply, `--calls` times in a row, like 100 sequential host calls. The parent plays the host and
answers each call at once. Ways to wait, each side:
- host `asyncio`: one `loop.add_reader` callback for the whole exchange (what `Sandbox` does); host `blocking`:
  a plain `os.read` loop (no event loop at all: the operating system's floor).
- worker `blocking`: a blocking `os.read` (what the worker does); worker `spin`: non-blocking reads for up to
  `--spin` µs after each call, then a blocking `select`.
Rounds alternate the variants; cells are the median over rounds of the wall time per round trip, and the
host's and the worker's CPU per round trip (`time.thread_time_ns`; the worker's from its own clock).

Run: .venv/bin/python benchmarks/pipe_floor_bench.py --rounds 30 --calls 200
Check that it runs (2 rounds of 20 round trips): `--quick`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import statistics
import struct
import sys
import time

HEADER = struct.Struct(">I")
VARIANTS = [("asyncio", "blocking"), ("asyncio", "spin"), ("blocking", "blocking"), ("blocking", "spin")]


def frame(message: dict[str, object]) -> bytes:
    payload = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
    return HEADER.pack(len(payload)) + payload


class Frames:
    """Frames out of a byte stream."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, object]]:
        self.buffer += data
        out = []
        while len(self.buffer) >= 4:
            (size,) = HEADER.unpack_from(self.buffer)
            if len(self.buffer) < 4 + size:
                break
            out.append(json.loads(self.buffer[4 : 4 + size]))
            del self.buffer[: 4 + size]
        return out


# -- the worker ------------------------------------------------------------------------------------------------


def child(inbound: int, outbound: int) -> None:
    frames = Frames()
    pending: list[dict[str, object]] = []

    def receive(spin_ns: int) -> dict[str, object]:
        if spin_ns:
            os.set_blocking(inbound, False)
            until = time.perf_counter_ns() + spin_ns
            while not pending and time.perf_counter_ns() < until:
                try:
                    pending.extend(frames.feed(os.read(inbound, 65536)))
                except BlockingIOError:
                    continue
            while not pending:
                select.select([inbound], [], [])
                try:
                    pending.extend(frames.feed(os.read(inbound, 65536)))
                except BlockingIOError:
                    continue
            os.set_blocking(inbound, True)
        while not pending:
            pending.extend(frames.feed(os.read(inbound, 65536)))
        return pending.pop(0)

    while True:
        order = receive(0)
        if order["t"] == "quit":
            return
        spin, calls = order["spin"], order["calls"]
        assert isinstance(spin, int)
        assert isinstance(calls, int)
        spin_ns = spin * 1000
        cpu = time.thread_time_ns()
        for i in range(calls):
            os.write(outbound, frame({"t": "call", "run": 1, "id": i, "fn": "echo", "args": [i], "kwargs": {}}))
            reply = receive(spin_ns)
            assert reply["id"] == i
        os.write(outbound, frame({"t": "end", "cpu": time.thread_time_ns() - cpu}))


# -- the host --------------------------------------------------------------------------------------------------


def answer(message: dict[str, object]) -> bytes:
    return frame({"t": "result", "id": message["id"], "ok": True, "value": message["args"][0]})  # type: ignore[index]


async def host_asyncio(to_child: int, from_child: int) -> int:
    loop = asyncio.get_running_loop()
    frames, done = Frames(), loop.create_future()

    def readable() -> None:
        for message in frames.feed(os.read(from_child, 65536)):
            if message["t"] == "end":
                done.set_result(message["cpu"])
            else:
                os.write(to_child, answer(message))

    loop.add_reader(from_child, readable)
    try:
        return int(await done)
    finally:
        loop.remove_reader(from_child)


def host_blocking(to_child: int, from_child: int) -> int:
    frames = Frames()
    while True:
        for message in frames.feed(os.read(from_child, 65536)):
            if message["t"] == "end":
                cpu = message["cpu"]
                assert isinstance(cpu, int)
                return cpu
            os.write(to_child, answer(message))


async def main(args: argparse.Namespace) -> None:
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    code = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import pipe_floor_bench as b; "
    code += f"b.child({to_child_r}, {from_child_w})"
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", code, pass_fds=(to_child_r, from_child_w))
    os.close(to_child_r)
    os.close(from_child_w)
    samples: dict[tuple[str, str], list[tuple[float, float, float]]] = {v: [] for v in VARIANTS}
    try:
        for round_ in range(args.rounds + 1):
            order = VARIANTS if round_ % 2 else VARIANTS[::-1]
            for host, worker in order:
                spin = args.spin if worker == "spin" else 0
                os.write(to_child_w, frame({"t": "go", "spin": spin, "calls": args.calls}))
                start, cpu = time.perf_counter_ns(), time.thread_time_ns()
                if host == "asyncio":
                    worker_cpu = await host_asyncio(to_child_w, from_child_r)
                else:
                    worker_cpu = host_blocking(to_child_w, from_child_r)
                wall, host_cpu = time.perf_counter_ns() - start, time.thread_time_ns() - cpu
                if round_:  # the first round warms up
                    per = [wall / args.calls / 1e3, host_cpu / args.calls / 1e3, worker_cpu / args.calls / 1e3]
                    samples[host, worker].append((per[0], per[1], per[2]))
    finally:
        os.write(to_child_w, frame({"t": "quit"}))
        await asyncio.wait_for(process.wait(), 10)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"Command: `.venv/bin/python benchmarks/pipe_floor_bench.py {' '.join(sys.argv[1:])}`".replace("  ", " "))
    print(f"\n{args.rounds} rounds of {args.calls} sequential round trips each; load average at the end {load}\n")
    print("| host waits by / worker waits by | round trip | host CPU | worker CPU |")
    print("|---|---:|---:|---:|")
    for host, worker in VARIANTS:
        rows = samples[host, worker]
        label = f"{host} / {worker}" + (f" (up to {args.spin} µs)" if worker == "spin" else "")
        cells = [statistics.median(r[k] for r in rows) for k in range(3)]
        print(f"| {label} | " + " | ".join(f"{c:.1f} µs" for c in cells) + " |")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds per variant")
    parser.add_argument("--calls", type=int, default=200, help="sequential round trips per round")
    parser.add_argument("--spin", type=int, default=200, help="µs a spinning worker polls before it blocks")
    parser.add_argument("--quick", action="store_true", help="check that it runs: 2 rounds of 20 round trips")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.calls = 2, 20
    return args


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
