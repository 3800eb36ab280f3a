"""The default tool search: an incremental BM25F index over a catalog's tools.

`SearchIndex` scores tools against a query with BM25F: the term frequencies of four fields (the tool's name,
its description, its parameter names, its parameter descriptions and enum values) are normalised by field
length, weighted and summed before BM25's saturation, so a word in a tool's name counts for more than the
same word deep in a parameter description. Tools are added and removed one at a time: the index keeps
per-field posting dictionaries, field lengths and running length totals, and caches per-term scores until
the next change. Queries are scored term at a time with early termination that keeps the top k exact.
A query equal to a tool's name or alias ranks that tool first. What a tool's fields and their term counts are is
`_fields`' job.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codemode.catalog._bulk import collector_paused
from codemode.search._fields import field_terms, field_texts
from codemode.search._ranking import boost_exact, exact_keys, memoize_eligible
from codemode.search._tokenize import tokenize

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from codemode.tools import Tool

__all__ = ["BM25Params", "SearchIndex"]


@dataclass(frozen=True, kw_only=True)
class BM25Params:
    """Constants of the BM25F score and the weight of each field (tuned on half of the labelled queries)."""

    k1: float = 1.2
    """Term-frequency saturation: higher lets repeated terms keep adding score."""
    b: float = 0.75
    """Length normalisation within each field, 0 (none) to 1 (full)."""
    name: float = 2.0
    """Weight of the name."""
    description: float = 1.0
    """Weight of the description."""
    parameter_names: float = 1.0
    """Weight of the parameter names."""
    parameter_descriptions: float = 0.5
    """Weight of the parameter descriptions and string enum values."""

    @property
    def weights(self) -> tuple[float, float, float, float]:
        """The field weights in index order."""
        return (self.name, self.description, self.parameter_names, self.parameter_descriptions)


class SearchIndex:
    """An incremental BM25F index over tools.

    Example:
        ```python
        index = SearchIndex()
        for tool in catalog_tools:
            index.add(tool)
        for tool, score in index.search("create an issue", k=3):
            print(tool.name, round(score, 2))
        ```
    """

    def __init__(self, tools: Iterable[Tool] = (), *, params: BM25Params | None = None) -> None:
        self._params = params or BM25Params()
        self._tools: dict[int, Tool] = {}
        self._ids: dict[str, int] = {}
        self._next_id = 0
        self._exact: dict[str, list[int]] | None = {}  # None: to derive from the tools at the second exact lookup
        self._exact_scanned = False
        self._postings: tuple[dict[str, dict[int, int]], ...] = ({}, {}, {}, {})
        self._flat: tuple[dict[str, str], ...] | None = None  # restored postings not yet read: "doc count doc count"
        self._fields: dict[int, tuple[dict[str, int], ...]] | None = {}  # None: to derive from the postings
        self._lengths: dict[int, tuple[int, ...]] = {}
        self._totals = [0, 0, 0, 0]
        self._impacts: dict[str, tuple[dict[int, float], float]] = {}
        with collector_paused():
            for tool in tools:
                self.add(tool)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._ids

    def add(self, tool: Tool) -> None:
        """Index `tool`; a tool with the same name is replaced and keeps its place in registration order."""
        self._add_terms(tool, field_terms(field_texts(tool)))

    def _add_terms(self, tool: Tool, fields: tuple[dict[str, int], ...]) -> None:
        """Index `tool` with the term counts of its fields, computed (`add`) or read back (`_index_cache`)."""
        doc_id = self._ids.get(tool.name)
        if doc_id is not None and self._tools[doc_id] is tool:
            return  # tools are immutable: the same object is already indexed as it is
        if doc_id is None:
            doc_id = self._next_id
            self._next_id += 1
        else:
            self._unindex(doc_id)
        self._ids[tool.name] = doc_id
        self._tools[doc_id] = tool
        exact = self._exact_index()
        for key in exact_keys(tool):
            exact.setdefault(key, []).append(doc_id)
        self._doc_fields()[doc_id] = fields
        lengths = self._lengths[doc_id] = tuple(sum(terms.values()) for terms in fields)
        for field, terms in enumerate(fields):
            postings = self._postings[field]
            for term, count in terms.items():
                posting = postings.get(term)
                if posting is None:
                    postings[term] = {doc_id: count}
                else:
                    posting[doc_id] = count
            self._totals[field] += lengths[field]
        self._impacts.clear()

    @classmethod
    def _restored(
        cls,
        tools: list[Tool],
        flat: tuple[dict[str, str], ...],
        lengths: list[tuple[int, ...]],
        params: BM25Params | None,
    ) -> SearchIndex:
        """The index of `tools` (distinct names, ids in order) from the postings and field lengths it had.

        What `_index_cache` read back. Each posting is given as text (`"0 2 7 1"`: tool 0 twice, tool 7 once)
        and read when a search first needs its term; all of them, and the per-tool term counts, only if a tool
        is later added, removed or replaced.
        """
        index = cls(params=params)
        index._tools = dict(enumerate(tools))
        index._ids = {tool.name: doc_id for doc_id, tool in index._tools.items()}
        index._next_id = len(tools)
        index._exact = None
        index._flat = flat
        index._lengths = dict(enumerate(lengths))
        index._totals = [sum(column) for column in zip(*lengths, strict=True)] if lengths else [0, 0, 0, 0]
        index._fields = None
        return index

    def _exact_index(self) -> dict[str, list[int]]:
        """The tools by casefolded name and alias, derived at first use for a restored index."""
        if self._exact is None:
            exact: dict[str, list[int]] = {}
            for doc_id, tool in self._tools.items():
                for key in exact_keys(tool):
                    exact.setdefault(key, []).append(doc_id)
            self._exact = exact
        return self._exact

    def _doc_fields(self) -> dict[int, tuple[dict[str, int], ...]]:
        """Each tool's term counts by field, derived from the postings the first time a restored index needs them."""
        if self._fields is None:
            self._read_postings()
            fields: dict[int, tuple[dict[str, int], ...]] = {doc_id: ({}, {}, {}, {}) for doc_id in self._tools}
            for field, postings in enumerate(self._postings):
                for term, posting in postings.items():
                    for doc_id, count in posting.items():
                        fields[doc_id][field][term] = count
            self._fields = fields
        return self._fields

    def _posting(self, field: int, term: str) -> dict[int, int] | None:
        """The tools with `term` in `field` and its count in each, read from the flat form at first use."""
        posting = self._postings[field].get(term)
        if posting is None and self._flat is not None:
            flat = self._flat[field].pop(term, None)
            if flat is not None:
                posting = self._postings[field][term] = _pairs(flat)
        return posting

    def _read_postings(self) -> None:
        """Every posting not read yet, before a change (which needs them all)."""
        if self._flat is not None:
            for postings, flat in zip(self._postings, self._flat, strict=True):
                postings.update((term, _pairs(pairs)) for term, pairs in flat.items())
            self._flat = None

    def remove(self, name: str) -> None:
        """Drop the tool called `name` from the index; unknown names raise `KeyError`."""
        doc_id = self._ids.pop(name)
        self._unindex(doc_id)
        del self._tools[doc_id]

    def _unindex(self, doc_id: int) -> None:
        exact = self._exact_index()
        for key in exact_keys(self._tools[doc_id]):
            ids = exact[key]
            ids.remove(doc_id)
            if not ids:
                del exact[key]
        for field, terms in enumerate(self._doc_fields().pop(doc_id)):
            postings = self._postings[field]
            for term in terms:
                posting = postings[term]
                del posting[doc_id]
                if not posting:
                    del postings[term]  # so the vocabulary does not grow with every replaced tool
        for field, length in enumerate(self._lengths.pop(doc_id)):
            self._totals[field] -= length
        self._impacts.clear()

    def search(
        self, query: str, k: int = 5, *, eligible: Callable[[Tool], bool] | None = None
    ) -> list[tuple[Tool, float]]:
        """The `k` best tools for `query` with their scores, best first; ties go to the earlier registered.

        Args:
            query: Free text, or a tool's exact name or alias (which then ranks first).
            k: The largest number of results.
            eligible: If given, only tools for which it returns true are ranked.
        """
        if k <= 0 or not self._tools:
            return []
        allowed = None if eligible is None else memoize_eligible(eligible, self._tools)
        scores = self._score(dict.fromkeys(tokenize(query)), k, allowed)
        boost_exact(scores, self._exact_ids(query))
        return [(self._tools[doc_id], score) for doc_id, score in _best(scores, k, allowed)]

    def exact(self, query: str) -> list[Tool]:
        """The tools whose name or alias is `query` (ignoring case and surrounding space), in registration order."""
        return [self._tools[doc_id] for doc_id in self._exact_ids(query)]

    def _exact_ids(self, query: str) -> list[int]:
        key = query.strip().casefold()
        if self._exact is None and not self._exact_scanned:  # a one-off search (the CLI's) needs no table
            self._exact_scanned = True
            return [i for i, tool in self._tools.items() if key in (tool.name.casefold(), tool.alias.casefold())]
        return sorted(self._exact_index().get(key, ()))

    def _score(self, terms: Iterable[str], k: int, allowed: Callable[[int], bool] | None) -> dict[int, float]:
        """Scores of every tool that can reach the top `k`, term at a time, rarest (highest-scoring) term first.

        Once the terms left cannot lift a tool that has no score yet above the current k-th score, only tools
        already scored are updated (the "continue" strategy): the top `k` stay exact, the work shrinks.
        """
        impacts = sorted((self._impact(term) for term in terms), key=lambda pair: pair[1], reverse=True)
        remaining = sum(ceiling for _, ceiling in impacts)
        scores: dict[int, float] = {}
        pruning = False
        for impact, ceiling in impacts:
            if not pruning and len(impact) > len(scores) >= k:  # a check costs less than the term it may save
                if allowed is None:
                    pruning = remaining < _kth_score(scores, k)
                else:
                    best = _best(scores, k, allowed)
                    pruning = len(best) == k and remaining < best[-1][1]
            remaining -= ceiling
            get = scores.get
            if not scores:
                scores.update(impact)  # the first term: a copy in C
            elif not pruning:
                for doc_id, value in impact.items():
                    scores[doc_id] = get(doc_id, 0.0) + value
            elif len(impact) < len(scores):
                for doc_id, value in impact.items():
                    if doc_id in scores:
                        scores[doc_id] += value
            else:
                for doc_id in scores:
                    scores[doc_id] += impact.get(doc_id, 0.0)
        return scores

    def _impact(self, term: str) -> tuple[dict[int, float], float]:
        """Each tool's BM25 score for one term and the largest of them, cached until the index changes."""
        cached = self._impacts.get(term)
        if cached is not None:
            return cached
        params = self._params
        count = len(self._tools)
        lengths = self._lengths
        weighted: dict[int, float] = {}
        for field, weight in enumerate(params.weights):
            posting = self._posting(field, term) if weight else None
            if not posting:
                continue
            # A field's term frequency, normalised by the field's length relative to its average length.
            base, slope = 1.0 - params.b, params.b * count / max(self._totals[field], 1)
            get = weighted.get
            for doc_id, tf in posting.items():
                weighted[doc_id] = get(doc_id, 0.0) + weight * tf / (base + slope * lengths[doc_id][field])
        if not weighted:
            return {}, 0.0
        idf = math.log(1.0 + (count - len(weighted) + 0.5) / (len(weighted) + 0.5))
        k1 = params.k1
        impact = {doc_id: idf * tf * (k1 + 1.0) / (tf + k1) for doc_id, tf in weighted.items()}
        cached = self._impacts[term] = (impact, max(impact.values()))
        return cached


def _pairs(flat: str) -> dict[int, int]:
    """`"doc count doc count"` as `{doc: count}`."""
    pairs = map(int, flat.split())
    return dict(zip(pairs, pairs, strict=False))


def _best(scores: dict[int, float], k: int, allowed: Callable[[int], bool] | None) -> list[tuple[int, float]]:
    """The `k` best `(doc_id, score)` pairs, ties to the lower id; only allowed ids when a filter is given."""
    if allowed is None:
        return _top(scores, k)
    # Ask the filter about a growing prefix of the ranking rather than about every scored tool.
    want = k * 4
    while True:
        candidates = _top(scores, want)
        best = [item for item in candidates if allowed(item[0])][:k]
        if len(best) == k or len(candidates) < want:
            return best
        want *= 4


def _top(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    """The `k` highest-scoring pairs, ties to the lower id."""
    if len(scores) <= k:
        chosen = list(scores.items())
    else:
        # Bare floats compare in C; a key function per item would cost more than the whole scoring.
        threshold = heapq.nlargest(k, scores.values())[-1]
        chosen = [item for item in scores.items() if item[1] >= threshold]
    chosen.sort(key=lambda item: (-item[1], item[0]))
    return chosen[:k]


def _kth_score(scores: dict[int, float], k: int) -> float:
    """The `k`-th highest score (scores must hold at least `k` entries)."""
    return heapq.nlargest(k, scores.values())[-1]
