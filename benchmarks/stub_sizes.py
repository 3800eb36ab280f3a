"""Stub size vs JSON Schema definition size, and render time, over the shared tool datasets.

Tokens are estimated as UTF-8 bytes / 4. For each dataset: median and p90 of the full stub (`render_stub`),
the one-line signature (`render_signature`), and the definition as JSON (`{"name", "description",
"parameters"}`), compact (`separators=(",", ":")`) and with `json.dumps` default spacing (what most SDKs send);
plus the mean and p90 render time of one stub.

Run: .venv/bin/python benchmarks/stub_sizes.py [DATA_DIR]
Check that it runs (the first 50 tools of each set): `--quick`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _data import DATA, missing

from codemode._naming import portable_alias
from codemode.schema.stubs import render_signature, render_stub
from codemode.tools import Tool


def tokens(text: str) -> float:
    return len(text.encode("utf-8")) / 4


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def load(path: Path, most: int | None) -> list[tuple[Tool, dict[str, object]]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[:most]:
        d = json.loads(line)
        tool = Tool(
            name=d["name"], alias=portable_alias(d["name"]), description=d["description"], parameters=d["parameters"]
        )
        rows.append((tool, {"name": d["name"], "description": d["description"], "parameters": d["parameters"]}))
    return rows


def measure(rows: list[tuple[Tool, dict[str, object]]]) -> dict[str, float]:
    stub, sig, compact, spaced, micros = [], [], [], [], []
    for tool, definition in rows:
        start = time.perf_counter()
        text = render_stub(tool)
        micros.append((time.perf_counter() - start) * 1e6)
        stub.append(tokens(text))
        sig.append(tokens(render_signature(tool)))
        compact.append(tokens(json.dumps(definition, separators=(",", ":"), ensure_ascii=False)))
        spaced.append(tokens(json.dumps(definition)))
    return {
        "tools": len(rows),
        "stub_med": statistics.median(stub),
        "stub_p90": p90(stub),
        "sig_med": statistics.median(sig),
        "sig_p90": p90(sig),
        "json_med": statistics.median(compact),
        "json_p90": p90(compact),
        "json_spaced_med": statistics.median(spaced),
        "json_spaced_p90": p90(spaced),
        "ratio_total": sum(stub) / sum(compact),
        "us_mean": statistics.fmean(micros),
        "us_p90": p90(micros),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("data", nargs="?", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument("--quick", action="store_true", help="check that it runs: the first 50 tools of each set")
    args = parser.parse_args()
    if missing("stub sizes (they are measured on the shared tool sets)", args.data):
        return
    print(
        "| dataset | tools | stub med / p90 | signature med / p90 | JSON compact med / p90 "
        "| JSON spaced med / p90 | stub/JSON (sum) | render µs mean / p90 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for path in sorted(args.data.glob("*/tools.jsonl")):
        m = measure(load(path, 50 if args.quick else None))
        print(
            f"| {path.parent.name} | {m['tools']:,.0f} | {m['stub_med']:.0f} / {m['stub_p90']:.0f} "
            f"| {m['sig_med']:.0f} / {m['sig_p90']:.0f} | {m['json_med']:.0f} / {m['json_p90']:.0f} "
            f"| {m['json_spaced_med']:.0f} / {m['json_spaced_p90']:.0f} | {m['ratio_total']:.2f} "
            f"| {m['us_mean']:.0f} / {m['us_p90']:.0f} |"
        )


if __name__ == "__main__":
    main()
