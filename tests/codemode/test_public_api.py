"""The public surface of `codemode`: what it exports, and what importing it costs."""

from __future__ import annotations

import json
import subprocess
import sys

import codemode


def test_the_package_exports_exactly_its_documented_names() -> None:
    """`codemode.__all__` is pinned, sorted, and every name resolves."""
    assert codemode.__all__ == [
        "Announcement",
        "ApprovalError",
        "CallInfo",
        "CallOutcome",
        "Caller",
        "Catalog",
        "CatalogChange",
        "CatalogError",
        "CodeMode",
        "CodeTool",
        "CodemodeError",
        "ConfigError",
        "Decision",
        "Deny",
        "DiscoveryState",
        "ExecuteResult",
        "Limits",
        "PendingApproval",
        "Policy",
        "Ranker",
        "ReplaceResult",
        "RequireApproval",
        "SearchIndex",
        "Tool",
        "ToolCall",
        "ToolError",
        "ToolIndex",
        "ToolLimits",
        "build_catalog",
        "load_config",
        "tool_from_function",
    ]
    assert codemode.__all__ == sorted(codemode.__all__)
    for name in codemode.__all__:
        assert getattr(codemode, name) is not None


def test_the_type_checkers_see_exactly_the_names_the_package_resolves() -> None:
    """The imports under `TYPE_CHECKING`, the lazy table and `__all__` name the same names from the same modules."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(codemode.__file__).read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    seen = {
        alias.asname: node.module for node in guarded.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert seen == codemode._MODULES
    assert sorted(seen) == codemode.__all__


def test_importing_codemode_imports_no_provider_sdk() -> None:
    """`import codemode` loads neither SDK nor the CLI, demo or provider modules."""
    probe = (
        "import sys, json, codemode; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('anthropic', 'openai', 'mcp', 'numpy') or m.startswith(('codemode.cli', 'codemode.demo', "
        "'codemode.providers')))))"
    )
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(output) == []


def test_every_codemode_name_the_readme_mentions_resolves() -> None:
    """Each `codemode.X.Name` the README names is importable as written (`codemode.Agent` was not)."""
    import importlib
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    missing = []
    for dotted in sorted(set(re.findall(r"\bcodemode(?:\.[a-z_]+)*\.[A-Z]\w*", readme))):
        module, _, name = dotted.rpartition(".")
        if not hasattr(importlib.import_module(module), name):
            missing.append(dotted)
    assert missing == []
