from __future__ import annotations

from inline_snapshot import snapshot

from codemode import Catalog, CodeMode, ExecuteResult, Tool
from codemode.search import merge_rankings


def tool(name: str, description: str) -> Tool:
    return Tool(name=name, alias=name, description=description, parameters={"type": "object", "properties": {}})


def make_catalog() -> Catalog:
    catalog = Catalog()
    catalog.extend(
        [
            tool("get_weather", "Weather forecast for a city."),
            tool("get_weather_alerts", "Severe weather alerts for a region."),
            tool("send_email", "Send an email message."),
            tool("read_email", "Read the email inbox."),
            tool("create_event", "Create a calendar event."),
        ]
    )
    return catalog


async def execute(code: str) -> ExecuteResult:
    async with CodeMode(make_catalog(), isolation="inline") as cm:
        return await cm.execute(code, cm.new_state())


async def names(query: str) -> object:
    result = await execute(f'return [t["name"] for t in await tools.search({query})]')
    assert result.ok, result.text
    return result.run.value


async def test_a_list_of_queries_interleaves_each_querys_best_tools() -> None:
    """Each query's first hit comes before any query's second; the merged list is cut to `max_results`."""
    assert await names('["weather forecast", "send an email"], max_results=3') == snapshot(
        ["get_weather", "send_email", "get_weather_alerts"]
    )
    assert await names('["weather", "email", "calendar event"], max_results=3') == snapshot(
        ["get_weather", "send_email", "create_event"]
    )


async def test_a_one_item_list_searches_like_a_string() -> None:
    """`tools.search(["q"])` returns what `tools.search("q")` does."""
    assert await names('["email"]') == await names('"email"')


def test_a_tool_found_by_several_queries_rises() -> None:
    """Reciprocal ranks add up: a tool second for two queries beats one first for only one."""
    a, b, c = tool("a", ""), tool("b", ""), tool("c", "")
    assert [t.name for t in merge_rankings([[a, c], [b, c]])] == ["c", "a", "b"]


async def test_bad_query_lists_are_tool_errors() -> None:
    """An empty list, too many queries or a blank or non-string item is a ToolError saying what to pass."""
    empty = await execute("return await tools.search([])")
    many = await execute("return await tools.search(['q'] * 11)")
    blank = await execute("return await tools.search(['weather', ' '])")
    number = await execute("return await tools.search(['weather', 3])")

    assert empty.run.error is not None
    assert empty.run.error.message == snapshot(
        "ToolError: tools.search([...]) takes a list of 1 to 10 query strings (line 1)"
    )
    assert many.run.error is not None
    assert many.run.error.message == empty.run.error.message
    for result in (blank, number):
        assert result.run.error is not None
        assert result.run.error.message == snapshot(
            'ToolError: tools.search() needs a query string, e.g. `await tools.search("send an email")` (line 1)'
        )
