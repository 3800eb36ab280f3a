"""What one tool result costs on its way from a handler to the model's code, through `CodeMode`, inline and process.

One run per round: `r = await tools.rows(); return len(r)` against an async handler (no worker thread) that
returns a fresh list of 50 dicts, of about 4 KB or 200 KB of JSON, and the same run against a handler that returns
`[]`, so the difference is the result's own cost. Measured per run: the host's CPU (`time.thread_time_ns`, the
event loop's thread), the worker's CPU (`/proc/PID/schedstat` of this process's children) and the wall clock;
medians over `--repeat` rounds, the cases interleaved round by round so the load falls on each alike. Run it once
per tree (`PYTHONPATH` pointing at each) and compare. `--steps` times each host step of one result alone instead:
the conversion, its one encoding (`JsonText`), the inline copy, the frame; and, on the same data, the check and
the frame encoding that a result not encoded by the host still gets (`check_json`, `encode`).

Run: .venv/bin/python benchmarks/tool_result_bench.py --repeat 300
Check that it runs (3 rounds, then the steps, one batch each): `--quick`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from codemode import Catalog, CodeMode
from codemode._results import to_json
from sandbox import JsonText
from sandbox._shared.frames import encode, encode_with_text
from sandbox.jsonvalue import check_json

CODE = "r = await tools.rows(size=size)\nreturn len(r)"
SIZES = {"empty": 0, "4 KB": 1, "200 KB": 3950}
"""Case name -> characters of each row's `body` (0: the handler returns `[]`)."""


def make_rows(body: int) -> list[dict[str, Any]]:
    """50 records as an API returns them: ids, names, flags, a nested owner, tags, and a text body."""
    if body == 0:
        return []
    return [
        {
            "id": 1000 + i,
            "title": f"Invoice {i} \u00e9t\u00e9",
            "paid": i % 3 == 0,
            "total": round(i * 13.37, 2),
            "owner": {"id": i},
            **({"body": ('Line of text, "quoted".\n' * (body // 25 + 1))[:body]} if body > 1 else {}),
        }
        for i in range(50)
    ]


def catalog() -> Catalog:
    built = Catalog()

    @built.tool
    async def rows(size: int) -> list[dict[str, Any]]:
        """Return 50 rows."""
        return make_rows(size)

    return built


def children_cpu_ns() -> int:
    """CPU time of this process's child processes (the workers), from the kernel's scheduler statistics."""
    total = 0
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                total += int(Path(f"/proc/{child}/schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass
    return total


async def measure(repeat: int) -> dict[str, dict[str, list[float]]]:
    samples: dict[str, dict[str, list[float]]] = {}
    async with (
        CodeMode(catalog(), isolation="inline") as inline,
        CodeMode(catalog(), isolation="process") as process,
    ):
        modes = {"inline": inline, "process": process}
        for _ in range(3):  # warm-up: compile caches, the worker's first run
            for cm in modes.values():
                for size in SIZES.values():
                    await cm.execute(f"size = {size}\n" + CODE, cm.new_state())
        for _ in range(repeat):
            for mode, cm in modes.items():
                for case, size in SIZES.items():
                    code = f"size = {size}\n" + CODE
                    state = cm.new_state()
                    wall, host, worker = time.perf_counter_ns(), time.thread_time_ns(), children_cpu_ns()
                    result = await cm.execute(code, state)
                    host = time.thread_time_ns() - host
                    worker = children_cpu_ns() - worker
                    wall = time.perf_counter_ns() - wall
                    assert result.run.ok, result.text
                    cell = samples.setdefault(f"{mode}, {case}", {"host": [], "worker": [], "wall": []})
                    cell["host"].append(host / 1000)
                    cell["worker"].append(worker / 1000)
                    cell["wall"].append(wall / 1000)
    return samples


def cpu_us(step: Any, rounds: int) -> float:
    """Median CPU microseconds of one call of `step`, over `rounds` batches of 20."""
    times = []
    for _ in range(rounds):
        started = time.thread_time_ns()
        for _ in range(20):
            step()
        times.append((time.thread_time_ns() - started) / 20 / 1000)
    return statistics.median(times)


def steps(rounds: int) -> None:
    print("| step | " + " | ".join(f"{case}" for case in SIZES if case != "empty") + " |")
    print("|---|" + "---:|" * (len(SIZES) - 1))
    cells: dict[str, list[float]] = {}
    for case, size in SIZES.items():
        if case == "empty":
            continue
        data = make_rows(size)
        converted = to_json(data)
        text = JsonText(converted)
        head = {"t": "result", "id": 1, "ok": True}
        for name, step in {
            "convert (`to_json`)": lambda: to_json(data),  # noqa: B023  # used within this iteration
            "encode once, the size (`JsonText`)": lambda: JsonText(converted),  # noqa: B023
            "inline copy (`JsonText.copy`)": text.copy,
            "the frame (`encode_with_text`)": lambda: encode_with_text(head, "value", text.text),  # noqa: B023
            "not encoded by the host: check and copy (`check_json`)": lambda: check_json(converted),  # noqa: B023
            "not encoded by the host: the frame (`encode`)": lambda: encode({**head, "value": converted}),  # noqa: B023
        }.items():
            cells.setdefault(name, []).append(cpu_us(step, rounds))
    for name, values in cells.items():
        print(f"| {name} | " + " | ".join(f"{value:,.0f} µs" for value in values) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="print the medians as JSON")
    parser.add_argument("--steps", action="store_true", help="time each host step of one result alone")
    parser.add_argument("--quick", action="store_true", help="check that it runs: 3 rounds, then the steps")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 3
    if args.steps:
        steps(max(args.repeat // 10, 5))
        return
    sizes = {case: len(json.dumps(make_rows(size), ensure_ascii=False)) for case, size in SIZES.items()}
    samples = asyncio.run(measure(args.repeat))
    medians = {cell: {k: statistics.median(v) for k, v in values.items()} for cell, values in samples.items()}
    if args.json:
        print(json.dumps(medians))
        return
    print(f"load average {os.getloadavg()[0]:.1f}; result sizes {sizes}")
    print("| run | host CPU | worker CPU | wall | host CPU over `[]` |")
    print("|---|---:|---:|---:|---:|")
    for cell, values in medians.items():
        mode = cell.split(",")[0]
        extra = values["host"] - medians[f"{mode}, empty"]["host"]
        print(
            f"| {cell} | {values['host']:,.0f} µs | {values['worker']:,.0f} µs | {values['wall']:,.0f} µs"
            f" | {extra:,.0f} µs |"
        )
    if args.quick:
        print()
        steps(1)


if __name__ == "__main__":
    main()
