"""The `code` tool: its name, its description and its input schema, fixed when `CodeMode` is built.

Its bytes depend only on the limits, the modules offered and the stubs of always-loaded tools, never on how
many tools the catalog holds or which were discovered, so the provider's prompt cache holds for the whole
conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sandbox import JsonObject, Limits

MODULES = (
    "asyncio json math re datetime collections itertools functools statistics random string textwrap decimal "
    "fractions base64 hashlib uuid heapq bisect typing dataclasses copy enum operator time unicodedata html "
    "urllib.parse calendar difflib abc logging traceback sys"
).split()

INPUT_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "Python source to run."}},
    "required": ["code"],
    "additionalProperties": False,
}


@dataclass(frozen=True, kw_only=True)
class CodeTool:
    """The one tool the model is given."""

    name: str
    """The tool's name (`code`)."""
    description: str
    """What the model reads to learn how to use it."""
    input_schema: JsonObject
    """JSON Schema of the input: `{"code": str}`."""

    def to_json(self) -> JsonObject:
        """Name, description and input schema as plain data."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def build_code_tool(
    *,
    limits: Limits,
    display_budget: int,
    loaded_stubs: Sequence[str] = (),
    name: str = "code",
    persist_variables: bool = False,
) -> CodeTool:
    """The `code` tool's definition for these limits and display budget, always-loaded stubs and persistence."""
    lines = [
        "Run Python to find and use tools. The code is the body of an async function: use top-level `await`,",
        "and `return` a value or `print` what you need to see. Only printed output and the returned value come",
        "back, so filter, join and summarise data in code rather than returning it all.",
        "",
        '- `await tools.search("what you need", max_results=5)` -> [{"name", "description", "signature"}].',
        "  Pass a list of queries to look for several things at once. Tools you find are shown to you after the",
        "  run, one line each; a tool you call or describe is shown in full.",
        "- `await tools.describe(name)` -> one tool's full definition as a Python stub.",
        '- `await tools.list(prefix="", page=1)` -> {"tools": [{"name", "description"}], "page", "pages", "total"}:',
        "  browse the catalog by name, without fetching definitions.",
        "- `await tools.<name>(arg=value, ...)` calls a tool with keyword arguments; results are JSON data.",
        "  A failed call raises `ToolError` with a message saying what to fix.",
        "- Run independent calls together: `a, b = await asyncio.gather(tools.x(...), tools.y(...))`.",
        f"- Modules: {', '.join(MODULES)}. No files, network or processes.",
        f"- Per run: {limits.timeout:g} s, {limits.calls:,} tool calls. You read about {display_budget:,} characters",
        "  of what it prints and returns; more is cut (a long list shows its first items), but the run goes on.",
    ]
    if persist_variables:
        lines.append(
            "- Top-level variables holding JSON data (dict, list, str, numbers, bool, None) are kept for your next"
            " run; imports, functions and classes are not."
        )
    if loaded_stubs:
        lines += ["", "Tools you can call without searching:", "", *("\n\n".join(loaded_stubs)).splitlines()]
    return CodeTool(name=name, description="\n".join(lines), input_schema=INPUT_SCHEMA)
