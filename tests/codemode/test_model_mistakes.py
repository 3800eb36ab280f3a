# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""The model's own mistakes get answers it can act on; it can browse a catalog without announcing every stub."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inline_snapshot import snapshot

from codemode import Catalog, CodeMode

if TYPE_CHECKING:
    from codemode import ExecuteResult


def small_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    def convert_currency(amount: float, source: str, target: str) -> float:
        """Convert an amount of money between two ISO 4217 codes."""
        return amount

    @catalog.tool
    def get_weather(city: str) -> str:
        """Get the weather forecast for a city."""
        return "sunny"

    @catalog.tool
    def send_email(to: str, subject: str) -> str:
        """Send an email message."""
        return "sent"

    catalog.add(
        name="gh.create_issue",
        description="Create a GitHub issue.\n\nMore details here.",
        parameters={"type": "object", "properties": {"title": {"type": "string"}}},
        handler=lambda **kw: "created",
    )
    catalog.add(
        name="gh.list_issues",
        description="List the issues of a repository.",
        parameters={"type": "object", "properties": {}},
        handler=lambda **kw: [],
    )
    return catalog


async def execute(code: str, catalog: Catalog | None = None) -> ExecuteResult:
    async with CodeMode(small_catalog() if catalog is None else catalog, isolation="inline") as cm:
        return await cm.execute(code, cm.new_state())


async def error_of(code: str, catalog: Catalog | None = None) -> str:
    result = await execute(code, catalog)
    assert result.run.error is not None, result.text
    return result.run.error.message


async def test_a_wrong_keyword_to_search_names_the_real_parameter() -> None:
    """`limit=3` is answered with `max_results`, and no internal class or method name shows."""
    message = await error_of('await tools.search("weather", limit=3)')

    assert "ToolRuntime" not in message
    assert message == snapshot(
        "ToolError: tools.search(query, max_results=5) has no argument `limit`; did you mean `max_results`? (line 1)"
    )


async def test_helpers_called_wrongly_say_their_signature() -> None:
    """Too many positional arguments, or a wrong keyword to `describe`, get the helper's signature."""
    assert await error_of('await tools.search("a", 3, 4)') == snapshot(
        "ToolError: tools.search(query, max_results=5) takes at most 2 arguments, got 3 (line 1)"
    )
    assert await error_of('await tools.describe(tool="get_weather")') == snapshot(
        "ToolError: tools.describe(name) has no argument `tool`; did you mean `name`? (line 1)"
    )


async def test_list_gives_names_and_one_line_descriptions_by_prefix_and_page() -> None:
    """`tools.list()` is a compact, paged listing that announces nothing."""
    result = await execute(
        "everything = await tools.list()\n"
        'github = await tools.list(prefix="gh.")\n'
        "second = await tools.list(page=2, page_size=2)\n"
        "return everything, github, second"
    )

    assert result.ok, result.text
    assert result.announcement is None
    assert result.run.value == snapshot(
        [
            {
                "tools": [
                    {
                        "name": "convert_currency",
                        "description": "Convert an amount of money between two ISO 4217 codes.",
                    },
                    {"name": "get_weather", "description": "Get the weather forecast for a city."},
                    {"name": "send_email", "description": "Send an email message."},
                    {"name": "gh_create_issue", "description": "Create a GitHub issue."},
                    {"name": "gh_list_issues", "description": "List the issues of a repository."},
                ],
                "page": 1,
                "pages": 1,
                "total": 5,
            },
            {
                "tools": [
                    {"name": "gh_create_issue", "description": "Create a GitHub issue."},
                    {"name": "gh_list_issues", "description": "List the issues of a repository."},
                ],
                "page": 1,
                "pages": 1,
                "total": 2,
            },
            {
                "tools": [
                    {"name": "send_email", "description": "Send an email message."},
                    {"name": "gh_create_issue", "description": "Create a GitHub issue."},
                ],
                "page": 2,
                "pages": 3,
                "total": 5,
            },
        ]
    )


async def test_dir_of_tools_shows_the_helpers_and_a_small_catalogs_tools() -> None:
    """`dir(tools)` lists `search`, `describe`, `list` and, for a small catalog, each tool's name."""
    result = await execute("return dir(tools)")

    assert result.run.value == snapshot(
        [
            "convert_currency",
            "describe",
            "get_weather",
            "gh_create_issue",
            "gh_list_issues",
            "list",
            "search",
            "send_email",
        ]
    )


async def test_a_catalog_tool_named_search_stays_reachable() -> None:
    """A tool called `search` becomes `tools.search_tool`; `tools.search` stays the helper, and its errors say which is which."""
    catalog = Catalog()
    catalog.add(
        name="search",
        description="Search the web.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        handler=lambda q: f"results for {q}",
    )

    found = await execute('return await tools.search("search the web")', catalog)
    called = await execute('return await tools.search_tool(q="codemode")', catalog)
    by_name = await execute('return await tools["search_tool"](q="codemode")', catalog)
    confused = await error_of('await tools.search(q="codemode")', catalog)

    assert found.run.value == snapshot(
        [{"name": "search_tool", "description": "Search the web.", "signature": "search_tool(*, q: str) -> Any"}]
    )
    assert called.run.value == "results for codemode"
    assert by_name.run.value == "results for codemode"
    assert confused == snapshot(
        "ToolError: tools.search(query, max_results=5) has no argument `q`; did you mean `query`? (the catalog's tool 'search' is `tools.search_tool`) (line 1)"
    )


async def test_a_search_that_matches_nothing_in_a_small_catalog_returns_weak_matches() -> None:
    """ "how much is 100 dollars in pounds" finds nothing by words; the small catalog's closest tools come back marked weak."""
    result = await execute('return await tools.search("how much is 100 dollars in pounds", max_results=2)')

    assert result.ok, result.text
    assert result.run.value == snapshot(
        [
            {
                "name": "convert_currency",
                "description": "Convert an amount of money between two ISO 4217 codes.",
                "signature": "convert_currency(*, amount: float, source: str, target: str) -> float",
                "match": "weak",
            },
            {
                "name": "get_weather",
                "description": "Get the weather forecast for a city.",
                "signature": "get_weather(*, city: str) -> str",
                "match": "weak",
            },
        ]
    )
