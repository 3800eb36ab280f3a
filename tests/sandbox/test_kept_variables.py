"""Variables kept across runs: JSON values in as top-level names, the JSON top-level variables a run leaves out."""

from __future__ import annotations

import textwrap

import pytest

from sandbox import Limits, RunResult, Sandbox, SandboxError

both = pytest.mark.parametrize("isolation", ["inline", "process"])


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


@both
async def test_variables_a_run_leaves_are_there_in_the_next_run(sb: Sandbox) -> None:
    """Names bound at top level carry over: read, rebound, mutated in place, rebound from a nested `global`."""
    first = await sb.run("rows = [1, 2]\ncount = 1\npair = (3, 4)\nreturn len(rows)", variables={})
    assert (first.value, first.variables, first.dropped_variables) == (
        2,
        {"rows": [1, 2], "count": 1, "pair": [3, 4]},
        {},
    )
    code = """
        count += 1
        rows.append(count)
        def reset():
            global pair
            pair = None
        reset()
        return sum(rows)
    """
    second = await sb.run(dedent(code), variables=first.variables)
    assert second.value == 5
    assert second.variables == {"rows": [1, 2, 2], "count": 2, "pair": None}


@both
async def test_code_and_objects_are_dropped_each_with_its_reason(sb: Sandbox) -> None:
    """Modules, functions, classes and instances are not kept; the reason says what to do; data still is."""
    code = """
        import json
        def helper(): return 1
        class Box: pass
        box = Box()
        total = 3
    """
    result = await sb.run(dedent(code), variables={})
    assert result.variables == {"total": 3}
    assert result.dropped_variables == {
        "json": "a module: import it again",
        "helper": "a function: define it again",
        "Box": "a class: define it again",
        "box": "box is a Box, not JSON data (use dict, list, str, int, float, bool, None)",
    }


@both
async def test_variables_over_the_size_budget_are_dropped_and_the_rest_kept(sb: Sandbox) -> None:
    """`Limits.variables` bounds the JSON kept; a value that does not fit is dropped with its size, in name order."""
    limits = Limits(timeout=10.0, variables=1_000)
    code = "small = 'a' * 100\nbig = 'b' * 5_000\nlast = 'c' * 100\nloop = []\nloop.extend([loop] * 50)"
    result = await sb.run(code, variables={}, limits=limits)
    assert result.variables == {"small": "a" * 100, "last": "c" * 100}
    assert result.dropped_variables == {
        "big": "too large: 5,002 bytes of JSON, over the 1,000 left for variables",
        "loop": "too large: over the 898 bytes of JSON left for variables",
    }


@both
async def test_a_failing_run_leaves_what_it_assigned_before_the_failure(sb: Sandbox) -> None:
    """Like a REPL: what was bound before the exception is kept; `del` removes a variable."""
    result = await sb.run("del old\ndone = [1]\nraise ValueError('stop')\nnever = 1", variables={"old": 1, "kept": 2})
    assert result.error is not None
    assert result.error.message == "ValueError: stop (line 3)"
    assert result.variables == {"kept": 2, "done": [1]}


@both
async def test_a_run_that_does_not_compile_leaves_the_variables_as_they_were(sb: Sandbox) -> None:
    """Nothing ran, so nothing changed."""
    result = await sb.run("x = (", variables={"x": 1})
    assert result.error is not None
    assert (result.error.kind, result.variables) == ("syntax", {"x": 1})


@both
async def test_a_run_that_times_out_still_leaves_its_variables(sb: Sandbox) -> None:
    """The body's end is reached when the run is stopped, so work done before the stop is not lost."""
    result = await sb.run("n = 41\nn += 1\nwhile True:\n    pass", variables={}, limits=Limits(timeout=0.5))
    assert result.error is not None
    assert (result.error.kind, result.variables) == ("timeout", {"n": 42})


@both
async def test_runs_without_variables_share_nothing_and_report_none(sb: Sandbox) -> None:
    """Keeping is opt-in: without `variables=`, a name from an earlier run is a NameError."""
    await sb.run("secret = 1")
    result = await sb.run("return secret")
    assert result.error is not None
    assert (result.error.message, result.variables) == ("NameError: name 'secret' is not defined (line 1)", None)


@both
async def test_host_function_names_are_never_kept(sb: Sandbox) -> None:
    """A top-level name shadowing a host function is not carried over, so the next run has the function."""
    result = await sb.run("echo = 1\nx = 2", functions={"echo": lambda: 1}, variables={})
    assert result.variables == {"x": 2}


async def test_bad_variables_are_the_callers_mistake() -> None:
    """Names the code could not use, names of host functions and non-JSON values raise `SandboxError`."""
    async with Sandbox(isolation="inline") as sb:
        for variables in ({"_hidden": 1}, {"not a name": 1}, {"class": 1}, {"echo": 1}, {"x": object()}):
            with pytest.raises(SandboxError):
                await sb.run("x = 1", functions={"echo": lambda: 1}, variables=variables)


def test_results_with_variables_survive_a_json_round_trip() -> None:
    """What crosses the worker pipe rebuilds to an equal result."""
    result = RunResult(variables={"a": [1]}, dropped_variables={"f": "a function: define it again"})
    assert RunResult.from_json(result.to_json()) == result


@both
async def test_assigned_names_are_the_top_level_bindings_not_comprehension_variables(sb: Sandbox) -> None:
    """`RunResult.assigned` lists what the code binds at top level; a comprehension's loop variable is its own."""
    code = "import math\nrows = [t * 2 for t in range(3)]\nseen = {(last := k) for k in 'ab'}\nfor i in rows:\n    pass"
    result = await sb.run(code)
    assert result.assigned == ("i", "last", "math", "rows", "seen")
