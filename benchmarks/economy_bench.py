"""The conversation economy: bytes a task appends to the conversation to find and learn its tools, five ways.

Catalog: GitHub's MCP server (117 tools, `github.` prefix) with StableToolBench's 2,479 tools, from
`../shared/data` (skipped cleanly when absent). Tasks: StableToolBench queries that need two or more tools; each
task searches once per needed capability (the needed tool's first description sentence is the query) and then
calls the tools it needs. Each task is a fresh conversation. What is counted, in UTF-8 bytes:

- all tools up front: every definition as the provider's tool JSON, in the prefix (cached, paid once);
- AI SDK: the full JSON definitions of the top 5 hits of each search, each tool once, plus the called ones;
- FastMCP: each search's results as JSON (name and description of 5 hits), then the schema of each called tool;
- codemode before: the search run's text, and the full stub of every hit (the announcement before issue 26);
- codemode after: the same run's text and what `CodeMode` announces now, for the search run and the call run.

Call arguments and results are left out: every approach pays them alike. Tokens are left out too: `tokenizers` is
installed but no tokenizer file ships in an installed package here, so no real tokenizer runs offline.

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

from codemode import Catalog, CodeMode
from codemode.discovery import CLOSE_TAG, OPEN_TAG, stub_hash
from codemode.stubs import first_sentence, render_stub

if TYPE_CHECKING:
    from codemode.tools import Tool

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
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


async def one_task(cm: CodeMode, catalog: Catalog, task: Task) -> dict[str, int]:
    hits = [await search_names(cm, query, HITS) for query in task.queries]
    seen = list(dict.fromkeys(name for ranking in hits for name in ranking))
    shown = list(dict.fromkeys([*seen, *task.needed]))
    ai_sdk = sum(len(definition_json(catalog, name)) for name in shown)
    fastmcp = sum(
        len(
            json.dumps([{"name": tool(catalog, n).alias, "description": tool(catalog, n).description} for n in ranking])
        )
        for ranking in hits
    )
    fastmcp += sum(len(definition_json(catalog, name)) for name in task.needed)
    state = cm.new_state()
    search_code = (
        f"for query in {list(task.queries)!r}:\n"
        '    print([found["name"] for found in await tools.search(query, max_results=5)])'
    )
    searched = await cm.execute(search_code, state)
    call_code = "\n".join(f"await tools.{tool(catalog, name).alias}()" for name in task.needed)
    called = await cm.execute(call_code, state)
    after = len(searched.text) + len(searched.announcement or "") + len(called.announcement or "")
    before = len(searched.text) + len(old_announcement(catalog, shown))
    return {
        "AI SDK (top 5 full)": ai_sdk,
        "FastMCP (JSON results)": fastmcp,
        "codemode before": before,
        "codemode after": after,
    }


async def long_run(cm: CodeMode, data: Path, searches: int) -> tuple[int, int, int]:
    """Bytes announced over one conversation of `searches` searches of 20 hits: before, after, and tools."""
    queries = [
        json.loads(line)["query"][:200]
        for line in (data / "stabletoolbench" / "queries.jsonl").read_text(encoding="utf-8").splitlines()[:searches]
    ]
    state = cm.new_state()
    before = after = 0
    announced: set[str] = set()
    for query in queries:
        result = await cm.execute(f"return [t['name'] for t in await tools.search({query!r}, max_results=20)]", state)
        after += len(result.announcement or "")
        new = [name for name in await search_names(cm, query, 20) if name not in announced]
        announced.update(new)
        before += len(old_announcement(cm.catalog, new))
    return before, after, len(announced)


async def main(quick: bool, data: Path) -> None:
    catalog = load_catalog(data)
    tasks = load_tasks(data, catalog, 10 if quick else 100)
    up_front = sum(len(definition_json(catalog, tool.name)) for tool in catalog)
    async with CodeMode(catalog, isolation="inline") as cm:
        rows = [await one_task(cm, catalog, task) for task in tasks]
        before, after, tools = await long_run(cm, data, 8 if quick else 24)
    print(
        f"{len(catalog):,} tools, {len(tasks)} tasks of {statistics.mean(len(t.needed) for t in tasks):.1f} "
        "tools each (bytes appended to find and learn the tools; mean and max per task)\n"
    )
    print("| approach | up front (once) | per task, mean | per task, max |")
    print("|---|---:|---:|---:|")
    print(f"| all tools up front | {up_front:,} | 0 | 0 |")
    for name in rows[0]:
        values = [row[name] for row in rows]
        print(f"| {name} | 0 | {statistics.mean(values):,.0f} | {max(values):,} |")
    searches = 8 if quick else 24
    print(f"\nOne conversation, {searches} searches of 20 hits ({tools} tools found):\n")
    print("| codemode | bytes announced | per tool |")
    print("|---|---:|---:|")
    print(f"| before (a full stub for every hit) | {before:,} | {before / tools:,.0f} |")
    print(f"| after (a line per hit, full when used) | {after:,} | {after / tools:,.0f} |")
    print(f"\nafter / before: {after / before:.0%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 tasks and 8 searches (CI)")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args()
    if not (args.data / "stabletoolbench" / "queries.jsonl").exists():
        print(f"economy_bench: skipped, no shared data at {args.data}")
        sys.exit(0)
    anyio.run(main, args.quick, args.data)
