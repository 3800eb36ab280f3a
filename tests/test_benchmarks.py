"""Every benchmark script runs in its quick mode and prints its table: that they run, never their numbers.

Each script in `benchmarks/` is found by globbing, so a new one is covered as soon as it lands; one without
`--quick` fails here until it has one.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(path.name for path in BENCHMARKS.glob("*.py") if not path.name.startswith("_"))
"""The `*_bench.py` scripts and the others beside them (`stub_sizes.py`); `_*.py` are their shared helpers."""

FAST = {"machine_bench.py", "pipe_floor_bench.py", "stub_sizes.py"}
"""The scripts whose quick mode takes under two seconds here; the others are marked slow."""


def _shared_data() -> Path:
    """Where the benchmarks look for the shared data sets (their own rule, read from `benchmarks/_data.py`)."""
    spec = importlib.util.spec_from_file_location("_benchmark_data", BENCHMARKS / "_data.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = module.DATA
    assert isinstance(data, Path)
    return data


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


DATA = _shared_data()
SKIPPED_DATA = f"skipped, {DATA} not found"
PRINTS: dict[str, list[str]] = {
    "confinement_bench.py": [
        "| library | import | build | load | BPF instructions | getppid before | after | a file read after |",
        "| case | confined (6 layers) | unconfined | ratio |",
    ],
    "economy_bench.py": (
        ["| approach | up front (once), bytes |", "| codemode | bytes announced | per tool | tokens |"]
        if DATA.exists()
        else [SKIPPED_DATA]
    ),
    "run_per_process_bench.py": [
        "peak private memory of the host and all its processes:",
        "trivial runs back to back:",
        "start-up until the first run",
    ],
    "hybrid_bench.py": (
        ["hybrid search: skipped, the `semantic` extra is not installed"]
        if not _installed("wordllama")
        else ["| data set | ranker | recall@5 | nDCG@10 | MRR@10 | p50 ms | p95 ms |"]
        if DATA.exists()
        else [SKIPPED_DATA]
    ),
    "machine_bench.py": [
        "| the child computes before it answers | round trip minus that | the child's write of its answer |"
    ],
    "openapi_bench.py": [
        "| load | median |",
        "| call | median | floor | ratio |",
        "| 3.0-petstore.json |" if (DATA / "openapi").exists() else f"skipped, {DATA / 'openapi'} not found",
    ],
    "pipe_floor_bench.py": ["| host waits by / worker waits by | round trip | host CPU | worker CPU |"],
    "sandbox_bench.py": [
        "| trivial (`return 1`) |",
        "| speed guard | measured | met |" if _installed("pydantic_monty") else "Speed guard against Monty: skipped",
    ],
    "search_bench.py": (
        ["| tools | build cold ms |", "| data set | catalog | ranker | recall@5 | nDCG@10 | MRR@10 | p50 ms |"]
        if DATA.exists()
        else [SKIPPED_DATA]
    ),
    "startup_bench.py": ["| what | wall s | CPU s |", "| in process: first search, index read from the cache |"],
    "stub_sizes.py": ["| dataset | tools | stub med / p90 |"] if DATA.exists() else [SKIPPED_DATA],
    "tool_result_bench.py": ["| run | host CPU | worker CPU | wall | host CPU over `[]` |", "| step | 4 KB | 200 KB |"],
    "tracing_bench.py": ["| mode | search + 5 calls (7 spans) | overhead | trivial run (1 span) | overhead |"],
}
"""Lines (or their starts) each script must print; a script not listed must print a Markdown table."""


def _run(script: str, *arguments: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.process
@pytest.mark.parametrize(
    "script", [pytest.param(name, marks=() if name in FAST else pytest.mark.slow) for name in SCRIPTS]
)
def test_each_benchmark_runs_in_its_quick_mode_and_prints_its_table(script: str) -> None:
    """`python benchmarks/<script> --quick` exits 0 and prints the lines its full run reports."""
    if "--quick" not in (BENCHMARKS / script).read_text(encoding="utf-8"):
        pytest.fail(
            f"benchmarks/{script} has no --quick: add one (a few seconds, tiny sizes and repeat counts, "
            "the same code paths as the full run) so that this test can check it still runs"
        )
    done = _run(script, "--quick")
    assert done.returncode == 0, f"{script} --quick failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    lines = done.stdout.splitlines()
    expected = PRINTS.get(script)
    if expected is None:
        assert any(line.startswith("|---") for line in lines), (
            f"{script} printed no Markdown table; if it reports otherwise, add the line it must print to PRINTS "
            f"in tests/test_benchmarks.py:\n{done.stdout}"
        )
        return
    for start in expected:
        assert any(start in line for line in lines), f"{script} --quick did not print {start!r}:\n{done.stdout}"


def test_a_benchmark_without_the_shared_data_says_what_it_skipped_and_exits_0(tmp_path: Path) -> None:
    """With no shared data sets, a benchmark that needs them prints what it skipped and exits 0."""
    absent = tmp_path / "no-data"
    done = _run("stub_sizes.py", "--quick", CODEMODE_BENCH_DATA=str(absent))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"stub sizes (they are measured on the shared tool sets): skipped, {absent} not found "
        "(set CODEMODE_BENCH_DATA to the shared data folder)\n"
    )
