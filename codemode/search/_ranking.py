"""Operations on rankings that every search shares, written once for the BM25F and the hybrid index alike.

A query equal to a tool's name or alias ranks that tool first (`boost_exact`); an `eligible` filter is asked
about each tool at most once per search (`memoize_eligible`); the names a custom ranker returns become tools
(`normalize_ranking`); and the rankings of several queries merge by reciprocal rank (`merge_rankings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from codemode.tools import Tool

__all__ = ["boost_exact", "exact_keys", "memoize_eligible", "merge_rankings", "normalize_ranking"]

K = TypeVar("K", int, str)


def exact_keys(tool: Tool) -> set[str]:
    """The query texts that name `tool` exactly: its name and its alias, casefolded."""
    return {tool.name.casefold(), tool.alias.casefold()}


def boost_exact(scores: dict[K, float], exact: Iterable[K]) -> None:
    """Score the tools of `exact` (named by the query) above every other scored tool, keeping their order."""
    keys = list(exact)
    if keys:
        top = max(scores.values(), default=0.0) + 1.0
        scores.update(dict.fromkeys(keys, top))


def memoize_eligible(eligible: Callable[[Tool], bool], tools: Mapping[K, Tool]) -> Callable[[K], bool]:
    """`eligible` by the index's key for a tool, each tool asked at most once per search."""
    answers: dict[K, bool] = {}

    def allowed(key: K) -> bool:
        answer = answers.get(key)
        if answer is None:
            answer = answers[key] = bool(eligible(tools[key]))
        return answer

    return allowed


def normalize_ranking(names: Iterable[str], tools: Sequence[Tool]) -> list[Tool]:
    """The tools a ranker named, in its order, without unknown names or repeats.

    A name may be a tool's original name or its alias; the original name wins if both match different tools.
    """
    by_name: dict[str, Tool] = {tool.alias: tool for tool in tools}
    by_name.update((tool.name, tool) for tool in tools)
    ranked: list[Tool] = []
    seen: set[str] = set()
    for name in names:
        tool = by_name.get(name) if isinstance(name, str) else None
        if tool is not None and tool.name not in seen:
            seen.add(tool.name)
            ranked.append(tool)
    return ranked


def merge_rankings(rankings: list[list[Tool]], *, constant: int = 60) -> list[Tool]:
    """Tools of several rankings by summed reciprocal rank `1 / (constant + rank)`; ties keep first-seen order."""
    scores: dict[str, float] = {}
    tools: dict[str, Tool] = {}
    for ranking in rankings:
        for rank, tool in enumerate(ranking, start=1):
            tools.setdefault(tool.name, tool)
            scores[tool.name] = scores.get(tool.name, 0.0) + 1.0 / (constant + rank)
    return [tools[name] for name in sorted(scores, key=lambda name: -scores[name])]
