"""`import codemode` (and `import codemode.integrations`) import no agent framework: read from `-X importtime`."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("pydantic_ai", "agents", "langchain_core", "langgraph", "smolagents")


def imported_modules(statement: str) -> set[str]:
    """Every module a fresh interpreter imports to run `statement`, from `-X importtime` (on stderr)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement], capture_output=True, text=True, check=True
    )
    lines = [line for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert lines, run.stderr
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # first line is the column header


@pytest.mark.parametrize("statement", ["import codemode", "import codemode.integrations"])
def test_importing_codemode_imports_no_agent_framework(statement: str) -> None:
    """None of the frameworks (nor any of their submodules) is imported."""
    modules = imported_modules(statement)

    assert "codemode" in modules
    assert {name for name in modules if name.split(".")[0] in FRAMEWORKS} == set()


@pytest.mark.slow
def test_importing_an_integration_imports_its_framework() -> None:
    """The parse sees a framework when one is imported, so the test above can fail."""
    pytest.importorskip("pydantic_ai")

    assert "pydantic_ai" in imported_modules("import codemode.integrations.pydantic_ai")


@pytest.mark.slow
def test_the_langchain_tool_imports_langgraph_only_when_a_call_runs_inside_a_graph() -> None:
    """`codemode.integrations.langchain` works without the `langgraph` extra: importing it imports no langgraph."""
    pytest.importorskip("langchain_core")

    modules = imported_modules("import codemode.integrations.langchain")
    assert "langchain_core" in modules
    assert {name for name in modules if name.split(".")[0] == "langgraph"} == set()
