"""The Python examples in README.md and docs/*.md run, offline, and every public name has an API reference entry.

Each ```python block runs as written, top-level `await` allowed, in a fresh namespace. A block may name a setup
on the line before it (`<!-- docs-test: setup NAME -->`): the names that setup gives the block (a catalog, an
entered `CodeMode`, a scripted model), and a check of what the block left. A block that cannot run offline says
why on the line before it (`<!-- docs-test: skip NAME (reason) -->`), and `SKIPPED` below names every such block,
so a skip cannot hide.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from codemode import Catalog, CodeMode, Policy
from codemode.agent import Agent
from codemode.providers.anthropic import AnthropicWire
from codemode.testing import ScriptedModel, step

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- docs-test: (?P<verb>setup|skip) (?P<name>[\w-]+)(?: \((?P<reason>[^)]*)\))? -->")

SKIPPED = {
    "docs/agents.md": ["pydantic-ai-agent"],
    "docs/approvals.md": ["pydantic-ai-approvals", "openai-agents-approvals", "langgraph-approvals", "mcp-client"],
    "docs/openapi.md": ["openapi-sources"],
    "docs/search.md": ["hybrid-search"],
}
"""Every block marked to skip, by page: the examples in `examples/` run what these show against local servers."""

PUBLIC_MODULES = [
    "codemode",
    "sandbox",
    "sandbox.jsonvalue",
    "codemode.agent",
    "codemode.config",
    "codemode.events",
    "codemode.integrations",
    "codemode.integrations.langchain",
    "codemode.integrations.langgraph",
    "codemode.integrations.openai_agents",
    "codemode.integrations.pydantic_ai",
    "codemode.integrations.smolagents",
    "codemode.mcp",
    "codemode.openapi",
    "codemode.providers.anthropic",
    "codemode.providers.base",
    "codemode.providers.openai_chat",
    "codemode.providers.openai_responses",
    "codemode.runlog",
    "codemode.search",
    "codemode.search.evaluation",
    "codemode.search.hybrid",
    "codemode.testing",
    "codemode.tracing",
]
"""The modules a user imports from: the names in their `__all__` (else their own public names) need an entry."""


@dataclass(frozen=True)
class Block:
    """One fenced Python block of a page."""

    page: str
    line: int
    source: str
    setup: str | None
    skip: str | None
    reason: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    """Every ```python block of the pages, with the marker on the line before it."""
    found = []
    for path in PAGES:
        lines = path.read_text().split("\n")
        page = str(path.relative_to(ROOT))
        index = 0
        while index < len(lines):
            if re.fullmatch(r"```(python|py)\s*", lines[index]):
                end = lines.index("```", index + 1)
                marker = MARKER.fullmatch(lines[index - 1].strip()) if index else None
                verb = marker and marker["verb"]
                found.append(
                    Block(
                        page=page,
                        line=index + 1,
                        source="\n".join(lines[index + 1 : end]),
                        setup=marker["name"] if marker and verb == "setup" else None,
                        skip=marker["name"] if marker and verb == "skip" else None,
                        reason=marker["reason"] if marker else None,
                    )
                )
                index = end
            index += 1
    return found


# Setups: each yields the names a block starts with, and takes back its namespace to check what it left.


@asynccontextmanager
async def invoices() -> AsyncIterator[dict[str, Any]]:
    catalog = Catalog()

    @catalog.tool
    async def list_invoices(status: str) -> list[dict[str, object]]:
        """List invoices by status."""
        return [{"id": "I1", "status": status}, {"id": "I2", "status": status}]

    namespace: dict[str, Any] = {"catalog": catalog, "CodeMode": CodeMode}
    yield namespace
    assert namespace["result"].ok, namespace["result"].text
    assert namespace["result"].run.value == 2


@asynccontextmanager
async def policy() -> AsyncIterator[dict[str, Any]]:
    namespace: dict[str, Any] = {"catalog": Catalog(), "KEY": b"the same key in every process"}
    yield namespace
    assert "refund" in namespace["catalog"]
    # The page builds `cm` without entering it; entered and left, it is usable and closes what it holds.
    async with namespace["cm"] as cm:
        result = await cm.execute('return await tools.refund(order_id="A1", amount=5.0)', cm.new_state())
    assert result.ok, result.text


@asynccontextmanager
async def agent_approval() -> AsyncIterator[dict[str, Any]]:
    catalog = Catalog()

    @catalog.tool(approval=lambda args: args["amount"] > 100)
    async def refund(order_id: str, amount: float) -> dict[str, object]:
        """Refund an order."""
        return {"order_id": order_id, "refunded": amount}

    code = 'return await tools.refund(order_id="A1", amount=150.0)'
    model = ScriptedModel(AnthropicWire(), [step("Refunding.", code), step("Refunded 150.")])
    async with CodeMode(catalog, isolation="inline", policy=Policy(secret=b"key")) as cm:
        namespace: dict[str, Any] = {"cm": cm, "model": model, "Agent": Agent}
        yield namespace
    assert (namespace["result"].stopped, namespace["result"].answer) == ("answer", "Refunded 150.")


SETUPS: dict[str, Callable[[], Any]] = {
    "invoices": invoices,
    "policy": policy,
    "agent-approval": agent_approval,
}

RUNNABLE = [block for block in blocks() if block.skip is None]


async def run_source(source: str, namespace: dict[str, Any]) -> None:
    """Run `source` in `namespace`, awaiting it when it uses top-level `await`."""
    code = compile(source, "<docs>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(code, namespace)
    if inspect.isawaitable(outcome):
        await outcome


SLOW = {"docs/mcp-sources.md"}
"""Pages whose examples take more than about two seconds (an MCP server started, a connection refused)."""


@pytest.mark.parametrize(
    "block",
    [pytest.param(block, marks=[pytest.mark.slow] if block.page in SLOW else []) for block in RUNNABLE],
    ids=lambda block: block.id,
)
def test_each_python_example_in_the_docs_runs_offline(block: Block) -> None:
    """The block runs as written, with its setup's names, in a thread of its own as a reader's script would."""
    if block.setup is None and ("anyio.run(" in block.source or "asyncio.run(" in block.source):
        # The block starts its own event loop.
        in_own_thread(lambda: exec(compile(block.source, "<docs>", "exec"), {"__name__": "__docs__"}))
        return

    async def main() -> None:
        if block.setup is None:
            await run_source(block.source, {"__name__": "__docs__"})
            return
        async with SETUPS[block.setup]() as namespace:
            await run_source(block.source, namespace)

    in_own_thread(lambda: anyio.run(main))


def in_own_thread(function: Callable[[], object]) -> None:
    """Call `function` in a new thread and raise what it raised.

    A thread of its own has no event loop running, whatever an earlier test's session-wide fixtures left open in
    this one.
    """
    raised: list[BaseException] = []

    def target() -> None:
        try:
            function()
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's own thread below
            raised.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if raised:
        raise raised[0]


def test_every_skipped_example_is_named_with_its_reason() -> None:
    """The blocks marked to skip are exactly those `SKIPPED` names, and each says why."""
    marked: dict[str, list[str]] = {}
    for block in blocks():
        if block.skip is not None:
            assert block.reason, f"{block.id}: a skip says why"
            marked.setdefault(block.page, []).append(block.skip)
    assert marked == SKIPPED


def test_every_setup_named_in_the_docs_exists() -> None:
    """A setup marker names one of `SETUPS`, and every setup is used."""
    used = {block.setup for block in blocks() if block.setup is not None}
    assert used == set(SETUPS)


def public_names(module_name: str) -> list[str]:
    """The module's `__all__`, else the public names it defines, read from its source (importing every
    framework adapter would take seconds); a computed `__all__` (`codemode`'s, from its lazy table) is imported."""
    path = ROOT / module_name.replace(".", "/")
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text())
    defined = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                assert node.value is not None
                if not isinstance(node.value, ast.List | ast.Tuple):
                    return list(importlib.import_module(module_name).__all__)
                return [str(name) for name in ast.literal_eval(node.value)]
            defined += [target.id for target in targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.append(node.name)
    return [name for name in defined if not name.startswith("_") and not name.isupper()]


def test_every_public_name_has_an_api_reference_entry() -> None:
    """Each public name is in an `::: name` directive of docs/api, itself or through its module's entry."""
    reference = "\n".join(path.read_text() for path in (ROOT / "docs" / "api").glob("*.md"))
    entries = set(re.findall(r"^::: ([\w.]+)$", reference, flags=re.MULTILINE))
    documented_elsewhere = {"codemode.Limits", "codemode.config.build_catalog", "codemode.config.load_config"}
    missing = [
        f"{module_name}.{name}"
        for module_name in PUBLIC_MODULES
        for name in public_names(module_name)
        if module_name not in entries
        and f"{module_name}.{name}" not in entries
        and f"{module_name}.{name}" not in documented_elsewhere
    ]
    assert missing == []


def test_every_dotted_name_the_docs_mention_resolves() -> None:
    """Each `codemode.x.Name` and `sandbox.x.Name` the pages write is importable as written."""
    text = "\n".join(path.read_text() for path in PAGES)
    missing = []
    for dotted in sorted(set(re.findall(r"\b(?:codemode|sandbox)(?:\.[a-z_]+)*\.[A-Z]\w*", text))):
        module, _, name = dotted.rpartition(".")
        if not hasattr(importlib.import_module(module), name):
            missing.append(dotted)
    assert missing == []
