"""The conversation economy: bytes a task appends to the conversation to find and learn its tools, five ways.

Catalog: GitHub's MCP server (117 tools, `github.` prefix) with StableToolBench's 2,479 tools, from
`../shared/data` or `$CODEMODE_BENCH_DATA` (skipped cleanly when absent). Tasks: StableToolBench queries that
need two or more tools; each task searches once per needed capability (the needed tool's first description
sentence is the query) and then calls the tools it needs. Each task is a fresh conversation. What is counted, in
UTF-8 bytes:

- all tools up front: every definition as the provider's tool JSON, in the prefix (cached, paid once);
- AI SDK: the full JSON definitions of the top 5 hits of each search, each tool once, plus the called ones;
- FastMCP: each search's results as JSON (name and description of 5 hits), then the schema of each called tool;
- codemode before: the search run's text, and the full stub of every hit (the announcement before issue 26);
- codemode after: the same run's text and what `CodeMode` announces now, for the search run and the call run.

Call arguments and results are left out: every approach pays them alike. Tokens are counted with the one real
tokenizer that runs offline here, Llama 2's (shipped inside `wordllama`, the `semantic` extra; `n/a` without it):
not the tokenizer of any model codemode talks to, but a real BPE, closer than bytes / 4.

A second table is one long conversation: 24 searches of 20 hits each (8 with `--quick`), codemode before and after.

Run: python benchmarks/economy_bench.py [--quick] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from _data import DATA, missing

from codemode import Catalog, CodeMode
from codemode.discovery import CLOSE_TAG, OPEN_TAG, stub_hash
from codemode.schema.stubs import first_sentence, render_stub

if TYPE_CHECKING:
    from codemode.tools import Tool

HITS = 5
OLD_HEADER = (
    "Tools discovered in the last `code` run, now callable as `await tools.<name>(...)` "
    "(keyword arguments) in later runs:"
)


@dataclass(frozen=True)
class Task:
    needed: tuple[str, ...]
    queries: tuple[str, ...]


def load_catalog(data: Path) -> Catalog:
    catalog = Catalog()
    catalog.load_jsonl(data / "github_mcp" / "tools.jsonl", prefix="github.")
    catalog.load_jsonl(data / "stabletoolbench" / "tools.jsonl")
    return catalog


def load_tasks(data: Path, catalog: Catalog, count: int) -> list[Task]:
    tasks = []
    for line in (data / "stabletoolbench" / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        needed = [name for name in json.loads(line)["relevant"] if catalog.get(name) is not None]
        if len(set(needed)) < 2:
            continue
        queries = tuple(first_sentence(tool(catalog, n).description) or n for n in dict.fromkeys(needed))
        tasks.append(Task(needed=tuple(dict.fromkeys(needed)), queries=queries))
        if len(tasks) == count:
            break
    return tasks


def definition_json(catalog: Catalog, name: str) -> str:
    found = tool(catalog, name)
    return json.dumps({"name": found.alias, "description": found.description, "input_schema": found.parameters})


def old_announcement(catalog: Catalog, names: list[str]) -> str:
    """The announcement as it was before issue 26: the full stub of every tool, under its marker."""
    if not names:
        return ""
    parts = [OPEN_TAG, OLD_HEADER]
    for name in names:
        stub = render_stub(tool(catalog, name))
        parts.append(f"\n# new tool: {name} [{stub_hash(stub)}]\n{stub}")
    parts.append(CLOSE_TAG)
    return "\n".join(parts)


async def search_names(cm: CodeMode, query: str, hits: int) -> list[str]:
    """The original names of the top hits of one search (in a conversation of its own)."""
    result = await cm.execute(
        f"return [t['name'] for t in await tools.search({query!r}, max_results={hits})]", cm.new_state()
    )
    assert isinstance(result.run.value, list), result.text
    return [tool(cm.catalog, str(alias)).name for alias in result.run.value]


def tool(catalog: Catalog, name: str) -> Tool:
    found = catalog.get(name)
    assert found is not None
    return found


async def one_task(cm: CodeMode, catalog: Catalog, task: Task) -> dict[str, list[str]]:
    """What each approach appends to a fresh conversation to find and learn the task's tools."""
    hits = [await search_names(cm, query, HITS) for query in task.queries]
    seen = list(dict.fromkeys(name for ranking in hits for name in ranking))
    shown = list(dict.fromkeys([*seen, *task.needed]))
    fastmcp = [
        json.dumps([{"name": tool(catalog, n).alias, "description": tool(catalog, n).description} for n in ranking])
        for ranking in hits
    ]
    state = cm.new_state()
    search_code = (
        f"for query in {list(task.queries)!r}:\n"
        '    print([found["name"] for found in await tools.search(query, max_results=5)])'
    )
    searched = await cm.execute(search_code, state)
    call_code = "\n".join(f"await tools.{tool(catalog, name).alias}()" for name in task.needed)
    called = await cm.execute(call_code, state)
    return {
        "AI SDK (top 5 full)": [definition_json(catalog, name) for name in shown],
        "FastMCP (JSON results)": [*fastmcp, *(definition_json(catalog, name) for name in task.needed)],
        "codemode before": [searched.text, old_announcement(catalog, shown)],
        "codemode after": [searched.text, searched.announcement or "", called.announcement or ""],
    }


async def long_run(cm: CodeMode, data: Path, searches: int) -> tuple[list[str], list[str], int]:
    """What one conversation of `searches` searches of 20 hits announces, before and after, and how many tools."""
    queries = [
        json.loads(line)["query"][:200]
        for line in (data / "stabletoolbench" / "queries.jsonl").read_text(encoding="utf-8").splitlines()[:searches]
    ]
    state = cm.new_state()
    before: list[str] = []
    after: list[str] = []
    announced: set[str] = set()
    for query in queries:
        result = await cm.execute(f"return [t['name'] for t in await tools.search({query!r}, max_results=20)]", state)
        after.append(result.announcement or "")
        new = [name for name in await search_names(cm, query, 20) if name not in announced]
        announced.update(new)
        before.append(old_announcement(cm.catalog, new))
    return before, after, len(announced)


class Meter:
    """UTF-8 bytes, and tokens when a real tokenizer runs offline (Llama 2's, shipped with `wordllama`)."""

    def __init__(self) -> None:
        self.tokenizer = None
        try:
            from importlib.resources import files

            from tokenizers import Tokenizer

            path = files("wordllama.tokenizers") / "l2_supercat_tokenizer_config.json"
            self.tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
            self.tokenizer.no_truncation()
        except (ImportError, FileNotFoundError, ModuleNotFoundError):
            pass

    def bytes(self, texts: list[str]) -> int:
        return sum(len(text.encode("utf-8")) for text in texts)

    def tokens(self, texts: list[str]) -> int | None:
        if self.tokenizer is None:
            return None
        return sum(len(self.tokenizer.encode(text, add_special_tokens=False).ids) for text in texts if text)


def cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


async def main(quick: bool, data: Path) -> None:
    catalog = load_catalog(data)
    tasks = load_tasks(data, catalog, 10 if quick else 100)
    meter = Meter()
    everything = [definition_json(catalog, tool.name) for tool in catalog]
    searches = 8 if quick else 24
    async with CodeMode(catalog, isolation="inline") as cm:
        rows = [await one_task(cm, catalog, task) for task in tasks]
        before, after, found = await long_run(cm, data, searches)
    tokenizer = "Llama 2's tokenizer, from `wordllama`" if meter.tokenizer is not None else "no tokenizer offline"
    print(
        f"{len(catalog):,} tools, {len(tasks)} tasks of {statistics.mean(len(t.needed) for t in tasks):.1f} tools "
        f"each: what a task appends to find and learn its tools, in UTF-8 bytes and tokens ({tokenizer})\n"
    )
    print("| approach | up front (once), bytes | tokens | per task, bytes (mean) | (max) | tokens (mean) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| all tools up front | {meter.bytes(everything):,} | {cell(meter.tokens(everything))} | 0 | 0 | 0 |")
    for name in rows[0]:
        sizes = [meter.bytes(row[name]) for row in rows]
        counts = [meter.tokens(row[name]) for row in rows]
        mean_tokens = None if None in counts else statistics.mean(c for c in counts if c is not None)
        print(f"| {name} | 0 | 0 | {statistics.mean(sizes):,.0f} | {max(sizes):,} | {cell(mean_tokens)} |")
    print(f"\nOne conversation, {searches} searches of 20 hits ({found} tools found):\n")
    print("| codemode | bytes announced | per tool | tokens |")
    print("|---|---:|---:|---:|")
    for label, texts in (
        ("before (a full stub for every hit)", before),
        ("after (a line per hit, full when used)", after),
    ):
        size = meter.bytes(texts)
        print(f"| {label} | {size:,} | {size / found:,.0f} | {cell(meter.tokens(texts))} |")
    print(f"\nafter / before: {meter.bytes(after) / meter.bytes(before):.0%} of the bytes")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 tasks and 8 searches (CI)")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args()
    if missing("conversation economy (measured on the shared tool sets)", args.data):
        sys.exit(0)
    anyio.run(main, args.quick, args.data)
