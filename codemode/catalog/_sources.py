"""What every source of tools shares: which of its tools need approval, and registering what fits.

Config files, MCP servers and OpenAPI descriptions all mark their tools by `approval` patterns, and all register
their tools so that one that does not fit the catalog is reported, never fatal. A pattern matches a tool by any name
a person sees it under (the source's own, with the source's prefix, or as `tools.` shows it), and a pattern that
matches none of its source's tools is refused: a safety rule that protects nothing must not pass in silence.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from codemode._naming import close_matches, portable_alias
from codemode.catalog._definitions import numbered_aliases
from codemode.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from codemode.catalog import Catalog
    from codemode.tools import Tool


def shown_names(own: str, prefix: str = "", alias: str | None = None) -> tuple[str, ...]:
    """The names a source's tool goes by: its own, with the source's prefix, and as `tools.` shows it."""
    name = f"{prefix}{own}"
    return (own, name, alias or portable_alias(name))


def needs_approval(patterns: tuple[str, ...], *names: str) -> bool:
    """Whether a tool going by `names` matches one of a source's `approval` patterns (shell-style, `*` for all)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in names)


def approval_problem(patterns: tuple[str, ...], tools: Sequence[tuple[str, ...]]) -> str | None:
    """Why a source's `approval` patterns are refused (one matches none of its tools, each given by `shown_names`)."""
    for pattern in patterns if tools else ():
        if any(needs_approval((pattern,), *names) for names in tools):
            continue
        by_name = {name: names for names in tools for name in names}
        bare = pattern.strip("*?")
        meant = dict.fromkeys(by_name[name] for name in close_matches(bare, by_name, limit=5)) if bare else {}
        hint = f"did you mean {', '.join(_named(names) for names in meant)}?" if meant else _listed(tools)
        return (
            f"the approval pattern {pattern!r} matches none of its {len(tools)} tools, so it would protect nothing; "
            f"{hint} (a pattern matches a tool's own name, its name with the source's prefix, or its name as "
            "`tools.` shows it)"
        )
    return None


def _named(names: tuple[str, ...]) -> str:
    """A tool as `tools.` shows it, and by its own name if that differs."""
    own, shown = names[0], names[-1]
    return repr(shown) if own == shown else f"{shown!r} (its own name {own!r})"


def _listed(tools: Sequence[tuple[str, ...]]) -> str:
    more = f", ... ({len(tools) - 10} more)" if len(tools) > 10 else ""
    return f"its tools are {', '.join(_named(names) for names in tools[:10])}{more}"


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
