"""Search benchmark: index build time, query latency and ranking quality against two simple baselines.

Run from the project root:  .venv/bin/python benchmarks/search_bench.py [--repeats 3] [--sizes 1000,10000,100000]

- Build: `SearchIndex(tools)` on synthetic catalogs of 1k / 10k / 100k tools made from the union of the shared
  BFCL, StableToolBench, MetaTool and GitHub MCP catalogs (4,232 tools), each copy renamed `v<i>_<set>.<name>`.
  Descriptions repeat across copies, so postings are long: a worst case for query time, not a best case.
- Build: the first build in a fresh process (tokenizer and per-text caches empty) and the median of the rebuilds.
- Query latency: 300 real queries (100 per labelled set), first pass (per-term cache cold) and second pass.
- Quality: each labelled set alone and with every other catalog mixed in as distractors, for three rankers:
  ours (BM25F, stemming), plain BM25 (one bag of words over name + description + parameter names and
  descriptions, lowercase alphanumeric words split at camelCase and `_`, no stemming or stop words,
  k1=1.2, b=0.75), and keyword overlap (our re-implementation of the idea of the Vercel AI SDK's simple
  tool search: score = how many distinct query words, lowercase split at non-alphanumerics, appear as
  substrings of the lowercased name + description; ties by catalog order).
Medians over `--repeats` runs for timings; quality is deterministic.
Check that it runs (500 tools, one build; quality on 10 MetaTool queries): `--quick`.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from typing import TYPE_CHECKING

from _data import DATA, missing

from codemode.search import SearchIndex
from codemode.search.evaluation import LabelledQuery, SearchFunction, evaluate, load_queries, load_tools

if TYPE_CHECKING:
    from codemode.tools import Tool

LABELLED = ("bfcl", "stabletoolbench", "metatool")
CATALOGS = (*LABELLED, "github_mcp")
METATOOL_STEP = 10  # MetaTool has 21,041 queries; every 10th keeps the run short


def catalog(name: str) -> list[Tool]:
    return load_tools(DATA / name / "tools.jsonl")


def prefixed(tools: list[Tool], prefix: str) -> list[Tool]:
    return [replace(tool, name=f"{prefix}.{tool.name}", alias=f"{prefix}_{tool.alias}") for tool in tools]


def synthetic(size: int, union: list[Tool]) -> list[Tool]:
    out: list[Tool] = []
    copy = 0
    while len(out) < size:
        out.extend(prefixed(union, f"v{copy}")[: size - len(out)])
        copy += 1
    return out


def queries(name: str) -> list[LabelledQuery]:
    loaded = load_queries(DATA / name / "queries.jsonl")
    return loaded[::METATOOL_STEP] if name == "metatool" else loaded


_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def plain_words(text: str) -> list[str]:
    return [word.lower() for word in _WORDS.findall(text)]


def plain_text(tool: Tool) -> str:
    properties = tool.parameters.get("properties")
    parts = [tool.name, tool.description]
    if isinstance(properties, dict):
        for key, value in properties.items():
            parts.append(key)
            if isinstance(value, dict) and isinstance(value.get("description"), str):
                parts.append(str(value["description"]))
    return " ".join(parts)


def plain_bm25(tools: list[Tool], k1: float = 1.2, b: float = 0.75) -> SearchFunction:
    bags = [Counter(plain_words(plain_text(tool))) for tool in tools]
    lengths = [bag.total() for bag in bags]
    average = sum(lengths) / max(len(lengths), 1)
    postings: dict[str, list[tuple[int, int]]] = {}
    for doc, bag in enumerate(bags):
        for term, count in bag.items():
            postings.setdefault(term, []).append((doc, count))
    n = len(tools)

    def search(query: str, limit: int) -> list[str]:
        scores: dict[int, float] = {}
        for term in set(plain_words(query)):
            posting = postings.get(term, [])
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc, tf in posting:
                norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[doc] / average))
                scores[doc] = scores.get(doc, 0.0) + idf * norm
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
        return [tools[doc].name for doc, _ in best]

    return search


def keyword_overlap(tools: list[Tool]) -> SearchFunction:
    texts = [f"{tool.name} {tool.description}".lower() for tool in tools]

    def search(query: str, limit: int) -> list[str]:
        words = set(re.findall(r"[a-z0-9]+", query.lower()))
        scored = [(sum(word in text for word in words), doc) for doc, text in enumerate(texts)]
        best = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))[:limit]
        return [tools[doc].name for _, doc in best]

    return search


def ours(tools: list[Tool]) -> SearchFunction:
    index = SearchIndex(tools)
    return lambda query, limit: [tool.name for tool, _ in index.search(query, limit)]


def bench_build(sizes: list[int], repeats: int) -> None:
    """One fresh process per size, so the first build pays for empty tokenizer and per-text caches."""
    print("| tools | build cold ms | build warm ms | query p50 ms, first pass | p95 | query p50 ms, repeated | p95 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        command = [sys.executable, __file__, "--one-size", str(size), "--repeats", str(repeats)]
        row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        print(f"| {size:,} | " + " | ".join(f"{value:.2f}" for value in row) + " |", flush=True)


def measure_size(size: int, repeats: int) -> list[float]:
    """Build and query times for one catalog size, in this (fresh) process."""
    union = [tool for name in CATALOGS for tool in prefixed(catalog(name), name)]
    tools = synthetic(size, union)
    sample = [q.query for name in LABELLED for q in queries(name)[:100]]
    builds, first, repeated = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        index = SearchIndex(tools)
        builds.append((time.perf_counter() - start) * 1000)
        for times in (first, repeated):
            for query in sample:
                start = time.perf_counter()
                index.search(query, 5)
                times.append((time.perf_counter() - start) * 1000)
    warm = statistics.median(builds[1:]) if len(builds) > 1 else builds[0]
    return [builds[0], warm, *quantiles(first), *quantiles(repeated)]


def quantiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def bench_quality(sets: tuple[str, ...], most: int | None) -> None:
    """Each labelled set's quality, alone and mixed, for the three rankers; `most` queries a set if given."""
    every = {name: prefixed(catalog(name), name) for name in CATALOGS}
    mixed = [tool for other in CATALOGS for tool in every[other]]
    rankers = {"ours": ours, "plain BM25": plain_bm25, "keyword overlap": keyword_overlap}
    mixed_rankers = {ranker_name: make(mixed) for ranker_name, make in rankers.items()}  # the same for every set
    print("| data set | catalog | ranker | recall@5 | nDCG@10 | MRR@10 | p50 ms |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name in sets:
        labelled = [
            LabelledQuery(query=q.query, relevant=frozenset(f"{name}.{n}" for n in q.relevant))
            for q in queries(name)[:most]
        ]
        for label, tools in ((f"{len(every[name]):,} alone", every[name]), (f"{len(mixed):,} mixed", mixed)):
            for ranker_name, make in rankers.items():
                search = mixed_rankers[ranker_name] if tools is mixed else make(tools)
                report = evaluate(tools, labelled, k=5, search=search)
                print(
                    f"| {name} ({len(labelled)} q) | {label} | {ranker_name} | {report.recall_at_k:.3f} | "
                    f"{report.ndcg_at_10:.3f} | {report.mrr_at_10:.3f} | {report.p50_ms:.2f} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="check that it runs: 500 tools, 10 queries")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.sizes = 1, "500"
    if missing("the whole search benchmark (it needs the labelled sets)"):
        return
    if args.one_size:
        print(json.dumps(measure_size(args.one_size, args.repeats)))
        return
    print(f"Python {sys.version.split()[0]}\n")
    bench_build([int(size) for size in args.sizes.split(",")], args.repeats)
    if not args.skip_quality:
        print()
        bench_quality(("metatool",), 10) if args.quick else bench_quality(LABELLED, None)


if __name__ == "__main__":
    main()
