"""Hybrid tool search: BM25F and offline embeddings, fused (the optional `semantic` extra).

`HybridSearch` keeps a `SearchIndex` and a `VectorIndex` of the same tools side by side and ranks the union of
their top candidates by a weighted sum: the BM25F score divided by the larger of the query's best BM25F score
and a floor (so a weak keyword match does not count as a perfect one), and the cosine similarity mapped to
0 at the catalog's median and 1 at the best match. The weight and floor were tuned on half of the labelled
queries of the shared data sets (see `benchmarks/results_hybrid.md`). Embedding code lives in
`codemode.search._embeddings`; importing this module without the extra raises an `ImportError` naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from codemode.search._bm25 import BM25Params, SearchIndex
from codemode.search._embeddings import Embedder, EmbeddingCache, StaticEmbedder, VectorIndex, default_cache_dir
from codemode.search._follow import apply_change, follow_catalog
from codemode.search._ranking import boost_exact, memoize_eligible

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from codemode.catalog import Catalog, CatalogChange
    from codemode.tools import Tool

__all__ = ["FusionParams", "HybridSearch", "embedding_text"]

_RANKER_DEPTH: Final = 50
"""How many names a `HybridSearch` called as a `Ranker` returns (the most `tools.search` can ask for)."""
_SPLIT: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_.\-/\s]+")


@dataclass(frozen=True, kw_only=True)
class FusionParams:
    """How BM25F and embedding scores combine (tuned on the "dev" half of the shared labelled queries)."""

    weight: float = 0.5
    """Share of the embedding score, 0 (pure BM25F) to 1 (pure embeddings)."""
    bm25_floor: float = 15.0
    """BM25F scores are divided by max(best score of the query, this)."""
    depth: int = 50
    """Candidates taken from each ranking before fusion."""


class HybridSearch:
    """BM25F and embedding search over tools, fused; embeddings of definitions are cached on disk.

    Use it as `CodeMode(catalog, search="hybrid")`, or pass one (`search=HybridSearch(fusion=...)`) to choose its
    settings, or call it directly like a `SearchIndex`; it is also a `Ranker`. Tools are embedded lazily, in one
    batch, at the first search after they were added; a definition whose text was embedded before (by any
    catalog) is read from the cache.

    Args:
        tools: Tools to index now.
        embedder: The embedding model (default: `StaticEmbedder`, WordLlama static embeddings).
        cache_dir: Folder of the embedding cache; None for `$CODEMODE_CACHE_DIR`, `$XDG_CACHE_HOME/codemode`
            or `~/.cache/codemode` (memory only with `CODEMODE_CACHE=off`); False to keep vectors in memory only.
        fusion: Fusion weight, BM25F floor and candidate depth.
        bm25: BM25F parameters of the keyword side.

    Example:
        ```python
        search = HybridSearch(catalog)
        for tool, score in search.search("how windy is it in Oslo", k=3):
            print(tool.name, round(score, 2))
        ```
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        embedder: Embedder | None = None,
        cache_dir: str | Path | Literal[False] | None = None,
        fusion: FusionParams | None = None,
        bm25: BM25Params | None = None,
    ) -> None:
        self.embedder = embedder or StaticEmbedder()
        folder = None if cache_dir is False else Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.fusion = fusion or FusionParams()
        self._keyword = SearchIndex(params=bm25)
        self._vectors = VectorIndex(self.embedder, EmbeddingCache(self.embedder.model_id, folder))
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def add(self, tool: Tool) -> None:
        """Index `tool` (its embedding is computed at the next search); a tool of the same name is replaced."""
        known = self._tools.get(tool.name)
        if known is tool:
            return  # tools are immutable: the same object is already indexed as it is
        if known is not None:
            self.remove(tool.name)
        self._tools[tool.name] = tool
        self._keyword.add(tool)
        self._vectors.put(tool.name, embedding_text(tool))

    def remove(self, name: str) -> None:
        """Drop the tool called `name`; unknown names raise `KeyError`."""
        del self._tools[name]
        self._keyword.remove(name)
        self._vectors.remove(name)

    def apply(self, change: CatalogChange) -> None:
        """Follow one catalog change: drop the removed tools, index the added ones."""
        apply_change(self, change)

    def follow(self, catalog: Catalog) -> Callable[[], None]:
        """Index `catalog`'s tools and keep following its changes; returns a function that stops following."""
        return follow_catalog(self, catalog)

    def prepare(self) -> int:
        """Embed every tool added since the last search now; returns how many were not in the cache."""
        return self._vectors.flush()

    def search(
        self, query: str, k: int = 5, *, eligible: Callable[[Tool], bool] | None = None
    ) -> list[tuple[Tool, float]]:
        """The `k` best tools for `query` with their fused scores, best first.

        Args:
            query: Free text, or a tool's exact name or alias (which then ranks first).
            k: The largest number of results.
            eligible: If given, only tools for which it returns true are ranked.
        """
        if k <= 0 or not self._tools:
            return []
        depth = max(self.fusion.depth, k)
        keyword = self._keyword.search(query, depth, eligible=eligible)
        allowed = None if eligible is None else memoize_eligible(eligible, self._tools)
        nearest = self._vectors.nearest(query, depth, allowed)
        weight = self.fusion.weight
        top = max(keyword[0][1] if keyword else 0.0, self.fusion.bm25_floor)
        scores = {tool.name: (1.0 - weight) * score / top for tool, score in keyword}
        for name, _ in nearest.top:
            scores.setdefault(name, 0.0)
        for name in scores:
            scores[name] += weight * nearest.score(name)
        exact = (tool.name for tool in self._keyword.exact(query))
        boost_exact(scores, (name for name in exact if allowed is None or allowed(name)))
        order = sorted(scores.items(), key=lambda item: -item[1])
        return [(self._tools[name], score) for name, score in order[:k] if score > 0.0]

    def __call__(self, query: str, tools: Sequence[Tool], /) -> list[str]:
        """The `Ranker` form: index any tool not seen before, rank among `tools` only, best first."""
        for tool in tools:
            self.add(tool)
        names = {tool.name for tool in tools}
        eligible = None if len(names) == len(self._tools) else lambda tool: tool.name in names
        return [tool.name for tool, _ in self.search(query, _RANKER_DEPTH, eligible=eligible)]


def embedding_text(tool: Tool) -> str:
    """What gets embedded for a tool: its name split into words, its description and its parameter names."""
    text = f"{_words(tool.name)}: {tool.description}"
    properties = tool.parameters.get("properties")
    if isinstance(properties, dict) and properties:
        text += " Parameters: " + ", ".join(_words(name) for name in properties)
    return text


def _words(identifier: str) -> str:
    return " ".join(part for part in _SPLIT.split(identifier) if part)
