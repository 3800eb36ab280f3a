"""Measure a tool search against labelled queries: recall@k, nDCG@10, MRR@10 and latency.

The data is JSON Lines: a tools file of `{"name", "description", "parameters"}` objects and a queries file of
`{"query", "relevant": [tool names]}` objects. A query counts as a hit at k when any relevant tool is among the
first k results; nDCG and MRR use binary relevance over the first ten. Relevance is judged by original tool
name, so aliases play no part here. The metric functions are pure; only the two loaders read files.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codemode.search._bm25 import SearchIndex
from codemode.tools import Tool
from sandbox.limits import cut_end

if TYPE_CHECKING:
    from pathlib import Path

    from sandbox import JsonObject

__all__ = [
    "LabelledQuery",
    "SearchFunction",
    "SearchReport",
    "evaluate",
    "load_queries",
    "load_tools",
    "ndcg_at",
    "percentile",
    "reciprocal_rank_at",
]

SearchFunction = Callable[[str, int], Sequence[str]]
"""A search under test: `(query, limit) -> tool names, best first`."""


@dataclass(frozen=True, kw_only=True)
class LabelledQuery:
    """One query with the names of the tools that answer it."""

    query: str
    """The user's request."""
    relevant: frozenset[str]
    """Original names of the tools that answer it."""


@dataclass(frozen=True, kw_only=True)
class SearchReport:
    """Quality and latency of a search over a set of labelled queries."""

    tools: int
    """Tools in the catalog."""
    queries: int
    """Queries evaluated."""
    k: int
    """The cut-off of `recall_at_k`."""
    recall_at_k: float
    """Share of queries with a relevant tool among the first `k` results."""
    ndcg_at_10: float
    """Mean normalised discounted cumulative gain over the first ten results."""
    mrr_at_10: float
    """Mean reciprocal rank of the first relevant tool within the first ten (0 when absent)."""
    p50_ms: float
    """Median time of one search, in milliseconds."""
    p95_ms: float
    """95th percentile time of one search, in milliseconds."""

    def to_json(self) -> dict[str, int | float]:
        """The report as a JSON object (metrics rounded to four places, times to three)."""
        return {
            "tools": self.tools,
            "queries": self.queries,
            "k": self.k,
            "recall_at_k": round(self.recall_at_k, 4),
            "ndcg_at_10": round(self.ndcg_at_10, 4),
            "mrr_at_10": round(self.mrr_at_10, 4),
            "p50_ms": round(self.p50_ms, 3),
            "p95_ms": round(self.p95_ms, 3),
        }


def load_tools(path: Path) -> list[Tool]:
    """Tools from a JSONL file of `{"name", "description", "parameters"}` objects (no handlers).

    Raises:
        ValueError: A line is not a JSON object with a string `name`.
    """
    tools: list[Tool] = []
    for row in _read_jsonl(path):
        name = row.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{path}: every tool needs a string 'name', got {cut_end(repr(row), 80)}")
        description = row.get("description")
        parameters = row.get("parameters")
        tools.append(
            Tool(
                name=name,
                description=description if isinstance(description, str) else "",
                parameters=parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}},
            )
        )
    return tools


def load_queries(path: Path) -> list[LabelledQuery]:
    """Labelled queries from a JSONL file of `{"query", "relevant": [names]}` objects.

    Raises:
        ValueError: A line lacks a string `query` or a list of names in `relevant`.
    """
    queries: list[LabelledQuery] = []
    for row in _read_jsonl(path):
        query, relevant = row.get("query"), row.get("relevant")
        if not isinstance(query, str) or not isinstance(relevant, list):
            message = f"{path}: every query needs 'query' (string) and 'relevant' (list), got {cut_end(repr(row), 80)}"
            raise ValueError(message)  # noqa: TRY004 - bad data in a file, reported with the loaders' ValueError
        queries.append(LabelledQuery(query=query, relevant=frozenset(str(name) for name in relevant)))
    return queries


def _read_jsonl(path: Path) -> list[JsonObject]:
    rows: list[JsonObject] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON: {error.msg}") from error
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object")  # noqa: TRY004 - as above
            rows.append(row)
    return rows


def evaluate(
    tools: Sequence[Tool], queries: Sequence[LabelledQuery], *, k: int = 5, search: SearchFunction | None = None
) -> SearchReport:
    """Run every query through `search` (default: a `SearchIndex` over `tools`) and score the rankings.

    Example:
        ```python
        report = evaluate(load_tools(Path("tools.jsonl")), load_queries(Path("queries.jsonl")), k=5)
        print(report.to_json())
        ```
    """
    if search is None:
        index = SearchIndex(tools)

        def search(query: str, limit: int) -> list[str]:
            return [tool.name for tool, _ in index.search(query, limit)]

    depth = max(k, 10)
    hits = ndcg = mrr = 0.0
    times: list[float] = []
    for labelled in queries:
        start = time.perf_counter()
        ranked = list(search(labelled.query, depth))[:depth]
        times.append((time.perf_counter() - start) * 1000.0)
        hits += any(name in labelled.relevant for name in ranked[:k])
        ndcg += ndcg_at(ranked, labelled.relevant, 10)
        mrr += reciprocal_rank_at(ranked, labelled.relevant, 10)
    count = max(len(queries), 1)
    return SearchReport(
        tools=len(tools),
        queries=len(queries),
        k=k,
        recall_at_k=hits / count,
        ndcg_at_10=ndcg / count,
        mrr_at_10=mrr / count,
        p50_ms=percentile(times, 50.0),
        p95_ms=percentile(times, 95.0),
    )


def ndcg_at(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """Normalised DCG of the first `k` names with binary relevance (0.0 when nothing is relevant)."""
    dcg = sum(1.0 / math.log2(rank + 2) for rank, name in enumerate(ranked[:k]) if name in relevant)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def reciprocal_rank_at(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """1/rank of the first relevant name among the first `k`, or 0.0."""
    return next((1.0 / (rank + 1) for rank, name in enumerate(ranked[:k]) if name in relevant), 0.0)


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100) of `values` by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
