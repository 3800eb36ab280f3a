"""Start-up time with a large JSONL catalog: `codemode search`, `exec` and `serve`, and the in-process steps.

Writes a catalog of N tools whose schemas are all distinct (their own property names, enums, bounds and
descriptions, as a real 10,000-tool set has), a config that loads it, and two one-line scripts; then times, as
medians of several runs, each command as a whole process (interpreter start and imports included):
- the floors: `python -c pass` (the interpreter), and the imports each command needs before it reads a
  catalog (`codemode.cli._search`, `codemode.cli._exec`, `codemode.cli._serve` with the MCP SDK);
- `codemode search QUERY --config FILE` (load the catalog, build the index, rank, print), with the index cache
  off (`CODEMODE_CACHE=off`) and with the index read from it (an untimed run writes it first);
- `codemode exec FILE --config FILE --isolation inline`, once with a script that searches and once with one
  that does not (which must not pay for the index);
- `codemode serve --config FILE --isolation inline` until it answers an MCP `initialize` on stdio;
- in process: `build_catalog` (read and register), `CodeMode(catalog)`, and the first search (which builds
  the index, or reads it from the cache).

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
    (folder / "plain.py").write_text("return sum(range(10))\n", encoding="utf-8")
    return config, script


def timed(command: list[str], repeat: int, **env: str) -> tuple[float, float]:
    """Median wall and CPU seconds (user + system of the child), CPU being what a loaded machine cannot inflate."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env={**os.environ, **env})  # our own CLI
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def timed_serve(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall seconds until `serve` answers `initialize`, and CPU seconds of the whole process."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=os.environ.copy()
        ) as server:
            assert server.stdin is not None
            assert server.stdout is not None
            server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
            server.stdin.flush()
            answer = server.stdout.readline()
            walls.append(time.perf_counter() - start)
            assert b'"result"' in answer, answer
            server.stdin.close()  # end of input: the server stops
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def in_process(config: Path, repeat: int) -> dict[str, tuple[float, float]]:
    import anyio

    from codemode import CodeMode, build_catalog, load_config
    from codemode.search import _fields, _tokenize

    steps: dict[str, list[tuple[float, float]]] = {
        "build_catalog": [],
        "CodeMode(catalog)": [],
        "first search, no index cache (builds the index)": [],
        "first search, index read from the cache": [],
    }
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        catalog = build_catalog(load_config(config))
        steps["build_catalog"].append((time.perf_counter() - wall, time.process_time() - cpu))
        wall, cpu = time.perf_counter(), time.process_time()
        CodeMode(catalog, isolation="inline")
        steps["CodeMode(catalog)"].append((time.perf_counter() - wall, time.process_time() - cpu))
        for step, cache in (("no index cache (builds the index)", "off"), ("index read from the cache", "on")):
            os.environ["CODEMODE_CACHE"] = cache
            _tokenize._CACHE.clear()  # a new process starts with no term memo: so does each measurement
            _tokenize._normalize.cache_clear()
            _fields._COUNTS.clear()
            code_mode = CodeMode(catalog, isolation="inline")
            wall, cpu = time.perf_counter(), time.process_time()
            anyio.run(code_mode._search, "refund an invoice", 5)  # what `tools.search` calls first
            steps[f"first search, {step}"].append((time.perf_counter() - wall, time.process_time() - cpu))
    os.environ.pop("CODEMODE_CACHE")
    return {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in steps.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    codemode = [sys.executable, "-m", "codemode"]  # the program, as `codemode` runs it
    with tempfile.TemporaryDirectory() as tmp:
        config, script = write_catalog(Path(tmp), args.tools)
        os.environ["CODEMODE_CACHE_DIR"] = str(Path(tmp) / "cache")  # the index cache starts empty
        search = [*codemode, "search", "refund an invoice", "--config", str(config)]
        exec_inline = [*codemode, "exec", "--config", str(config), "--isolation", "inline"]
        subprocess.run(search, check=True, capture_output=True)  # writes the index cache that later runs read
        rows = {
            "floor: python -c pass": timed([sys.executable, "-c", "pass"], args.repeat),
            **{
                f"floor: import {module}": timed([sys.executable, "-c", f"import {module}"], args.repeat)
                for module in ("codemode.cli._search", "codemode.cli._exec", "codemode.cli._serve, codemode.mcp")
            },
            "codemode search, no index cache": timed(search, args.repeat, CODEMODE_CACHE="off"),
            "codemode search, index read from the cache": timed(search, args.repeat),
            "codemode exec (inline), a script that searches (index cache)": timed(
                [*exec_inline, str(script)], args.repeat
            ),
            "codemode exec (inline), a script that does not search": timed(
                [*exec_inline, str(script.parent / "plain.py")], args.repeat
            ),
            "codemode serve (inline) until it answers `initialize`": timed_serve(
                [*codemode, "serve", "--config", str(config), "--isolation", "inline"], args.repeat
            ),
        }
        steps = in_process(config, args.repeat)
    print(f"{args.tools:,} tools with distinct schemas, median of {args.repeat} runs")
    print("| what | wall s | CPU s |\n|---|---:|---:|")
    for name, (wall, cpu) in {**rows, **{f"in process: {k}": v for k, v in steps.items()}}.items():
        print(f"| {name} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
