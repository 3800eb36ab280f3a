"""Start-up time with a large JSONL catalog: `codemode search` and `codemode exec`, and the in-process steps.

Writes a catalog of N tools whose schemas are all distinct (their own property names, enums, bounds and
descriptions, as a real 10,000-tool set has), a config that loads it, and a one-line script; then times, as
medians of several runs:
- the floor: `python -c "import codemode.cli"`;
- `codemode search QUERY --config FILE` (load the catalog, build the index, rank, print);
- `codemode exec FILE --config FILE --isolation inline` (load, build `CodeMode`, run one call);
- in process: `build_catalog` (read and register) and `CodeMode(catalog)` (which builds the search index).

Wall and CPU seconds are both reported: on a shared machine the wall clock varies with the load, CPU less.

Run: .venv/bin/python benchmarks/startup_bench.py [--tools 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = "account invoice order customer ticket repo issue email calendar file user report payment ship stock".split()


def definition(i: int) -> dict[str, object]:
    """A tool whose schema no other tool shares."""
    noun, other = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
    return {
        "name": f"svc{i // 100}.{noun}_{other}_{i}",
        "description": f"Manage the {noun} of a {other} in service {i // 100}. Returns the {noun} record {i}.",
        "parameters": {
            "type": "object",
            "properties": {
                f"{noun}_id_{i}": {"type": "string", "description": f"The {noun} id ({i})."},
                f"limit_{i % 97}": {"type": "integer", "minimum": 1, "maximum": 100 + i},
                "mode": {"type": "string", "enum": [f"m{i}", f"n{i}", "all"]},
                f"filter_{i % 13}": {
                    "type": "object",
                    "properties": {"field": {"type": "string"}, f"value_{i}": {"type": ["string", "null"]}},
                },
            },
            "required": [f"{noun}_id_{i}"],
        },
    }


def write_catalog(folder: Path, count: int) -> tuple[Path, Path]:
    tools = folder / "tools.jsonl"
    tools.write_text("\n".join(json.dumps(definition(i)) for i in range(count)) + "\n", encoding="utf-8")
    config = folder / "codemode.toml"
    config.write_text('[[tools]]\njsonl = "tools.jsonl"\n', encoding="utf-8")
    script = folder / "script.py"
    script.write_text(
        'return await tools.search("refund the invoice of a customer", max_results=1)\n', encoding="utf-8"
    )
    return config, script


def timed(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds (user + system of the child), CPU being what a loaded machine cannot inflate."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=os.environ.copy())  # our own CLI
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def in_process(config: Path, repeat: int) -> dict[str, tuple[float, float]]:
    from codemode import CodeMode, build_catalog, load_config

    steps: dict[str, list[tuple[float, float]]] = {"build_catalog": [], "CodeMode(catalog) (search index)": []}
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        catalog = build_catalog(load_config(config))
        steps["build_catalog"].append((time.perf_counter() - wall, time.process_time() - cpu))
        wall, cpu = time.perf_counter(), time.process_time()
        CodeMode(catalog, isolation="inline")
        steps["CodeMode(catalog) (search index)"].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in steps.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    codemode = [sys.executable, "-c", "import sys; from codemode.cli import main; sys.exit(main())"]
    with tempfile.TemporaryDirectory() as tmp:
        config, script = write_catalog(Path(tmp), args.tools)
        rows = {
            "floor: import codemode.cli": timed([sys.executable, "-c", "import codemode.cli"], args.repeat),
            "codemode search": timed([*codemode, "search", "refund an invoice", "--config", str(config)], args.repeat),
            "codemode exec (inline)": timed(
                [*codemode, "exec", str(script), "--config", str(config), "--isolation", "inline"], args.repeat
            ),
        }
        steps = in_process(config, args.repeat)
    print(f"{args.tools:,} tools with distinct schemas, median of {args.repeat} runs")
    print("| what | wall s | CPU s |\n|---|---:|---:|")
    for name, (wall, cpu) in {**rows, **{f"in process: {k}": v for k, v in steps.items()}}.items():
        print(f"| {name} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
