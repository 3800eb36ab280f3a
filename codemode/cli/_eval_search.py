"""`codemode eval-search`: measure a search (BM25F, or the hybrid of the `semantic` extra) on JSONL data.

Prints recall@k, nDCG@10, MRR@10 and per-query latency, as a short table or (with `--json`) as one JSON
object with the keys of `SearchReport.to_json`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from codemode.search.evaluation import evaluate, load_queries, load_tools

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `eval-search` subcommand."""
    parser = subparsers.add_parser(
        "eval-search",
        help="recall@k, nDCG@10, MRR and latency of the tool search on JSONL data",
        description="Rank labelled queries against a tool catalog with the BM25F or the hybrid search.",
    )
    parser.add_argument("--tools", type=Path, required=True, help='JSONL of {"name", "description", "parameters"}')
    parser.add_argument("--queries", type=Path, required=True, help='JSONL of {"query", "relevant": [names]}')
    parser.add_argument("--k", type=int, default=5, help="cut-off for recall (default: 5)")
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N queries")
    parser.add_argument(
        "--ranker",
        choices=("bm25", "hybrid"),
        default="bm25",
        help="bm25 (default) or hybrid: BM25F fused with embeddings (needs the `semantic` extra)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; exit status 2 when the input cannot be read."""
    if args.k < 1 or (args.limit is not None and args.limit < 1):
        print("codemode eval-search: `--k` and `--limit` must be positive", file=sys.stderr)
        return 2
    try:
        tools = load_tools(args.tools)
        queries = load_queries(args.queries)
    except (OSError, ValueError) as error:
        print(f"codemode eval-search: cannot read the data: {error}", file=sys.stderr)
        return 2
    if args.limit is not None:
        queries = queries[: args.limit]
    search = None
    if args.ranker == "hybrid":
        try:
            from codemode.search.hybrid import HybridSearch  # the optional `semantic` extra
        except ImportError as error:
            print(f"codemode eval-search: {error}", file=sys.stderr)
            return 2
        index = HybridSearch(tools)
        index.prepare()  # embed (or load from the cache) before the clock starts

        def search(query: str, limit: int) -> list[str]:
            return [tool.name for tool, _ in index.search(query, limit)]

    report = evaluate(tools, queries, k=args.k, search=search)
    if args.json:
        print(json.dumps(report.to_json()))
        return 0
    rows = [
        ("tools", f"{report.tools}"),
        ("queries", f"{report.queries}"),
        (f"recall@{report.k}", f"{report.recall_at_k:.3f}"),
        ("nDCG@10", f"{report.ndcg_at_10:.3f}"),
        ("MRR@10", f"{report.mrr_at_10:.3f}"),
        ("p50 ms", f"{report.p50_ms:.3f}"),
        ("p95 ms", f"{report.p95_ms:.3f}"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0
