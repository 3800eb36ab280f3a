"""The public surface of `codemode.search`, and the import paths kept from before it was a package."""

from __future__ import annotations

import codemode
import codemode.search


def test_the_search_package_exports_exactly_its_documented_names() -> None:
    """`codemode.search.__all__` is pinned, sorted, and every name resolves."""
    assert codemode.search.__all__ == [
        "BM25Params",
        "CatalogSearch",
        "Ranker",
        "SearchIndex",
        "SearchKind",
        "SearchOption",
        "ToolIndex",
        "build_index",
        "merge_rankings",
        "normalize_ranking",
    ]
    for name in codemode.search.__all__:
        assert getattr(codemode.search, name) is not None


def test_ranker_index_and_search_index_are_the_same_objects_from_codemode() -> None:
    """`Ranker`, `ToolIndex` and `SearchIndex` are exported together from `codemode` and `codemode.search`."""
    assert (codemode.Ranker, codemode.ToolIndex, codemode.SearchIndex) == (
        codemode.search.Ranker,
        codemode.search.ToolIndex,
        codemode.search.SearchIndex,
    )
