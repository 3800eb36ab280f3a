"""Where the benchmarks find the shared data sets, and how one says it runs without them.

The labelled tool sets (BFCL, StableToolBench, MetaTool, GitHub MCP, OpenAPI examples) are not in the repository:
they live in `../shared/data` beside it, or wherever `CODEMODE_BENCH_DATA` points (a git worktree elsewhere).
"""

from __future__ import annotations

import os
from pathlib import Path

DATA = Path(os.environ.get("CODEMODE_BENCH_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


def missing(what: str, path: Path = DATA) -> bool:
    """Whether `path` is absent; if so, print that `what` was skipped, so the run still says what it measured."""
    if path.exists():
        return False
    print(f"{what}: skipped, {path} not found (set CODEMODE_BENCH_DATA to the shared data folder)")
    return True
