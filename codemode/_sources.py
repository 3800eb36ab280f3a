"""What every source of tools shares: which of its tools need approval, and registering what fits.

Config files, MCP servers and OpenAPI descriptions all mark their tools by `approval` patterns of their own tool
names, and all register their tools so that one that does not fit the catalog is reported, never fatal.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from codemode._definitions import numbered_aliases
from codemode.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from codemode.catalog import Catalog
    from codemode.tools import Tool


def needs_approval(patterns: tuple[str, ...], name: str) -> bool:
    """Whether a tool named `name` matches one of a source's `approval` patterns (shell-style, `*` for all)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def register_fitting(
    catalog: Catalog, tools: Sequence[Tool], misfit: Callable[[Tool, CatalogError], None]
) -> list[Tool]:
    """Add `tools` to `catalog`, in one change when all fit; else each that fits, telling `misfit` of the others.

    Returns:
        The tools registered, in order (aliases numbered where the source's own names clash: `numbered_aliases`).
    """
    tools = numbered_aliases(list(tools), catalog.__contains__)
    try:
        catalog.extend(tools)
    except CatalogError:
        pass
    else:
        return list(tools)
    fitted = []
    for tool in tools:  # find the ones that do not fit, and register the rest
        try:
            catalog.extend([tool])
        except CatalogError as error:
            misfit(tool, error)
        else:
            fitted.append(tool)
    return fitted
