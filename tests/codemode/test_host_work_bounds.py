# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""What the model's code hands the host is bounded before the host works on it: search queries and call arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inline_snapshot import snapshot

from codemode import Catalog, CodeMode

if TYPE_CHECKING:
    from codemode import ExecuteResult


def catalog_of_two() -> tuple[Catalog, list[Any]]:
    catalog = Catalog()
    received: list[Any] = []

    @catalog.tool
    def get_weather(city: str) -> str:
        """Get the weather forecast for a city."""
        return "sunny"

    @catalog.tool
    def forecast(cities: list[str]) -> int:
        """Weather for many cities."""
        received.append(cities)
        return len(cities)

    return catalog, received


async def execute(code: str, catalog: Catalog) -> ExecuteResult:
    async with CodeMode(catalog, isolation="inline") as cm:
        return await cm.execute(code, cm.new_state())


async def test_a_search_query_over_1000_characters_is_refused_with_the_limit_and_what_to_do() -> None:
    """A 5,000,000-character query (or one in a list) is a `ToolError` naming the cap; 1,000 characters still search."""
    catalog, _ = catalog_of_two()
    code = (
        'q = "zq" * 2_500_000\n'
        "try:\n"
        "    await tools.search([q + str(i) for i in range(10)])\n"
        "except ToolError as e:\n"
        "    refused = str(e)\n"
        'found = await tools.search("weather " + "x" * 992)\n'
        "return refused, [tool['name'] for tool in found]"
    )

    result = await execute(code, catalog)

    assert result.run.value == snapshot(
        [
            'a tools.search() query is at most 1,000 characters (the longest given has 5,000,001): name what you need in a few words, e.g. `await tools.search("send an email")`, or pass a list of short queries, one per capability',
            ["get_weather", "forecast"],
        ]
    )


async def test_a_long_run_of_letters_in_a_query_is_searched_not_an_error() -> None:
    """ "yyy...ye" (990 letters) used to overflow the stemmer's recursion on the host; it now matches nothing, weakly."""
    catalog, _ = catalog_of_two()

    result = await execute('return await tools.search("y" * 990 + "e", max_results=1)', catalog)

    assert result.ok, result.text
    assert result.run.value == snapshot(
        [
            {
                "name": "get_weather",
                "description": "Get the weather forecast for a city.",
                "signature": "get_weather(*, city: str) -> str",
                "match": "weak",
            }
        ]
    )


async def test_arguments_over_100000_values_are_refused_before_validation_and_the_call_is_recorded() -> None:
    """A 999,990-item list is a `ToolError` that says the bound and to batch; the handler never runs, the call is failed."""
    catalog, received = catalog_of_two()

    result = await execute('await tools.forecast(cities=["x"] * 999_990)', catalog)

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.forecast(): the arguments hold more than 100,000 values (the items of every list and object, counted together); pass the data in batches, over several calls (line 1)"
    )
    assert received == []
    assert [(call.name, call.ok, call.in_flight) for call in result.calls] == [("forecast", False, False)]


async def test_large_arguments_are_validated_off_the_loop_with_the_same_messages() -> None:
    """20,000 items are validated (in a worker thread) and passed on; a bad item among 5,000 gets the on-loop wording."""
    catalog, received = catalog_of_two()
    code = (
        'n = await tools.forecast(cities=["x"] * 20_000)\n'
        'bad = ["x"] * 5_000\n'
        "bad[4_321] = 7\n"
        "try:\n"
        "    await tools.forecast(cities=bad)\n"
        "except ToolError as e:\n"
        "    big = str(e)\n"
        "try:\n"
        '    await tools.forecast(cities=["x", 7])\n'
        "except ToolError as e:\n"
        "    small = str(e)\n"
        "return n, big, small"
    )

    result = await execute(code, catalog)

    assert result.run.value == snapshot(
        [
            20_000,
            "tools.forecast(): argument `cities.4321`: 7 is not of type 'string' (given 7). Signature: forecast(*, cities: list[str]) -> int",
            "tools.forecast(): argument `cities.1`: 7 is not of type 'string' (given 7). Signature: forecast(*, cities: list[str]) -> int",
        ]
    )
    assert [len(cities) for cities in received] == [20_000]


async def test_a_million_bad_items_get_one_message_naming_the_first() -> None:
    """Every item wrong: validation stops early and the message names the first item by path."""
    catalog, _ = catalog_of_two()

    result = await execute("await tools.forecast(cities=[0] * 99_999)", catalog)

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.forecast(): argument `cities.0`: 0 is not of type 'string' (given 0). Signature: forecast(*, cities: list[str]) -> int (line 1)"
    )


async def test_a_call_validated_off_the_loop_keeps_its_place_in_the_order_of_issue() -> None:
    """A large call issued before one that needs approval is first in the run's record, and the resumed run replays it."""
    catalog, received = catalog_of_two()

    @catalog.tool(approval=True)
    def ping() -> str:
        """Answer pong."""
        return "pong"

    code = 'import asyncio\nreturn await asyncio.gather(tools.forecast(cities=["x"] * 5_000), tools.ping())'
    async with CodeMode(catalog, isolation="inline") as cm:
        state = cm.new_state()
        paused = await cm.execute(code, state)
        assert paused.pending is not None, paused.text
        record = state.approval["record"] if state.approval is not None else {}
        issued = [call["tool"] for call in record["calls"]] if isinstance(record, dict) else []
        done = await cm.resume(state, approved=True)

    assert issued == ["forecast", "ping"]
    assert done.run.value == [5_000, "pong"]
    assert [len(cities) for cities in received] == [5_000]
