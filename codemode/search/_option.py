"""The `search=` option in one place: what it accepts, and the catalog search it resolves to.

`search=` is `"bm25"` (the default `SearchIndex`), `"hybrid"` (`HybridSearch`, the optional `semantic` extra),
an index object (a `ToolIndex`: filled with the catalog and told of each change), or a `Ranker` function
(handed every tool on each search). `CatalogSearch` is that choice bound to a catalog: the one function
behind `tools.search`, and the one subscription that keeps an index in step with the catalog.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from codemode._cachedir import default_cache_dir
from codemode.search._follow import ToolIndex, follow_catalog
from codemode.search._index_cache import cached_index
from codemode.search._ranking import normalize_ranking

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Sequence

    from codemode.catalog import Catalog
    from codemode.search._bm25 import SearchIndex
    from codemode.tools import Tool

__all__ = [
    "CatalogSearch",
    "Ranker",
    "SearchKind",
    "SearchOption",
    "build_index",
    "index_factory",
]

SearchKind: TypeAlias = Literal["bm25", "hybrid"]
"""The built-in rankers by name: BM25F, or BM25F fused with offline embeddings (the `semantic` extra)."""


class Ranker(Protocol):
    """A custom search function: ranks the eligible tools for a query, best first.

    It receives the query and the tools it may choose from, and returns tool names (original names or
    aliases), synchronously or as an awaitable. Unknown and repeated names are dropped by the caller
    (see `normalize_ranking`), and the list is cut to the number of results asked for.

    Example:
        ```python
        async def embedding_ranker(query: str, tools: Sequence[Tool]) -> list[str]:
            scores = await my_embeddings.similarity(query, [tool.description for tool in tools])
            return [tool.name for _, tool in sorted(zip(scores, tools), reverse=True)]
        ```
    """

    def __call__(self, query: str, tools: Sequence[Tool], /) -> Sequence[str] | Awaitable[Sequence[str]]:
        """Names of tools from `tools`, most relevant first."""
        ...


SearchOption: TypeAlias = ToolIndex | Ranker | SearchKind | None
"""What `CodeMode(search=...)` accepts; None is `"bm25"`."""


def build_index(kind: SearchKind, tools: Iterable[Tool] = ()) -> ToolIndex:
    """A new built-in index of `kind` over `tools`; `"hybrid"` raises `ImportError` without the `semantic` extra."""
    return index_factory(kind)(tools)


def index_factory(kind: SearchKind) -> Callable[[Iterable[Tool]], ToolIndex]:
    """What makes a built-in index of `kind` from tools; checks the name, and imports the `semantic` extra now."""
    if kind == "hybrid":
        from codemode.search.hybrid import HybridSearch  # the optional `semantic` extra, imported only when chosen

        return HybridSearch
    if kind == "bm25":
        return _bm25_index
    raise ValueError(f'search={kind!r}: expected "bm25", "hybrid", an index or a ranker function')


def _bm25_index(tools: Iterable[Tool]) -> SearchIndex:
    """The default index; a large catalog's is read from the disk cache when the same tools were indexed before."""
    return cached_index(tools, folder=default_cache_dir())


class CatalogSearch:
    """A catalog's `tools.search` as `search=` chose it, following the catalog from creation until `close`.

    A built-in index (`"bm25"`, `"hybrid"`) is built at the first search, so a run that never searches, and the
    start of a host, never pay for indexing a large catalog; an index object passed in is filled at once.

    Args:
        catalog: The tools to search.
        search: A `SearchOption`.

    Raises:
        ValueError: `search` is a string other than `"bm25"` or `"hybrid"`.
        TypeError: `search` is neither an index nor callable.
        ImportError: `"hybrid"` without the `semantic` extra.
    """

    def __init__(self, catalog: Catalog, search: SearchOption = None) -> None:
        self.catalog = catalog
        self._ranker: Ranker | None = None
        self._index: ToolIndex | None = None
        self._make: Callable[[Iterable[Tool]], ToolIndex] | None = None
        if search is None or isinstance(search, str):
            self._make = index_factory(search or "bm25")
        elif isinstance(search, ToolIndex):  # before the ranker test: `HybridSearch` is callable too
            self._index = search
        elif callable(search):
            self._ranker = search
        else:
            raise TypeError(
                f'search={search!r}: expected "bm25", "hybrid", an index (with add, remove, search and `in`) '
                "or a ranker function"
            )
        self._indexed: dict[str, Tool] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._following = False
        self.follow()

    def follow(self) -> None:
        """Keep the index in step with the catalog again, after catching up with the changes made since `close`."""
        self._following = True
        if self._index is not None and self._unsubscribe is None:
            self._unsubscribe = follow_catalog(self._index, self.catalog, since=self._indexed)

    def close(self) -> None:
        """Stop following the catalog (the catalog keeps no reference to this search)."""
        if self._following:
            self._indexed = {tool.name: tool for tool in self.catalog}
        self._following = False
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def __call__(self, query: str, k: int) -> list[Tool]:
        """The `k` best tools for `query`, best first."""
        if self._index is None and self._make is not None:
            self._build()
        if self._index is not None:
            return [tool for tool, _ in self._index.search(query, k)]
        assert self._ranker is not None
        tools = list(self.catalog)
        ranked = self._ranker(query, tools)
        names = await ranked if inspect.isawaitable(ranked) else ranked
        return normalize_ranking(names, tools)[:k]

    def _build(self) -> None:
        """Make the built-in index: of the catalog while following it, else of the tools it held at `close`."""
        assert self._make is not None
        if self._following:
            self._index = self._make(self.catalog)
            self._indexed = {}
            self._unsubscribe = follow_catalog(
                self._index, self.catalog, since={tool.name: tool for tool in self.catalog}
            )
        else:
            self._index = self._make(self._indexed.values())
