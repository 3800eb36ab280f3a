from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import pytest

from codemode import Tool
from codemode.cli import main
from codemode.search.evaluation import (
    LabelledQuery,
    evaluate,
    load_queries,
    load_tools,
    ndcg_at,
    percentile,
    reciprocal_rank_at,
)

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
REPORT_KEYS = {"tools", "queries", "k", "recall_at_k", "ndcg_at_10", "mrr_at_10", "p50_ms", "p95_ms"}


def tool(name: str) -> Tool:
    return Tool(name=name, alias=name, description="", parameters={"type": "object", "properties": {}})


def labelled(query: str, *relevant: str) -> LabelledQuery:
    return LabelledQuery(query=query, relevant=frozenset(relevant))


def test_metrics_match_hand_computed_values() -> None:
    """nDCG, reciprocal rank and percentiles agree with values worked out by hand."""
    ranked = ["a", "b", "c", "d"]
    assert reciprocal_rank_at(ranked, frozenset({"c"}), 10) == pytest.approx(1 / 3)
    assert reciprocal_rank_at(ranked, frozenset({"c"}), 2) == 0.0
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at(ranked, frozenset({"b", "d"}), 10) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert ndcg_at(ranked, frozenset({"a"}), 10) == 1.0
    assert ndcg_at(ranked, frozenset(), 10) == 0.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 50.0) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95.0) == pytest.approx(4.8)
    assert percentile([], 50.0) == 0.0


def test_evaluate_scores_a_fixed_ranking() -> None:
    """Recall@k counts any relevant tool in the top k; MRR and nDCG average over queries."""
    rankings = {"q1": ["a", "b", "c"], "q2": ["c", "b", "a"], "q3": ["b", "c", "a"]}
    queries = [labelled("q1", "a"), labelled("q2", "a"), labelled("q3", "x")]
    report = evaluate([tool("a"), tool("b"), tool("c")], queries, k=2, search=lambda q, limit: rankings[q][:limit])
    assert (report.tools, report.queries, report.k) == (3, 3, 2)
    assert report.recall_at_k == pytest.approx(1 / 3)
    assert report.mrr_at_10 == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert report.ndcg_at_10 == pytest.approx((1 + 0.5 + 0) / 3)
    assert report.p50_ms >= 0.0
    assert set(report.to_json()) == REPORT_KEYS


def test_loaders_read_jsonl_and_reject_bad_lines(tmp_path: Path) -> None:
    """Tools and queries load from JSONL; a line that is not an object is a `ValueError`."""
    tools_file = tmp_path / "tools.jsonl"
    tools_file.write_text('{"name": "math.factorial", "description": "Factorial.", "parameters": {}}\n\n')
    queries_file = tmp_path / "queries.jsonl"
    queries_file.write_text('{"query": "factorial of 5", "relevant": ["math.factorial"]}\n')
    [loaded] = load_tools(tools_file)
    assert (loaded.name, loaded.alias.isidentifier(), loaded.description) == ("math.factorial", True, "Factorial.")
    assert load_queries(queries_file) == [labelled("factorial of 5", "math.factorial")]
    queries_file.write_text("[1, 2]\n")
    with pytest.raises(ValueError):
        load_queries(queries_file)


def test_cli_prints_the_report_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`eval-search --json` prints one object with the report keys."""
    tools_file = tmp_path / "tools.jsonl"
    rows = [
        {"name": "get_weather", "description": "Weather forecast for a city.", "parameters": {}},
        {"name": "send_email", "description": "Send an email.", "parameters": {}},
    ]
    tools_file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    queries_file = tmp_path / "queries.jsonl"
    queries_file.write_text('{"query": "weather in Paris", "relevant": ["get_weather"]}\n')
    status = main(["eval-search", "--tools", str(tools_file), "--queries", str(queries_file), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    assert set(report) == REPORT_KEYS
    assert (report["tools"], report["queries"], report["recall_at_k"], report["mrr_at_10"]) == (2, 1, 1.0, 1.0)


def test_cli_exits_2_on_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing input file is a clear message on stderr and exit status 2."""
    missing = str(tmp_path / "missing.jsonl")
    assert main(["eval-search", "--tools", missing, "--queries", missing]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("dataset", "floor"),
    [("bfcl", 0.81), ("stabletoolbench", 0.67), ("metatool", 0.55)],
)
def test_recall_at_5_beats_the_plain_bm25_baseline(dataset: str, floor: float) -> None:
    """On about 600 queries spread over each real set's held-out half, recall@5 beats plain BM25."""
    folder = DATA / dataset
    if not (folder / "tools.jsonl").exists():
        pytest.skip(f"shared data set {dataset!r} is not available")
    held_out = [q for q in load_queries(folder / "queries.jsonl") if zlib.crc32(q.query.encode()) % 2 == 1]
    report = evaluate(load_tools(folder / "tools.jsonl"), held_out[:: max(1, len(held_out) // 600)], k=5)
    assert report.recall_at_k >= floor
