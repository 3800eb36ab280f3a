"""What OS-level confinement costs, and the candidate libraries measured against each other.

Usage: python benchmarks/confinement_bench.py [--repeat 200]
Check that it runs (one start and one run per case, 1,000 system calls a round): `--quick`.

Part 1, the libraries (each in a fresh process, since loading a filter or a ruleset cannot be undone): import
time (with `ctypes` already imported), the time to build and load the worker's allow-list (seccomp) or a
no-access ruleset (Landlock), the filter's length in BPF instructions, and what one cheap system call
(`getppid`, the fastest of 15 rounds of 200,000) costs before and after. A
library that is not installed is skipped (`pip install pyseccomp py-landlock landlock` for the peers).

Part 2, the sandbox: a one-worker process sandbox confined as shipped against the same worker with confinement
switched off (a benchmark-only entry point), for worker start-up, a trivial run, a 20-line script, 100 host
calls and a 100k-iteration loop. Medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox import Limits, Sandbox  # noqa: E402
from sandbox._host.template import TEMPLATE as WORKER  # noqa: E402

SYSCALLS = 200_000

LIBRARY_PROBE = r"""
import ctypes, ctypes.util, json, os, sys, time
sys.path.insert(0, sys.argv[2])
which, calls = sys.argv[1], int(sys.argv[3])
out = {}
def per_call():
    rounds = []
    for _ in range(15):
        started = time.perf_counter_ns()
        for _ in range(calls):
            os.getppid()
        rounds.append((time.perf_counter_ns() - started) / calls)
    return min(rounds)  # the least disturbed round: the machine is shared
out["syscall_ns_before"] = per_call()
started = time.perf_counter()
if which == "seccompy":
    import seccompy
    out["import_ms"] = (time.perf_counter() - started) * 1e3
    from sandbox._worker.confine.seccomp import build
    started = time.perf_counter()
    f = build()
    out["build_ms"] = (time.perf_counter() - started) * 1e3
    out["bpf_instructions"] = len(f.program) // 8
    started = time.perf_counter()
    f.load()
    out["load_ms"] = (time.perf_counter() - started) * 1e3
elif which == "pyseccomp":
    import errno, pyseccomp
    out["import_ms"] = (time.perf_counter() - started) * 1e3
    from sandbox._worker.confine.seccomp import ALLOWED, _SELF_ONLY
    started = time.perf_counter()
    f = pyseccomp.SyscallFilter(pyseccomp.ERRNO(errno.EPERM))
    for name in ALLOWED:
        f.add_rule(pyseccomp.ALLOW, name)
    for name in _SELF_ONLY:
        f.add_rule(pyseccomp.ALLOW, name, pyseccomp.Arg(0, pyseccomp.EQ, 0 if name == "prlimit64" else os.getpid()))
    out["build_ms"] = (time.perf_counter() - started) * 1e3
    r, w = os.pipe()
    with os.fdopen(w, "wb") as pipe:
        f.export_bpf(pipe)
    out["bpf_instructions"] = len(os.read(r, 1 << 20)) // 8
    started = time.perf_counter()
    f.load()
    out["load_ms"] = (time.perf_counter() - started) * 1e3
elif which == "landlockpy":
    import landlockpy
    out["import_ms"] = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    abi = landlockpy.abi_version()
    with landlockpy.Ruleset(handled_fs=landlockpy.fs_for_abi(abi), handled_net=landlockpy.net_for_abi(abi),
                            scoped=landlockpy.scope_for_abi(abi)) as ruleset:
        ruleset.restrict()
    out["load_ms"] = (time.perf_counter() - started) * 1e3
elif which == "py_landlock":
    import py_landlock
    out["import_ms"] = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    py_landlock.Landlock(strict=False).apply()
    out["load_ms"] = (time.perf_counter() - started) * 1e3
elif which == "landlock":
    import landlock
    out["import_ms"] = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    landlock.Ruleset().apply()
    out["load_ms"] = (time.perf_counter() - started) * 1e3
try:
    open("/etc/hostname").read()
    out["reads_a_file_after"] = True
except OSError:
    out["reads_a_file_after"] = False
out["syscall_ns_after"] = per_call()
print(json.dumps(out))
"""

LIBRARIES = {
    "seccompy": "seccompy",
    "pyseccomp": "pyseccomp",
    "landlockpy": "landlockpy",
    "py_landlock": "py-landlock",
    "landlock": "landlock",
}

UNCONFINED = (
    "-c",
    (
        "import sandbox._worker.confine.apply as c\n"
        "from sandbox._shared.confinement import LAYERS\n"
        "c.enclose = lambda config, keep: dict.fromkeys(LAYERS, 'off for the benchmark')\n"
        "c.enclose_child = lambda keep, missing: None\n"
        "c.seal_template = c.seal_child = lambda missing: None\n"
        "from sandbox._worker.main import main\n"
        "main()\n"
    ),
)
"""A template that starts like a sandbox's but skips confinement: the baseline, never used outside this file."""

SCRIPT_20 = """\
import json, math
data = [{'id': i, 'score': math.sqrt(i)} for i in range(50)]
best = sorted(data, key=lambda d: d['score'], reverse=True)[:5]
total = 0
for item in data:
    if item['id'] % 3 == 0:
        total += item['score']
names = {str(d['id']): round(d['score'], 2) for d in best}
text = json.dumps(names)
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def norm(self):
        return math.hypot(self.x, self.y)
points = [Point(i, i + 1) for i in range(10)]
norms = [round(p.norm(), 3) for p in points]
try:
    {}['missing']
except KeyError:
    pass
return {'total': round(total, 3), 'text': text, 'norms': norms}
"""


def libraries(syscalls: int) -> None:
    print("| library | import | build | load | BPF instructions | getppid before | after | a file read after |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for module, name in LIBRARIES.items():
        done = subprocess.run(
            [sys.executable, "-c", LIBRARY_PROBE, module, str(ROOT), str(syscalls)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(f"| {name} | not installed or failed: {done.stderr.strip().splitlines()[-1][:80]} |")
            continue
        r = json.loads(done.stdout)
        build = f"{r['build_ms']:.2f} ms" if "build_ms" in r else ""
        bpf = str(r.get("bpf_instructions", ""))
        print(
            f"| {name} | {r['import_ms']:.1f} ms | {build} | {r['load_ms']:.2f} ms | {bpf} | "
            f"{r['syscall_ns_before']:.0f} ns | {r['syscall_ns_after']:.0f} ns | {r['reads_a_file_after']} |"
        )


async def echo(value: object) -> object:
    return value


CASES = {
    "trivial": ("trivial run", "return 1", 1),
    "script20": ("20-line script", SCRIPT_20, 1),
    "calls100": ("100 sequential host calls", "for i in range(100):\n    await echo(value=i)\nreturn 1", 10),
    "loop100k": ("100k-iteration loop", "total = 0\nfor i in range(100_000):\n    total += i\nreturn total", 10),
}
"""Each case: its label, its code, and how many times fewer it is repeated than `--repeat`."""


def opened(entry: tuple[str, ...]) -> Sandbox:
    sandbox = Sandbox(max_runs=1, limits=Limits(timeout=30.0))
    assert sandbox._template is not None
    sandbox._template.entry = entry
    return sandbox


async def timed_start(entry: tuple[str, ...]) -> float:
    started = time.perf_counter()
    async with opened(entry):
        return time.perf_counter() - started


async def timed_run(sandbox: Sandbox, code: str) -> float:
    started = time.perf_counter()
    result = await sandbox.run(code, functions={"echo": echo})
    elapsed = time.perf_counter() - started
    assert result.error is None, result.error
    return elapsed


async def interleaved(repeat: int, *, starts: int, fewest: int) -> dict[str, tuple[float, float]]:
    """Median of each case, confined and not, taken in alternation so the machine's load falls on both alike."""
    started: tuple[list[float], list[float]] = ([], [])
    for _ in range(starts):
        for times, entry in zip(started, (WORKER, UNCONFINED), strict=True):
            times.append(await timed_start(entry))
    out = {"start": (statistics.median(started[0]), statistics.median(started[1]))}
    async with opened(WORKER) as confined, opened(UNCONFINED) as unconfined:
        assert len(confined.layers.active) == 6, confined.layers
        assert unconfined.layers.active == (), unconfined.layers
        for key, (_, code, fewer) in CASES.items():
            times: tuple[list[float], list[float]] = ([], [])
            for _ in range(max(repeat // fewer, fewest)):
                times[0].append(await timed_run(confined, code))
                times[1].append(await timed_run(unconfined, code))
            out[key] = (statistics.median(times[0]), statistics.median(times[1]))
    return out


def fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


async def sandbox_costs(repeat: int, starts: int, fewest: int) -> None:
    results = await interleaved(repeat, starts=starts, fewest=fewest)
    print("| case | confined (6 layers) | unconfined | ratio |")
    print("|---|---:|---:|---:|")
    labels = {"start": "worker start-up (entering `Sandbox(max_runs=1)`)"} | {k: v[0] for k, v in CASES.items()}
    for key, label in labels.items():
        confined, unconfined = results[key]
        print(f"| {label} | {fmt(confined)} | {fmt(unconfined)} | {confined / unconfined:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--skip-libraries", action="store_true")
    parser.add_argument("--quick", action="store_true", help="check that it runs: one start and one run per case")
    options = parser.parse_args()
    starts, syscalls, fewest = (1, 1_000, 1) if options.quick else (7, SYSCALLS, 5)
    if options.quick:
        options.repeat = 1
    print(f"Python {sys.version.split()[0]}, kernel {os.uname().release}\n")
    if not options.skip_libraries:
        libraries(syscalls)
        print()
    anyio.run(sandbox_costs, options.repeat, starts, fewest)


if __name__ == "__main__":
    main()
