"""The pre-flight check refuses no code the examples, the demo and the benchmarks run: no false positives."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from codemode import Catalog
from codemode.demo.catalog import build_demo_catalog
from codemode.openapi import OpenApi, OpenApiSources
from codemode.run._preflight import check
from codemode.run._runtime import StubCache

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

ROOT = Path(__file__).parents[2]


def snippets(path: Path) -> list[str]:
    """Every string in a file that is Python code calling `tools`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "tools" in node.value:
            try:
                ast.parse(node.value)
            except SyntaxError:
                continue
            found.append(node.value)
    return found


def module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"snippet_source_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


async def demo() -> Catalog:
    return build_demo_catalog()


def attribute(path: str, name: str) -> Callable[[], Awaitable[Catalog]]:
    async def load() -> Catalog:
        value = getattr(module(ROOT / path), name)
        return value if isinstance(value, Catalog) else value()

    return load


async def petstore() -> Catalog:
    catalog = Catalog()
    spec = module(ROOT / "examples/openapi_petstore.py").DESCRIPTION
    async with OpenApiSources(catalog, [OpenApi(spec=spec, base_url="http://127.0.0.1:9")]):
        return catalog


async def helpers_only() -> Catalog:
    return Catalog()  # scripts that call only `tools.search`: no catalog needed to judge them


SOURCES: dict[str, Callable[[], Awaitable[Catalog]]] = {
    "benchmarks/startup_bench.py": helpers_only,
    "examples/mcp_two_servers.py": helpers_only,
    "codemode/demo/script.py": demo,
    "examples/langchain_agent.py": demo,
    "examples/openai_agents_agent.py": demo,
    "examples/pydantic_ai_agent.py": demo,
    "examples/smolagents_agent.py": demo,
    "examples/quickstart.py": attribute("examples/quickstart.py", "catalog"),
    "examples/approvals.py": attribute("examples/approvals.py", "catalog"),
    "examples/framework_approvals.py": attribute("examples/framework_approvals.py", "catalog"),
    "examples/openapi_petstore.py": petstore,
    "benchmarks/tracing_bench.py": attribute("benchmarks/tracing_bench.py", "make_catalog"),
    "benchmarks/tool_result_bench.py": attribute("benchmarks/tool_result_bench.py", "catalog"),
}
DELIBERATE = {
    "codemode/demo/script.py": 1,  # the demo's first email passes `body` a list, to show the model fixing it
}
"""Files whose scripts make one mistake on purpose, and how many problems it is."""


@pytest.mark.parametrize("source", sorted(SOURCES))
async def test_the_check_refuses_no_script_of_the_examples_demo_and_benchmarks(source: str) -> None:
    """Each script that calls `tools` in a file is checked against the catalog it runs with: nothing is refused."""
    catalog = await SOURCES[source]()
    cache = StubCache()
    found = snippets(ROOT / source)

    problems = [problem for code in found for problem in check(code, catalog, cache)]

    assert found
    assert [problem.message for problem in problems][DELIBERATE.get(source, 0) :] == []
    assert len(problems) == DELIBERATE.get(source, 0)
