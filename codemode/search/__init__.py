"""Tool search: the default BM25F index, the optional hybrid ranker, rank fusion, and the `search=` option.

Modules: `_tokenize` (text to terms), `_fields` (a tool's four field texts and their term counts), `_bm25`
(`SearchIndex`), `_index_cache` (a catalog's index saved to disk and read back), `_ranking` (what every ranking
shares: the exact-name boost, the eligibility memo, rank fusion), `_option` (`Ranker`, `ToolIndex` and the
`search=` option bound to a catalog), `hybrid` and `_embeddings` (the `semantic` extra, never imported from
here), and `evaluation` (recall, nDCG and MRR on labelled queries).

Example:
    ```python
    from codemode.search import SearchIndex

    index = SearchIndex(catalog)
    for tool, score in index.search("create an issue", k=3):
        print(tool.name, round(score, 2))
    ```
"""

from __future__ import annotations

from codemode.search._bm25 import BM25Params as BM25Params
from codemode.search._bm25 import SearchIndex as SearchIndex
from codemode.search._follow import ToolIndex as ToolIndex
from codemode.search._option import CatalogSearch as CatalogSearch
from codemode.search._option import Ranker as Ranker
from codemode.search._option import SearchKind as SearchKind
from codemode.search._option import SearchOption as SearchOption
from codemode.search._option import build_index as build_index
from codemode.search._ranking import merge_rankings as merge_rankings
from codemode.search._ranking import normalize_ranking as normalize_ranking

__all__ = [
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
