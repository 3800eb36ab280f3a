"""Sandbox run time side by side: plain CPython (the floor), our sandbox inline and in a process, and two peers.

Cases: a trivial script, a realistic 20-line script, 100 sequential host calls (async and sync host function),
100 concurrent calls of a 50 ms host function under `asyncio.gather`, and a 100k-iteration loop. Contestants:
plain `compile`+`exec` (async bodies run as an `async def` on the same loop), `Sandbox(isolation="inline")`,
`Sandbox(isolation="process")`, a process per run (start-up timed apart), smolagents `LocalPythonExecutor` (sync tools
only, no `await`) and pydantic-monty (`AsyncMonty`, one warm worker, one session reused with its suspension cap
raised). A peer that is not installed is skipped with a note. Every contestant's value is checked against the
floor's. Each cell runs one warm-up, then up to `--repeat` timed runs within a `--budget` of seconds (at least
`--min-repeat`); cells show median, p90 and the median's ratio to the floor. Contestants share the load: round after
round, each takes one timed run (`--order interleaved`, the default: every run comes right after another
contestant's, on cold caches, as a run does between two model turns) or an untimed run and then `--block` timed
runs in a row (`--order consecutive`: the warm steady state, as the issue's first table measured). Also
reported: per-call overhead of one host call, the policy compile of the 20-line script (cold, and the cached
lookup), and the speed guard (process isolation within 10x Monty's trivial run and 4x its per-call cost).

Run: .venv/bin/python benchmarks/sandbox_bench.py --repeat 200
Check that it runs (one timed run per cell, a 1k-iteration loop): `--quick`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import inspect
import io
import json
import os
import platform
import statistics
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox import Limits, Sandbox
from sandbox._compiler import compile as sandbox_compile

Runner = Callable[[], Any]  # sync, or returning an awaitable; returns the script's value
SLOW_MS = 50.0

TRIVIAL = "return 1"
SCRIPT20 = """\
def label(n):
    return "even" if n % 2 == 0 else "odd"

words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
counts = {}
for i, word in enumerate(words):
    key = label(len(word))
    counts[key] = counts.get(key, 0) + 1
squares = [n * n for n in range(20) if n % 3]
lengths = {w: len(w) for w in words}
lines = []
for word, size in sorted(lengths.items(), key=lambda kv: (-kv[1], kv[0])):
    lines.append(f"{word:>8}: {size}")
summary = "{} words, {} even".format(len(words), counts.get("even", 0))
print(summary)
best = max(words, key=len)
report = "\\n".join(lines)
result = {"counts": counts, "total": sum(squares), "best": best, "summary": summary}
result["report"] = report
return result"""
CALLS = "t = 0\nfor i in range(100):\n    t += {prefix}echo(i)\nreturn t"
GATHER = "import asyncio\nr = await asyncio.gather(*[slow(i) for i in range(100)])\nreturn len(r)"
LOOP = "t = 0\nfor i in range({n}):\n    if i % 3:\n        t += i * i\nreturn t"


async def echo_async(x: Any) -> Any:
    return x


def echo_sync(x: Any) -> Any:
    return x


async def slow(x: Any) -> Any:
    await asyncio.sleep(SLOW_MS / 1000)
    return x


@dataclass(frozen=True, kw_only=True)
class Case:
    key: str
    label: str
    body: str
    """The model's code as our sandbox takes it (top-level `return`, `await` on host calls)."""
    peer_body: str = ""
    """The same for peers and the floor where it differs (host calls not awaited: a sync host function)."""
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)
    is_async: bool = False
    """Whether the floor runs the body as an `async def`."""

    @property
    def plain(self) -> str:
        return self.peer_body or self.body

    @property
    def expression_form(self) -> str:
        """The body with its final `return X` as a bare `X` (smolagents and Monty return the last expression)."""
        head, _, last = self.plain.rpartition("\n")
        assert last.startswith("return ")
        return f"{head}\n{last.removeprefix('return ')}".lstrip("\n")


CASES = [
    Case(key="trivial", label="trivial (`return 1`)", body=TRIVIAL),
    Case(key="script20", label="20-line script", body=SCRIPT20),
    Case(
        key="calls_async",
        label="100 sequential calls, async host fn",
        body=CALLS.format(prefix="await "),
        functions={"echo": echo_async},
        is_async=True,
    ),
    Case(
        key="calls_sync",
        label="100 sequential calls, sync host fn",
        body=CALLS.format(prefix="await "),
        peer_body=CALLS.format(prefix=""),
        functions={"echo": echo_sync},
    ),
    Case(
        key="gather",
        label="100 x 50 ms calls under gather (wall)",
        body=GATHER,
        functions={"slow": slow},
        is_async=True,
    ),
    Case(key="loop", label="100k-iteration loop", body=LOOP.format(n="100_000")),
]
QUICK_CASES = [*CASES[:-1], Case(key="loop", label="1k-iteration loop", body=LOOP.format(n="1_000"))]
"""`--quick`: the same cases with a loop a peer such as smolagents runs in milliseconds, not seconds."""


# -- contestants -----------------------------------------------------------------------------------------------


class Floor:
    """Plain CPython: the body as a function, compiled each run (the floor) or once (`precompiled`)."""

    def __init__(self, *, precompiled: bool) -> None:
        self.precompiled = precompiled
        self.name = "CPython exec, precompiled" if precompiled else "CPython compile+exec (floor)"

    def runner(self, case: Case) -> Runner | str:
        keyword = "async def" if case.is_async else "def"
        source = f"{keyword} _main_():\n{textwrap.indent(case.plain, '    ')}\n"
        functions = {**case.functions, "asyncio": asyncio}
        compiled = compile(source, "<floor>", "exec", dont_inherit=True)
        precompiled = self.precompiled

        def run() -> Any:
            code = compiled if precompiled else compile(source, "<floor>", "exec", dont_inherit=True)
            namespace = {**functions, "print": functools.partial(print, file=io.StringIO())}
            exec(code, namespace)
            return namespace["_main_"]()

        return run


class Ours:
    def __init__(self, sandbox: Sandbox, name: str) -> None:
        self.sandbox = sandbox
        self.name = name

    def runner(self, case: Case) -> Runner | str:
        async def run() -> Any:
            result = await self.sandbox.run(case.body, functions=case.functions)
            if not result.ok:
                raise RuntimeError(f"{self.name} failed on {case.key}: {result.error}")
            return result.value

        return run


class Smolagents:
    name = "smolagents LocalPythonExecutor"

    def __init__(self, executor_class: type) -> None:
        self.executor_class = executor_class

    def runner(self, case: Case) -> Runner | str:
        if case.is_async:
            return "n/a (no `await`; tools are sync)"
        executor = self.executor_class(additional_authorized_imports=[], additional_functions=case.functions)
        executor.send_tools({})
        source = case.expression_form
        return lambda: executor(source).output


class Monty:
    name = "pydantic-monty 1.4.0"

    def __init__(self, session: Any, collector: type) -> None:
        self.session = session
        self.collector = collector

    def runner(self, case: Case) -> Runner | str:
        source = case.expression_form

        async def run() -> Any:
            return await self.session.feed_run(source, external_lookup=case.functions, print_callback=self.collector())

        return run


# -- timing ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Timing:
    median: float
    """Seconds."""
    p90: float
    runs: int
    value: Any = None


async def call(runner: Runner) -> Any:
    value = runner()
    if inspect.isawaitable(value):
        value = await value
    return value


async def measure(runner: Runner, args: argparse.Namespace) -> Timing:
    """One warm-up run (also the probe that sizes the repetitions), then the timed runs."""
    gc.collect()
    start = time.perf_counter()
    value = await call(runner)
    probe = time.perf_counter() - start
    if probe < 0.25:
        await call(runner)  # a second warm-up for fast cells: caches, worker compile caches
    runs = max(args.min_repeat, min(args.repeat, int(args.budget / max(probe, 1e-6))))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await call(runner)
        samples.append(time.perf_counter() - start)
    return Timing(median=statistics.median(samples), p90=p90(samples), runs=runs, value=value)


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# -- the run ---------------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Report:
    cases: list[Case]
    contestants: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], Timing | str] = field(default_factory=dict)
    extras: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def bench_cases(contestants: list[Any], report: Report, args: argparse.Namespace) -> None:
    """Every case with all contestants taking turns, round after round, so load is shared (see `--order`)."""
    report.contestants += [c.name for c in contestants]
    floor: dict[str, Any] = {}
    for case in report.cases:
        runners: dict[str, Runner] = {}
        for contestant in contestants:
            runner = contestant.runner(case)
            if isinstance(runner, str):
                report.cells[contestant.name, case.key] = runner
            else:
                runners[contestant.name] = runner
        gc.collect()
        values, probe = {}, 0.0
        for name, runner in runners.items():
            start = time.perf_counter()
            values[name] = await call(runner)
            probe += time.perf_counter() - start
            await call(runner)  # a second warm-up: caches, worker compile caches
        block = args.block if args.order == "consecutive" else 1
        rounds = max(args.min_repeat, min(args.repeat, int(args.budget * len(runners) / max(probe, 1e-6))))
        rounds = max(1, -(-rounds // block))  # the same number of timed runs in either order
        samples: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(rounds):
            for name, runner in runners.items():
                if block > 1:
                    await call(runner)  # untimed: the block's runs follow this contestant's own, not another's
                for _ in range(block):
                    start = time.perf_counter()
                    await call(runner)
                    samples[name].append(time.perf_counter() - start)
        for name, timings in samples.items():
            timing = Timing(median=statistics.median(timings), p90=p90(timings), runs=len(timings), value=values[name])
            report.cells[name, case.key] = timing
            if case.key in floor and not same(timing.value, floor[case.key]):
                report.notes.append(f"{name} returned {timing.value!r} on {case.key}, the floor {floor[case.key]!r}")
            floor.setdefault(case.key, timing.value)
            print(f"  {name:32} {case.key:12} {fmt(timing.median)} (n={len(timings)})", file=sys.stderr)


async def open_ours(isolation: str, stack: contextlib.AsyncExitStack, report: Report) -> Ours:
    name = f"sandbox {isolation}" + (" (a process per run)" if isolation == "process" else "")
    limits = Limits(concurrent_calls=100)  # the default 32 in flight would make the gather case 4 waves
    start = time.perf_counter()
    sandbox = await stack.enter_async_context(Sandbox(isolation=isolation, limits=limits, max_runs=2))  # type: ignore[arg-type]
    first = await sandbox.run(TRIVIAL)
    assert first.ok, first.error
    report.extras.append((f"{name}: start-up (enter + first run)", fmt(time.perf_counter() - start)))
    return Ours(sandbox, name)


async def bench_inline_extras(sandbox: Sandbox, report: Report, args: argparse.Namespace) -> None:
    async def default_limits_gather() -> Any:
        return (await sandbox.run(GATHER, functions={"slow": slow}, limits=Limits())).value

    timing = await measure(default_limits_gather, args)
    report.extras.append(("sandbox inline: gather case with default `Limits()` (32 in flight)", cell(timing)))

    async def cold_script() -> Any:
        sandbox_compile._cache.clear()
        return (await sandbox.run(SCRIPT20)).value

    timing = await measure(cold_script, args)
    report.extras.append(("sandbox inline: 20-line script, compile cache cleared each run", cell(timing)))


async def bench_compile(report: Report, args: argparse.Namespace) -> None:
    from RestrictedPython import compile_restricted

    source = SCRIPT20.replace("return result", "result")
    cold = await measure(lambda: sandbox_compile._compile_uncached(SCRIPT20, None), args)
    cached = await measure(lambda: sandbox_compile.compile_code(SCRIPT20, max_source=1 << 20), args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "Prints, but never reads 'printed' variable"
        plain_rp = await measure(lambda: compile_restricted(source, "<rp>", "exec"), args)
    cpython = await measure(lambda: compile(source, "<cpython>", "exec", dont_inherit=True), args)
    report.extras += [
        ("20-line script: our policy compile, cold (`sandbox._compiler.compile._compile_uncached`)", cell(cold)),
        (
            "20-line script: our compile, cached (`sandbox._compiler.compile.compile_code`, sha256 + lookup)",
            cell(cached),
        ),
        ("20-line script: RestrictedPython `compile_restricted`, default policy", cell(plain_rp)),
        ("20-line script: CPython `compile`", cell(cpython)),
    ]


def open_smolagents(report: Report) -> Smolagents | None:
    try:
        from smolagents import LocalPythonExecutor
    except ImportError:
        report.notes.append("smolagents is not installed: skipped (`.venv/bin/pip install smolagents`)")
        return None
    return Smolagents(LocalPythonExecutor)


async def open_monty(stack: contextlib.AsyncExitStack, report: Report, args: argparse.Namespace) -> Monty | None:
    try:
        import pydantic_monty
    except ImportError:
        report.notes.append("pydantic-monty is not installed: skipped (`.venv/bin/pip install pydantic-monty==1.4.0`)")
        return None
    if pydantic_monty.__version__ != "1.4.0":
        report.notes.append(f"pydantic-monty is {pydantic_monty.__version__}, not the 1.4.0 this benchmark targets")
    start = time.perf_counter()
    pool = await stack.enter_async_context(pydantic_monty.AsyncMonty(min_processes=1, max_processes=1))
    async with pool.checkout() as session:
        await session.feed_run("1")
    report.extras.append(("pydantic-monty: start-up (enter + checkout + first run)", fmt(time.perf_counter() - start)))

    async def fresh_session() -> Any:
        async with pool.checkout() as session:
            return await session.feed_run("1")

    report.extras.append(
        ("pydantic-monty: trivial with a fresh checkout per run", cell(await measure(fresh_session, args)))
    )
    session = await stack.enter_async_context(pool.checkout(limits={"max_suspensions": 10**9}))
    return Monty(session, pydantic_monty.CollectString)


# -- rendering -------------------------------------------------------------------------------------------------


def fmt(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds * 1e3:,.0f} ms"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:,.1f} µs"


def cell(timing: Timing | str, floor: Timing | str | None = None) -> str:
    if isinstance(timing, str):
        return timing
    text = f"{fmt(timing.median)} / {fmt(timing.p90)}"
    if isinstance(floor, Timing) and floor is not timing:
        text += f" (x{timing.median / floor.median:.1f})"
    return text


def per_call(report: Report, name: str, key: str) -> float | None:
    calls, trivial = report.cells.get((name, key)), report.cells.get((name, "trivial"))
    if isinstance(calls, Timing) and isinstance(trivial, Timing):
        return (calls.median - trivial.median) / 100
    return None


def render(report: Report, args: argparse.Namespace) -> str:
    floor_name = report.contestants[0]
    lines = [
        "| case | " + " | ".join(report.contestants) + " |",
        "|---|" + "---:|" * len(report.contestants),
    ]
    for case in report.cases:
        floor = report.cells[floor_name, case.key]
        row = [cell(report.cells.get((name, case.key), "skipped"), floor) for name in report.contestants]
        lines.append(f"| {case.label} | " + " | ".join(row) + " |")
    for key, label in (("calls_async", "async"), ("calls_sync", "sync")):
        values = [per_call(report, name, key) for name in report.contestants]
        row = ["n/a" if v is None else f"{v * 1e6:,.1f} µs" for v in values]
        lines.append(f"| one host call, {label} ((100 calls - trivial) / 100) | " + " | ".join(row) + " |")
    runs = ", ".join(
        f"{case.key} {min(t.runs for (n, k), t in report.cells.items() if k == case.key and isinstance(t, Timing))}"
        f"-{max(t.runs for (n, k), t in report.cells.items() if k == case.key and isinstance(t, Timing))}"
        for case in report.cases
    )
    lines += ["", f"Cells: median / p90 (x the floor's median). Timed runs per cell: {runs}.", ""]
    lines += ["| extra | median / p90 |", "|---|---:|", *(f"| {k} | {v} |" for k, v in report.extras)]
    lines += ["", *render_guard(report), ""]
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines)


def render_guard(report: Report) -> list[str]:
    """The speed guard kept: process isolation within 10x Monty's trivial run and 4x its per-call cost."""
    inline, process = "sandbox inline", "sandbox process (a process per run)"
    monty = next((name for name in report.contestants if name.startswith("pydantic-monty")), None)
    if monty is None:
        return ["Speed guard against Monty: skipped, pydantic-monty is not installed."]
    trivial = [report.cells.get((name, "trivial")) for name in (process, monty)]
    rows: list[tuple[str, float | None, float]] = [
        (
            "process trivial run <= 10x Monty's",
            trivial[0].median / trivial[1].median
            if isinstance(trivial[0], Timing) and isinstance(trivial[1], Timing)
            else None,
            10.0,
        )
    ]
    for key, label in (("calls_async", "async"), ("calls_sync", "sync")):
        ours, theirs = per_call(report, process, key), per_call(report, monty, key)
        rows.append((f"process host call, {label} fn, <= 4x Monty's", ours / theirs if ours and theirs else None, 4.0))
    out = ["| speed guard | measured | met |", "|---|---:|:---:|"]
    for label, ratio, limit in rows:
        met = "n/a" if ratio is None else "yes" if ratio <= limit else "**no**"
        out.append(f"| {label} | {'n/a' if ratio is None else f'x{ratio:.2f}'} | {met} |")
    out += ["", "| case | process / Monty | inline / Monty |", "|---|---:|---:|"]
    for case in report.cases:
        ours, theirs = report.cells.get((process, case.key)), report.cells.get((monty, case.key))
        mine = report.cells.get((inline, case.key))
        if isinstance(ours, Timing) and isinstance(theirs, Timing) and isinstance(mine, Timing):
            out.append(f"| {case.label} | x{ours.median / theirs.median:.2f} | x{mine.median / theirs.median:.2f} |")
    return out


def machine() -> str:
    model = ""
    with contextlib.suppress(OSError):
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "")
    system = f"{platform.system()} {platform.machine()}"
    return f"{system}, {os.cpu_count()} cores ({model}), Python {platform.python_version()}"


async def main(args: argparse.Namespace) -> None:
    report = Report(cases=QUICK_CASES if args.quick else CASES)
    async with contextlib.AsyncExitStack() as stack:
        inline = await open_ours("inline", stack, report)
        process = await open_ours("process", stack, report)
        peers = [open_smolagents(report), await open_monty(stack, report, args)]
        contestants = [Floor(precompiled=False), Floor(precompiled=True), inline, process]
        await bench_cases([*contestants, *(peer for peer in peers if peer is not None)], report, args)
        await bench_inline_extras(inline.sandbox, report, args)
    await bench_compile(report, args)
    command = f".venv/bin/python benchmarks/sandbox_bench.py {' '.join(sys.argv[1:])}".strip()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    order = (
        "interleaved (one run each per round)"
        if args.order == "interleaved"
        else f"consecutive (blocks of {args.block})"
    )
    print(f"Command: `{command}`\n\nMachine: {machine()}; load average at the end {load}; order: {order}\n")
    print(render(report, args))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=200, help="most timed runs per cell")
    parser.add_argument("--min-repeat", type=int, default=3, help="fewest timed runs per cell")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timed runs per cell, about")
    parser.add_argument(
        "--order",
        choices=("interleaved", "consecutive"),
        default="interleaved",
        help="one timed run per contestant per round (cold caches), or an untimed run and a block in a row (warm)",
    )
    parser.add_argument("--block", type=int, default=10, help="timed runs in a row per round with --order consecutive")
    parser.add_argument("--quick", action="store_true", help="check that it runs: one timed run per cell, a 1k loop")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.min_repeat, args.budget, args.block = 1, 1, 0.0, 1
    return args


if __name__ == "__main__":
    started = time.perf_counter()
    asyncio.run(main(parse_args()))
    print(f"\n(total {time.perf_counter() - started:.0f} s)", file=sys.stderr)
