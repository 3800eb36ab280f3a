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
- in process, in a fresh process each time (as a real start has no term memo or index in memory):
  `build_catalog` (read and register), `CodeMode(catalog)`, and the first `tools.search` of an inline
  `CodeMode.execute` after a plain run (the search builds the index, or reads it from the cache).

Wall and CPU seconds are both reported: on a shared machine the wall clock varies with the load, CPU less.

Run: .venv/bin/python benchmarks/startup_bench.py [--tools 10000] [--repeat 5]
Check that it runs (1,000 tools, the fewest the index cache keeps; one run each; one import floor): `--quick`.
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


IN_PROCESS = r"""
import json, sys, time
from pathlib import Path

import anyio

from codemode import CodeMode, build_catalog, load_config

def timed(step):
    wall, cpu = time.perf_counter(), time.process_time()
    value = step()
    return value, (time.perf_counter() - wall, time.process_time() - cpu)

async def first_search(code_mode):
    async with code_mode:
        state = code_mode.new_state()
        assert (await code_mode.execute("return 1", state)).ok  # the sandbox's imports and first run
        wall, cpu = time.perf_counter(), time.process_time()
        code = 'return len(await tools.search("refund an invoice", max_results=5))'
        result = await code_mode.execute(code, state)
        assert result.run.value == 5, result.text
        return time.perf_counter() - wall, time.process_time() - cpu

catalog, build = timed(lambda: build_catalog(load_config(Path(sys.argv[1]))))
code_mode, made = timed(lambda: CodeMode(catalog, isolation="inline"))
searched = anyio.run(first_search, code_mode)
print(json.dumps({"build_catalog": build, "CodeMode(catalog)": made, "first search": searched}))
"""
"""One fresh process's in-process steps: each starts, as a real one does, with no term memo or index in memory."""


def in_process(config: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each step, a fresh process per measurement and index-cache setting."""
    steps: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeat):
        for label, cache in (("no index cache (builds the index)", "off"), ("index read from the cache", "on")):
            done = subprocess.run(
                [sys.executable, "-c", IN_PROCESS, str(config)],
                check=True,
                capture_output=True,
                text=True,
                env={**os.environ, "CODEMODE_CACHE": cache},
            )
            for step, (wall, cpu) in json.loads(done.stdout).items():
                if step == "first search":
                    step = f"first search, {label}"
                elif cache == "on":
                    continue  # reading the catalog does not depend on the index cache: counted once
                steps.setdefault(step, []).append((wall, cpu))
    return {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in steps.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="check that it runs: 1,000 tools, one run each, one import floor"
    )
    args = parser.parse_args()
    if args.quick:
        args.tools, args.repeat = 1_000, 1
    codemode = [sys.executable, "-m", "codemode"]  # the program, as `codemode` runs it
    floors = ("codemode.cli._search", "codemode.cli._exec", "codemode.cli._serve, codemode.mcp")
    if args.quick:
        floors = floors[:1]  # the other two only import more: seconds of a check that they run
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
                for module in floors
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
