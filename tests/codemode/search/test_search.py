from __future__ import annotations

from inspect import isawaitable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from codemode import Tool
from codemode.search import BM25Params, Ranker, SearchIndex, normalize_ranking
from codemode.search.evaluation import load_queries, load_tools

if TYPE_CHECKING:
    from collections.abc import Sequence


def make_tool(name: str, description: str = "", **parameters: str) -> Tool:
    properties = {key: {"type": "string", "description": text} for key, text in parameters.items()}
    return Tool(
        name=name,
        alias=name.replace(".", "_").replace("-", "_"),
        description=description,
        parameters={"type": "object", "properties": properties},
    )


CATALOG = [
    make_tool("get_weather", "Current weather forecast for a city.", city="City name"),
    make_tool("github.create_issue", "Open a new issue in a repository.", repo="Repository", title="Issue title"),
    make_tool("sendEmail", "Send an email message to a recipient.", to="Recipient address", body="Message text"),
    make_tool("math.factorial", "Compute the factorial of a number.", n="The number"),
    make_tool("list_files", "List the files in a directory.", path="Directory path"),
    make_tool("search_flights", "Find flights between two airports.", origin="Origin airport", date="Travel date"),
]


def names(results: list[tuple[Tool, float]]) -> list[str]:
    return [tool.name for tool, _ in results]


def test_words_inside_camel_case_and_dotted_names_are_found() -> None:
    """A query word matches a piece of a camelCase or dotted name."""
    index = SearchIndex(CATALOG)
    assert names(index.search("email", k=1)) == ["sendEmail"]
    assert names(index.search("create issue", k=1)) == ["github.create_issue"]


def test_inflected_query_words_match_their_stems() -> None:
    """`issues created` finds `create_issue`; `file listing` finds `list_files`."""
    index = SearchIndex(CATALOG)
    assert names(index.search("issues created", k=1)) == ["github.create_issue"]
    assert names(index.search("file listing", k=1)) == ["list_files"]


def test_parameter_descriptions_are_searched() -> None:
    """A word only in a parameter description still finds its tool."""
    index = SearchIndex(CATALOG)
    assert names(index.search("recipient address", k=1)) == ["sendEmail"]


def test_a_name_word_outranks_the_same_word_in_a_parameter_description() -> None:
    """The name field weighs more than the parameter-description field."""
    in_name = make_tool("directory_tree", "Show a tree.")
    in_parameter = make_tool("print_tree", "Show a tree.", root="The directory to show")
    index = SearchIndex([in_parameter, in_name])
    assert names(index.search("directory", k=2)) == ["directory_tree", "print_tree"]
    flat = SearchIndex([in_parameter, in_name], params=BM25Params(name=1.0, parameter_descriptions=1.0))
    assert flat.search("directory", k=2)[0][1] <= index.search("directory", k=2)[0][1]


def test_exact_name_or_alias_ranks_first() -> None:
    """A query equal to a tool's original name or alias puts that tool first."""
    index = SearchIndex([*CATALOG, make_tool("factorial_table", "Factorial factorial math table.")])
    assert names(index.search("math.factorial", k=1)) == ["math.factorial"]
    assert names(index.search("math_factorial", k=1)) == ["math.factorial"]
    assert names(index.search("  Math.Factorial ", k=1)) == ["math.factorial"]


def test_incremental_add_and_remove_rank_like_a_fresh_build() -> None:
    """Adding, replacing and removing tools one at a time gives the scores of a fresh index."""
    extra = make_tool("get_forecast", "Weather forecast for the next days.", city="City")
    incremental = SearchIndex(CATALOG[:3])
    incremental.search("weather forecast")  # fill the per-term cache before changing the index
    for tool in [*CATALOG[3:], extra]:
        incremental.add(tool)
    incremental.remove("sendEmail")
    incremental.add(make_tool("get_weather", "Weather now and forecast.", city="City name"))
    fresh_tools = [make_tool("get_weather", "Weather now and forecast.", city="City name"), *CATALOG[1:2]]
    fresh = SearchIndex([*fresh_tools, *CATALOG[3:], extra])
    for query in ("weather forecast", "city", "issue", "number factorial", "email"):
        assert [(t.name, s) for t, s in incremental.search(query, k=10)] == [
            (t.name, s) for t, s in fresh.search(query, k=10)
        ]
    assert "sendEmail" not in incremental
    assert len(incremental) == len(fresh) == 6


def test_a_replaced_tool_keeps_its_registration_order_for_ties() -> None:
    """Equal scores are ordered by registration, and replacing a tool keeps its place."""
    twins = [make_tool(f"tool_{index}", "Convert units.") for index in range(4)]
    index = SearchIndex(twins)
    index.add(make_tool("tool_0", "Convert units."))
    assert names(index.search("convert units", k=4)) == ["tool_0", "tool_1", "tool_2", "tool_3"]
    assert names(index.search("convert units", k=2)) == ["tool_0", "tool_1"]  # a tie across the cut at k


def test_eligibility_filter_limits_results() -> None:
    """Only eligible tools are returned, and still `k` of them when enough match."""
    twins = [make_tool(f"tool_{index}", "Convert units.") for index in range(30)]
    index = SearchIndex(twins)
    results = index.search("convert", k=3, eligible=lambda tool: tool.name.endswith("7"))
    assert names(results) == ["tool_7", "tool_17", "tool_27"]


def test_no_match_and_non_positive_k_give_no_results() -> None:
    """Unknown words, empty queries and `k <= 0` return an empty list."""
    index = SearchIndex(CATALOG)
    assert index.search("zzzqqq") == []
    assert index.search("") == []
    assert index.search("weather", k=0) == []
    assert SearchIndex().search("weather") == []


DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


@pytest.mark.skipif(not (DATA / "stabletoolbench").exists(), reason="needs the shared data sets")
def test_early_termination_keeps_the_top_k_exact_on_real_queries() -> None:
    """The pruned search returns exactly the first k of the exhaustive ranking (k = every tool), ties included."""
    tools = load_tools(DATA / "stabletoolbench" / "tools.jsonl") + load_tools(DATA / "bfcl" / "tools.jsonl")
    index = SearchIndex({tool.name: tool for tool in tools}.values())
    queries = [q.query for name in ("stabletoolbench", "bfcl") for q in load_queries(DATA / name / "queries.jsonl")]
    for query in queries[::10]:
        everything = index.search(query, len(index))
        for k in (1, 5, 10):
            assert index.search(query, k) == everything[:k], query


def test_search_is_deterministic() -> None:
    """The same index and query give the same ranking and scores every time."""
    first = SearchIndex(CATALOG).search("find a city weather or flights", k=6)
    second = SearchIndex(CATALOG).search("find a city weather or flights", k=6)
    assert [(t.name, s) for t, s in first] == [(t.name, s) for t, s in second]
    assert [score for _, score in first] == sorted((score for _, score in first), reverse=True)


def test_removing_an_unknown_name_raises_key_error() -> None:
    """`remove` of a name that is not indexed is a developer mistake."""
    index = SearchIndex(CATALOG)
    with pytest.raises(KeyError):
        index.remove("nope")


def test_normalize_ranking_drops_unknown_and_repeated_names() -> None:
    """A custom ranker's names become tools; aliases resolve; unknowns and repeats go."""
    ranked = normalize_ranking(["math_factorial", "nope", "math.factorial", "sendEmail", "sendEmail"], CATALOG)
    assert [tool.name for tool in ranked] == ["math.factorial", "sendEmail"]


async def test_a_ranker_may_be_async() -> None:
    """An async function fits the `Ranker` protocol; its awaited names normalise like sync ones."""

    async def ranker(query: str, tools: Sequence[Tool]) -> list[str]:
        return [tool.name for tool in tools if query in tool.description.lower()]

    typed: Ranker = ranker
    result = typed("weather", CATALOG)
    assert isawaitable(result)
    assert [tool.name for tool in normalize_ranking(await result, CATALOG)] == ["get_weather"]
