"""`Tool`: one definition in a catalog, as the model and the host see it.

A tool has its original `name` (what the host or MCP server calls it), a portable `alias` that is a Python
identifier (what the model writes after `tools.`), a description, a JSON Schema for its arguments, an
optional output schema, and an optional handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from codemode._json import JsonObject

Handler = Callable[..., Any | Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool definition in a catalog."""

    name: str
    """The original name, used by the host (and MCP) to call the tool."""
    alias: str
    """A Python identifier the model uses: `tools.<alias>(...)`."""
    description: str
    """What the tool does, for the model."""
    parameters: JsonObject
    """JSON Schema of the keyword arguments (an object schema)."""
    returns: JsonObject | None = None
    """JSON Schema of the result, if known."""
    handler: Handler | None = None
    """The callable that runs the tool; `None` for definitions loaded without one."""
    deferred: bool = True
    """Deferred tools are found through search; others are described in the `code` tool itself."""
