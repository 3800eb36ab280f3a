"""codemode: a whole tool catalog behind one fixed `code` tool.

Example:
    ```python
    from codemode import Catalog, CodeMode

    catalog = Catalog()

    @catalog.tool
    async def get_weather(city: str) -> dict:
        \"\"\"Get the weather forecast for a city.\"\"\"
        return {"city": city, "forecast": "sunny"}

    async with CodeMode(catalog) as cm:
        state = cm.new_state()
        result = await cm.execute('return await tools.get_weather(city="Paris")', state)
    ```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codemode.approvals import Decision as Decision
    from codemode.approvals import PendingApproval as PendingApproval
    from codemode.catalog import Catalog as Catalog
    from codemode.catalog import CatalogChange as CatalogChange
    from codemode.code_mode import CodeMode as CodeMode
    from codemode.code_mode import ExecuteResult as ExecuteResult
    from codemode.code_tool import CodeTool as CodeTool
    from codemode.config import build_catalog as build_catalog
    from codemode.config import load_config as load_config
    from codemode.discovery import Announcement as Announcement
    from codemode.discovery import DiscoveryState as DiscoveryState
    from codemode.errors import ApprovalError as ApprovalError
    from codemode.errors import CatalogError as CatalogError
    from codemode.errors import CodemodeError as CodemodeError
    from codemode.errors import ConfigError as ConfigError
    from codemode.errors import ToolError as ToolError
    from codemode.events import ToolCall as ToolCall
    from codemode.policy import Caller as Caller
    from codemode.policy import CallInfo as CallInfo
    from codemode.policy import CallOutcome as CallOutcome
    from codemode.policy import Deny as Deny
    from codemode.policy import Policy as Policy
    from codemode.policy import ReplaceResult as ReplaceResult
    from codemode.policy import RequireApproval as RequireApproval
    from codemode.policy import ToolLimits as ToolLimits
    from codemode.search import Ranker as Ranker
    from codemode.search import SearchIndex as SearchIndex
    from codemode.search import ToolIndex as ToolIndex
    from codemode.tools import Tool as Tool
    from codemode.tools import tool_from_function as tool_from_function
    from sandbox import Limits as Limits

# The one table of public names: each name's module, imported at first use, so a command that needs only the
# catalog (`codemode search`) does not pay for the sandbox, pydantic and jsonschema at start-up. Type checkers
# cannot read a table, so the imports above repeat it for them; a test keeps the two equal.
_MODULES: dict[str, str] = {
    "Decision": "codemode.approvals",
    "PendingApproval": "codemode.approvals",
    "ToolCall": "codemode.events",
    "Catalog": "codemode.catalog",
    "CatalogChange": "codemode.catalog",
    "CodeMode": "codemode.code_mode",
    "ExecuteResult": "codemode.code_mode",
    "CodeTool": "codemode.code_tool",
    "build_catalog": "codemode.config",
    "load_config": "codemode.config",
    "Announcement": "codemode.discovery",
    "DiscoveryState": "codemode.discovery",
    "ApprovalError": "codemode.errors",
    "CatalogError": "codemode.errors",
    "CodemodeError": "codemode.errors",
    "ConfigError": "codemode.errors",
    "ToolError": "codemode.errors",
    "CallInfo": "codemode.policy",
    "Caller": "codemode.policy",
    "CallOutcome": "codemode.policy",
    "Deny": "codemode.policy",
    "Policy": "codemode.policy",
    "ReplaceResult": "codemode.policy",
    "RequireApproval": "codemode.policy",
    "ToolLimits": "codemode.policy",
    "Ranker": "codemode.search",
    "SearchIndex": "codemode.search",
    "ToolIndex": "codemode.search",
    "Tool": "codemode.tools",
    "tool_from_function": "codemode.tools",
    "Limits": "sandbox",
}

# Ruff reads only a literal list; this one is the table's names, so it cannot drift from it.
__all__ = sorted(_MODULES)  # noqa: PLE0605


def __getattr__(name: str) -> object:
    """A public name, imported from its module at first use."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'codemode' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    """The module's names, the public ones not yet imported included."""
    return sorted({*globals(), *__all__})
