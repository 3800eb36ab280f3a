# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""Variables across the runs of a conversation: kept in the state with persistence on, explained with it off."""

from __future__ import annotations

import json

import anyio
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode, DiscoveryState
from sandbox import Limits


def weather_catalog(calls: list[str]) -> Catalog:
    """One tool that records each call, so a test can tell a kept result from a repeated call."""
    catalog = Catalog()

    @catalog.tool
    async def get_weather(city: str) -> dict[str, object]:
        """Get the weather forecast for a city."""
        calls.append(city)
        return {"city": city, "celsius": 21.5}

    return catalog


async def test_a_tool_result_kept_in_a_variable_is_there_in_the_next_run_without_calling_again() -> None:
    """Persistence on: the next run reads the variable; the tool is called once; the state holds it as JSON."""
    calls: list[str] = []
    async with CodeMode(weather_catalog(calls), isolation="inline", persist_variables=True) as cm:
        state = cm.new_state()
        first = await cm.execute('paris = await tools.get_weather(city="Paris")\nseen = ["Paris"]', state)
        assert first.ok, first.text
        second = await cm.execute('seen.append("Rome")\nreturn f"{paris[\'celsius\']} in {seen}"', state)
    assert second.text == snapshot("Returned: \"21.5 in ['Paris', 'Rome']\"")
    assert calls == ["Paris"]
    assert state.to_json()["variables"] == {"paris": {"city": "Paris", "celsius": 21.5}, "seen": ["Paris", "Rome"]}


async def test_two_runs_of_one_state_at_once_go_in_turn_and_both_keep_their_variables() -> None:
    """A model's two parallel `code` calls, run at once by a framework: the second runs after the first, sees its
    variables, and the state keeps both runs' (neither overwrites the other's with what it started from)."""
    calls: list[str] = []
    async with CodeMode(weather_catalog(calls), isolation="inline", persist_variables=True) as cm:
        state = cm.new_state()
        results = {}

        async def run(name: str, code: str) -> None:
            results[name] = await cm.execute(code, state)

        async with anyio.create_task_group() as group:
            group.start_soon(run, "first", 'oslo = await tools.get_weather(city="Oslo")')
            group.start_soon(run, "second", 'rome = await tools.get_weather(city="Rome")\nreturn oslo["city"]')
    assert all(result.ok for result in results.values()), results
    assert results["second"].run.value == "Oslo"
    assert calls == ["Oslo", "Rome"]
    assert sorted(state.variables) == ["oslo", "rome"]


async def test_variables_survive_a_process_change_through_the_json_state() -> None:
    """The values live in the state, not a worker: a new `CodeMode` with a new sandbox continues from JSON."""
    catalog = weather_catalog([])
    async with CodeMode(catalog, persist_variables=True) as first_process:
        state = first_process.new_state()
        await first_process.execute("total = 40", state)
    carried = json.loads(json.dumps(state.to_json()))
    async with CodeMode(catalog, persist_variables=True) as second_process:
        result = await second_process.execute("total += 2\nreturn total", DiscoveryState.from_json(carried))
    assert result.text == "Returned: 42"


async def test_values_that_are_not_json_are_dropped_with_a_one_line_note() -> None:
    """Imports, functions and objects are not kept; one line says which and what to do; data is kept."""
    async with CodeMode(weather_catalog([]), isolation="inline", persist_variables=True) as cm:
        state = cm.new_state()
        code = "import math\ndef area(r):\n    return math.pi * r * r\nclass Box:\n    pass\nbox = Box()\nsize = area(2)\nprint(round(size, 2))"
        result = await cm.execute(code, state)
    assert result.text == snapshot(
        """\
12.57
Not kept for the next run: Box (a class: define it again); area (a function: define it again); math (a module: import it again); box (a Box): not JSON data (use dict, list, str, int, float, bool, None)\
"""
    )
    assert state.variables == {"size": 12.566370614359172}


async def test_every_dropped_name_is_named_grouped_by_reason_with_the_advice_once() -> None:
    """Many dropped values of many kinds: each name appears, the not-JSON advice is given once, data is kept."""
    code = (
        "import math\nfrom datetime import date\nd = date(2024, 1, 2)\nf = lambda x: x\nclass K:\n    pass\n"
        'k = K()\nb = b"by"\nn = float("nan")\ns = {1, 2}\nnest = {"x": {1}}\nrows = [{"a": 1}]'
    )
    async with CodeMode(weather_catalog([]), isolation="inline", persist_variables=True) as cm:
        state = cm.new_state()
        result = await cm.execute(code, state)
    assert result.text.splitlines()[-1] == (
        "Not kept for the next run: K, date (a class: define it again); f (a function: define it again); math (a "
        "module: import it again); n (n is nan, which JSON cannot carry: use None or a string instead); b (a bytes), "
        "d (a date), k (a K), nest (nest['x'] is a set), s (a set): not JSON data (use dict, list, str, int, float, "
        "bool, None)"
    )
    assert state.variables == {"rows": [{"a": 1}]}


async def test_a_note_too_long_for_its_reasons_still_names_every_dropped_variable() -> None:
    """Past the note's length the reasons go, the names stay (and the general advice, once)."""
    code = "\n".join(f"ids_{i:02} = {{{i}}}" for i in range(40))
    async with CodeMode(weather_catalog([]), isolation="inline", persist_variables=True) as cm:
        result = await cm.execute(code, cm.new_state())
    names = ", ".join(f"ids_{i:02}" for i in range(40))
    assert result.text.splitlines()[-1] == (
        f"Not kept for the next run: {names} (only JSON data carries over: dict, list, str, numbers, bool, None; "
        "define, import or convert the others again)"
    )


async def test_a_variable_over_the_size_bound_is_dropped_with_its_size() -> None:
    """`Limits.variables` bounds what the state carries; the message gives the size and the bound."""
    limits = Limits(variables=10_000)
    async with CodeMode(weather_catalog([]), isolation="inline", limits=limits, persist_variables=True) as cm:
        state = cm.new_state()
        result = await cm.execute("rows = ['row'] * 5_000\ncount = len(rows)", state)
    assert result.text == snapshot(
        """\
(no output: `print` what you need to see, or `return` a value)
Not kept for the next run: rows (too large: 30,001 bytes of JSON, over the 9,996 left for variables)\
"""
    )
    assert state.variables == {"count": 5000}


async def test_without_persistence_a_name_from_an_earlier_run_says_runs_do_not_share_variables() -> None:
    """Persistence off: nothing is kept, and the NameError (or UnboundLocalError) says why and how to carry data."""
    async with CodeMode(weather_catalog([]), isolation="inline") as cm:
        state = cm.new_state()
        await cm.execute("total = 1\nitems = [1]", state)
        missing = await cm.execute("return items", state)
        rebound = await cm.execute("total += 1", state)
        unrelated = await cm.execute("return never_assigned", state)
    assert state.variables == {}
    assert missing.text == snapshot("""\
Traceback (most recent call last):
  line 1, in <module>
    return items
NameError: name 'items' is not defined (line 1)
Note: `items` was assigned by an earlier run, but runs do not share variables: each run starts fresh. Compute it again in this run, or `return` the data from the run that makes it and write it into the next run's code.\
""")
    assert rebound.text.endswith(
        "Note: `total` was assigned by an earlier run, but runs do not share variables: each run starts fresh. Compute it again in this run, or `return` the data from the run that makes it and write it into the next run's code."
    )
    assert "Note:" not in unrelated.text


async def test_with_persistence_a_function_from_an_earlier_run_says_it_was_not_kept() -> None:
    """Persistence on: a NameError for a name that was dropped says only JSON data carries over."""
    async with CodeMode(weather_catalog([]), isolation="inline", persist_variables=True) as cm:
        state = cm.new_state()
        await cm.execute("def double(x):\n    return 2 * x", state)
        result = await cm.execute("return double(2)", state)
    assert result.text.splitlines()[-1] == snapshot(
        "Note: `double` from an earlier run was not kept: only variables holding JSON data (dict, list, str, numbers, bool, None) carry over. Define or compute it again in this run."
    )


async def test_the_code_tool_tells_the_model_about_persistence_only_when_it_is_on() -> None:
    """The fixed description gains one line with persistence on; without it the bytes are unchanged."""
    catalog = weather_catalog([])
    plain, persisting = (
        CodeMode(catalog, isolation="inline"),
        CodeMode(catalog, isolation="inline", persist_variables=True),
    )
    extra = persisting.tool.description.removeprefix(plain.tool.description)
    assert extra == snapshot(
        "\n- Top-level variables holding JSON data (dict, list, str, numbers, bool, None) are kept for your next run; imports, functions and classes are not."
    )


def test_a_state_with_bad_variable_names_is_refused() -> None:
    """A state from a client (`_meta`) whose variable names the code could not use is refused, not half-read."""
    for variables in ({"_private": 1}, {"not a name": 1}, ["x"]):
        try:
            DiscoveryState.from_json({"announced": {}, "variables": variables})
        except (TypeError, ValueError):
            continue
        raise AssertionError(f"accepted {variables!r}")
    assert DiscoveryState.from_json({"variables": {"x": [1]}, "assigned": ["x"]}).to_json() == {
        "announced": {},
        "variables": {"x": [1]},
        "assigned": ["x"],
    }


async def test_an_assigned_name_longer_than_a_name_can_be_is_not_remembered() -> None:
    """A 300-character top-level name is not kept in the state's names (a forged worker's could be megabytes)."""
    async with CodeMode(weather_catalog([]), isolation="inline") as cm:
        state = cm.new_state()
        result = await cm.execute(f"{'a' * 300} = 1\nok = 2", state)
    assert result.ok, result.text
    assert state.to_json()["assigned"] == ["ok"]
