"""Hybrid search (BM25F + WordLlama static embeddings) against the default BM25F: quality, latency, start-up.

Needs the `semantic` extra. Prints markdown tables for `benchmarks/results_hybrid.md`:

- quality on each labelled set alone (MetaTool: every 10th query, as in `results_search.md`), all queries and
  the two halves used for tuning ("dev": even crc32 of the query) and checking ("held out": odd);
- build and query time on synthetic catalogs (copies of the union of the shared catalogs with `v<i>` name
  prefixes), cold (empty embedding cache) and warm (second start, vectors read from the cache file).

Run from the project root: `.venv/bin/python benchmarks/hybrid_bench.py [--sizes 1000 10000] [--queries 300]`.
Check that it runs (quality on 20 MetaTool queries; 300 tools, 20 timed queries): `--quick`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import zlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from _data import DATA, missing

from codemode.search import SearchIndex
from codemode.search.evaluation import LabelledQuery, SearchReport, evaluate, load_queries, load_tools, percentile

try:
    from codemode.search.hybrid import HybridSearch
except ImportError:  # the `semantic` extra is not installed: `main` says so and skips
    HybridSearch = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from codemode.search.evaluation import SearchFunction
    from codemode.tools import Tool

LABELLED = ("bfcl", "stabletoolbench", "metatool")
CATALOGS = (*LABELLED, "github_mcp")


def catalog(name: str) -> list[Tool]:
    return load_tools(DATA / name / "tools.jsonl")


def queries(name: str) -> list[LabelledQuery]:
    found = load_queries(DATA / name / "queries.jsonl")
    return found[::10] if name == "metatool" else found


def prefixed(tools: list[Tool], prefix: str) -> list[Tool]:
    return [replace(tool, name=f"{prefix}.{tool.name}", alias=f"{prefix}_{tool.alias}") for tool in tools]


def bm25(tools: list[Tool]) -> SearchFunction:
    index = SearchIndex(tools)
    return lambda query, limit: [tool.name for tool, _ in index.search(query, limit)]


def hybrid(tools: list[Tool], cache: Path) -> SearchFunction:
    index = HybridSearch(tools, cache_dir=cache)
    index.prepare()
    return lambda query, limit: [tool.name for tool, _ in index.search(query, limit)]


def row(label: str, ranker: str, report: SearchReport) -> str:
    return (
        f"| {label} | {ranker} | {report.recall_at_k:.3f} | {report.ndcg_at_10:.3f} | {report.mrr_at_10:.3f} "
        f"| {report.p50_ms:.2f} | {report.p95_ms:.2f} |"
    )


def bench_quality(cache: Path, sets: tuple[str, ...], most: int | None) -> None:
    """Quality of both rankers on each labelled set, its halves too; `most` queries a set if given."""
    print("| data set | ranker | recall@5 | nDCG@10 | MRR@10 | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in sets:
        tools, labelled = catalog(name), queries(name)[:most]
        halves = {
            "all": labelled,
            "dev": [q for q in labelled if zlib.crc32(q.query.encode()) % 2 == 0],
            "held out": [q for q in labelled if zlib.crc32(q.query.encode()) % 2 == 1],
        }
        rankers = {"bm25": bm25(tools), "hybrid": hybrid(tools, cache)}
        for half, subset in halves.items():
            for ranker, search in rankers.items():
                label = f"{name} {half} ({len(subset)} q, {len(tools):,} tools)"
                print(row(label, ranker, evaluate(tools, subset, k=5, search=search)), flush=True)


def bench_scale(sizes: list[int], count: int, cache: Path) -> None:
    union = [tool for name in CATALOGS for tool in prefixed(catalog(name), name)]
    mixed = [q for name in LABELLED for q in queries(name)[:: max(1, len(queries(name)) * 3 // count)]][:count]
    print("| tools | build cold s | build warm s | bm25 p50 ms | hybrid p50 ms | hybrid p95 ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        tools: list[Tool] = []
        copy = 0
        while len(tools) < size:
            tools.extend(prefixed(union, f"v{copy}")[: size - len(tools)])
            copy += 1
        folder = cache / f"scale-{size}"
        started = time.perf_counter()
        HybridSearch(tools, cache_dir=folder).prepare()
        cold = time.perf_counter() - started
        started = time.perf_counter()
        index = HybridSearch(tools, cache_dir=folder)
        index.prepare()
        warm = time.perf_counter() - started
        plain = SearchIndex(tools)
        times: dict[str, list[float]] = {"bm25": [], "hybrid": []}
        for labelled in mixed:
            for ranker, search in (("bm25", plain.search), ("hybrid", index.search)):
                begun = time.perf_counter()
                search(labelled.query, 10)
                times[ranker].append((time.perf_counter() - begun) * 1000.0)
        print(
            f"| {size:,} | {cold:.2f} | {warm:.2f} | {statistics.median(times['bm25']):.2f} "
            f"| {statistics.median(times['hybrid']):.2f} | {percentile(times['hybrid'], 95.0):.2f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=300, help="queries timed per catalog size")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--quick", action="store_true", help="check that it runs: 20 queries, 300 tools")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.queries = [300], 20
    if HybridSearch is None:
        print('hybrid search: skipped, the `semantic` extra is not installed (pip install "codemode[semantic]")')
        return
    if missing("the whole hybrid benchmark (it needs the labelled sets)"):
        return
    with tempfile.TemporaryDirectory() as folder:
        if not args.skip_quality:
            if args.quick:
                bench_quality(Path(folder), ("metatool",), 20)
            else:
                bench_quality(Path(folder), LABELLED, None)
            print()
        bench_scale(args.sizes, args.queries, Path(folder))


if __name__ == "__main__":
    main()
