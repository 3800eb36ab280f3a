"""An index that follows a catalog: the `ToolIndex` protocol, and the subscription that keeps one in step.

Both the `search=` option (`_option`) and the hybrid ranker (`hybrid`) keep their index in step this way; it
sits apart from both so neither imports the other to do it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from codemode.catalog import CatalogChange

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from codemode.catalog import Catalog
    from codemode.tools import Tool

__all__ = ["ToolIndex", "apply_change", "follow_catalog"]


@runtime_checkable
class ToolIndex(Protocol):
    """A search index that `CodeMode` keeps in step with its catalog: `SearchIndex`, `HybridSearch` or your own.

    Unlike a `Ranker`, which is handed every eligible tool on each search, an index holds the tools itself
    and is told of each change.
    """

    def __contains__(self, name: object, /) -> bool:
        """Whether a tool of this original name is indexed."""
        ...

    def add(self, tool: Tool, /) -> None:
        """Index `tool`, replacing a tool of the same name."""
        ...

    def remove(self, name: str, /) -> None:
        """Drop the tool called `name`."""
        ...

    def search(self, query: str, k: int = 5) -> list[tuple[Tool, float]]:
        """The `k` best tools for `query` with their scores, best first."""
        ...


def apply_change(index: ToolIndex, change: CatalogChange) -> None:
    """Tell `index` of one catalog change: drop the removed tools, index the added ones."""
    for tool in change.removed:
        if tool.name in index:
            index.remove(tool.name)
    for tool in change.added:
        index.add(tool)


def follow_catalog(
    index: ToolIndex, catalog: Catalog, *, since: Mapping[str, Tool] | None = None
) -> Callable[[], None]:
    """Bring `index` up to date with `catalog` and apply each later change; returns what stops following.

    Args:
        index: The index to keep in step.
        catalog: The catalog it follows.
        since: The tools `index` already holds by name (what the catalog held when it last stopped following).
    """
    current = {tool.name: tool for tool in catalog}
    since = since or {}
    apply_change(
        index,
        CatalogChange(
            added=tuple(tool for name, tool in current.items() if since.get(name) is not tool),
            removed=tuple(tool for name, tool in since.items() if current.get(name) is not tool),
        ),
    )
    return catalog.subscribe(functools.partial(apply_change, index))
