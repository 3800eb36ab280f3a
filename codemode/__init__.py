"""codemode: a whole tool catalog behind one fixed `code` tool."""

from __future__ import annotations

from codemode.errors import CatalogError as CatalogError
from codemode.errors import CodemodeError as CodemodeError
from codemode.errors import ConfigError as ConfigError
from codemode.errors import ToolError as ToolError
from codemode.tools import Tool as Tool

__all__ = ["CatalogError", "CodemodeError", "ConfigError", "Tool", "ToolError"]
