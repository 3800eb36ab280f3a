"""The work after a run's body ends is bounded, and `sys.exit()` ends a run as it ends a script.

After the body, the returned value is converted in one walk (a failure's place is spelled out only once it
failed), and the kept variables share one budget of work: each object is converted once, however many names
hold it, and the walks of the values dropped take a bounded share. `sys.exit()`, `exit()` and `raise SystemExit`
with status 0 or None are a clean early stop; another status is a failure that says it.
"""

from __future__ import annotations

import collections
import textwrap
from typing import Any

import pytest

from codemode import Catalog, CodeMode
from sandbox import Limits, RunError, Sandbox, jsonvalue
from sandbox.limits import timeout_message

both = pytest.mark.parametrize("isolation", ["inline", "process"])


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """How many values the JSON conversion walks visit in this process (a spy on the walk's one step, no mock)."""
    counts: collections.Counter[str] = collections.Counter()
    step = jsonvalue._Converter.value

    def counted(self: Any, value: Any, depth: int) -> Any:
        counts["values"] += 1
        return step(self, value, depth)

    monkeypatch.setattr(jsonvalue._Converter, "value", counted)
    return counts


# the returned value


async def test_a_returned_value_that_is_not_data_is_walked_once(walked: collections.Counter[str]) -> None:
    """A 1,000-item list whose last item is a function: 1,001 values visited, and the message names its place."""
    async with Sandbox(isolation="inline") as sb:
        result = await sb.run("x = [0] * 1000\nx.append(len)\nreturn {'rows': [x]}")
    assert result.error == RunError(
        kind="runtime",
        message="the returned value['rows'][0][1000] is a 'builtin_function_or_method' object: a function is not "
        "data: call it and return its result, or return its name (`f.__name__`)",
        type_name="TypeError",
    )
    assert walked["values"] == 1 + 1 + 1 + 1001  # the dict, its list, the inner list's own visit, and its items


PLACES = {
    "return [1, {'a': (2, {len})}]": "the returned value[1]['a'][1][0] is a 'builtin_function",
    "import collections\nreturn collections.deque([1, 2, len])": "the returned value[2] is a 'builtin_function",
    "return [1, {frozenset([len])}]": "the returned value[1][0][0] is a 'builtin_function",  # one item: one order
    "d = {'k': [len]}\nreturn d.items()": "the returned value[0][1][0] is a 'builtin_function",
    "d = {'k': len}\nreturn d.values()": "the returned value[0] is a 'builtin_function",
    "import enum\nclass E(enum.Enum):\n    A = [1, len]\nreturn [E.A]": "the returned value[0].value[1] is a 'builtin",
    "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: object\nreturn {'p': P([len])}": (
        "the returned value['p'].x[0] is a 'builtin_function"
    ),
    "import enum\nclass K(enum.Enum):\n    A = len\nreturn {K.A: 1}": (
        "the returned value (a key's value) has a key that is a 'builtin_function_or_method' object"
    ),
    "return [[0.5, float('nan')]]": "the returned value[0][1] is nan, which JSON cannot carry",
    "return [{'a': 1}, {'b': 2**20000}]": "the returned value[1]['b'] is an int too large to send (20001 bits)",
}


@pytest.mark.parametrize("code", list(PLACES))
async def test_a_value_that_does_not_convert_is_named_by_its_place_in_every_kind_of_container(code: str) -> None:
    """Lists, tuples, dicts, sets (sorted), deques, dict views, Enum values, dataclass fields, keys: the exact place."""
    async with Sandbox(isolation="inline") as sb:
        result = await sb.run(code)
    assert result.error is not None
    assert result.error.message.startswith(PLACES[code]), result.error.message


# kept variables


@both
async def test_one_object_under_many_names_is_converted_once_and_each_name_says_why(sb: Sandbox) -> None:
    """Forty names of one list that is not data: each is dropped with its own name in the reason."""
    names = " = ".join(f"v{i}" for i in range(40))
    result = await sb.run(
        f"big = [0] * 5000\nbig.append(len)\n{names} = big\nrows = [[1, 2]]\na = b = rows", variables={}
    )
    assert result.variables == {"a": [[1, 2]], "b": [[1, 2]], "rows": [[1, 2]]}
    reason = "[5000] is a builtin_function_or_method, not JSON data (use dict, list, str, int, float, bool, None)"
    assert result.dropped_variables == {name: f"{name}{reason}" for name in ["big", *(f"v{i}" for i in range(40))]}


async def test_the_conversion_of_kept_variables_visits_each_object_once(walked: collections.Counter[str]) -> None:
    """The same 5,001-item list under 41 names is walked once, not once per name (nor twice each)."""
    names = " = ".join(f"v{i}" for i in range(40))
    async with Sandbox(isolation="inline") as sb:
        result = await sb.run(f"big = [0] * 5000\nbig.append(len)\n{names} = big", variables={})
    assert len(result.dropped_variables) == 41
    assert walked["values"] == 5002  # the list and its 5,001 items


@both
async def test_the_walks_of_dropped_variables_share_one_budget_and_small_ones_are_still_kept(sb: Sandbox) -> None:
    """Distinct large values that are not data use up twice the budget; after that large ones are not walked."""
    lines = [f"v{i} = [0] * 600\nv{i}.append(len)" for i in range(8)]
    code = "\n".join([*lines, "w = [[1, 2], {'k': 'v'}]", "x = 3"])
    result = await sb.run(code, variables={}, limits=Limits(timeout=10.0, variables=1_000))
    assert result.variables == {"w": [[1, 2], {"k": "v"}], "x": 3}
    reason = "[600] is a builtin_function_or_method, not JSON data (use dict, list, str, int, float, bool, None)"
    spent = "not kept: the large variables dropped before it (in name order) used up the time to save variables"
    assert result.dropped_variables == {
        **{f"v{i}": f"v{i}{reason}" for i in range(3)},  # 602 values each, 2,000 in all
        **{f"v{i}": spent for i in range(3, 8)},
    }


# sys.exit


EXITS = {
    "import sys\nprint('nothing to do')\nsys.exit(0)\nprint('never')": ("nothing to do\n", None),
    "import sys\nsys.exit()": ("", None),
    "import sys\nsys.exit(None)": ("", None),
    "raise SystemExit": ("", None),
    "exit()": ("", None),
    "import sys\nsys.exit(False)": ("", None),
    "import asyncio\nasync def f():\n    raise SystemExit\nawait asyncio.gather(f())\nreturn 1": ("", None),
    "import sys\nsys.exit(3)": ("", RunError(kind="runtime", message="the code exited with status 3", line=2)),
    "import sys\nsys.exit(True)": ("", RunError(kind="runtime", message="the code exited with status 1", line=2)),
    "import sys\nprint('x')\nsys.exit('no rows found')": (
        "x\n",
        RunError(kind="runtime", message="no rows found", line=3),
    ),
    "def stop():\n    raise SystemExit('from a function')\nstop()": (
        "",
        RunError(kind="runtime", message="from a function", line=2),
    ),
    "import sys\nsys.exit('')": ("", RunError(kind="runtime", message="the code exited with status 1", line=2)),
    "import sys\nsys.exit([1])": (
        "",
        RunError(
            kind="runtime", message="the code exited with status 1 (its status was a 'list' object, not an int)", line=2
        ),
    ),
}


@both
@pytest.mark.parametrize("code", list(EXITS))
async def test_sys_exit_ends_the_run_as_it_ends_a_script(sb: Sandbox, code: str) -> None:
    """Status 0, None or False: a success with what was printed and no value; an int: a failure naming it; a str: it."""
    stdout, error = EXITS[code]
    result = await sb.run(code)
    expected = (
        None
        if error is None
        else RunError(kind="runtime", message=error.message, line=error.line, type_name="SystemExit")
    )
    assert (result.error, result.stdout, result.value) == (expected, stdout, None)


@both
async def test_a_caught_sys_exit_is_a_system_exit_with_its_code(sb: Sandbox) -> None:
    """`except SystemExit as e` sees `e.code`, as in CPython, and the run goes on."""
    result = await sb.run("import sys\ntry:\n    sys.exit(2)\nexcept SystemExit as e:\n    code = e.code\nreturn code")
    assert (result.error, result.value) == (None, 2)


@both
async def test_a_limit_the_code_caught_still_wins_over_a_clean_exit(sb: Sandbox) -> None:
    """Code that swallows the operation budget's stop and then exits cleanly still ends as that stop."""
    code = "try:\n    while True:\n        pass\nexcept BaseException:\n    pass\nraise SystemExit(0)"
    result = await sb.run(code, limits=Limits(timeout=10.0, operations=10_000))
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        "the code used its whole operation budget (an endless loop?); do less work per run (line 6)",
    )


async def test_codemode_shows_a_clean_exit_as_its_output_and_a_failed_one_as_the_message() -> None:
    """The model reads what was printed after `sys.exit(0)`, and `Error: <message>` after `sys.exit('...')`."""
    async with CodeMode(Catalog(), isolation="inline") as cm:
        clean = await cm.execute("import sys\nprint('nothing to do')\nsys.exit(0)", cm.new_state())
        failed = await cm.execute("import sys\nsys.exit('no rows for 2024')", cm.new_state())
    assert (clean.ok, clean.text) == (True, "nothing to do")
    assert (failed.ok, failed.text) == (False, "Error: no rows for 2024")


# the wall clock at the run's end

STRAIGHT_LINE = "keep = 1\nreturn " + " or ".join(["-1 in [0] * 5_000_000"] * 20) + "\n"
"""Twenty long lists made and scanned in one statement, the last: no loop, no call of the code's, no statement
after, and the one gate before it passed at once (so the run ends, past its deadline, however slow the machine)."""


@pytest.mark.slow
@both
async def test_straight_line_code_that_ends_past_its_deadline_is_a_timeout(sb: Sandbox, isolation: str) -> None:
    """No tick or gate noticed the deadline, the run's end does: `timeout`, no value, the variables as they were."""
    result = await sb.run(STRAIGHT_LINE, variables={"keep": 0}, limits=Limits(timeout=0.05))
    assert result.error is not None
    assert (result.error.kind, result.value, result.variables) == ("timeout", None, None)
    if isolation == "inline":  # a process still busy 1 s past the deadline is killed by the host instead
        assert (
            result.error.message
            == "the code ran past its 0.05 s time limit; do less per run, or split the work over several runs"
        )


async def test_straight_line_code_inline_is_stopped_at_its_deadline_between_two_statements() -> None:
    """A hundred statements, each one long C call (a scan), no tick: the run stops at the first statement after the
    deadline, and what it printed before says how far it got."""
    code = "big = [0] * 10_000_000\n" + "".join(f"print({i})\n-1 in big\n" for i in range(100)) + "return 'done'\n"
    async with Sandbox(isolation="inline", limits=Limits(timeout=0.2)) as sb:
        result = await sb.run(code)
    assert result.error is not None
    printed = len(result.stdout.splitlines())
    assert result.stdout == "".join(f"{i}\n" for i in range(printed))
    assert printed < 100
    # Stopped before `print(printed)` (line 2 + 2 * printed) or before the scan after the last print.
    assert (result.error.kind, result.value) == ("timeout", None)
    assert result.error.message in {
        f"{timeout_message(0.2)} (line {line})" for line in (2 * printed + 1, 2 * printed + 2)
    }


async def test_an_exceptions_message_gets_its_half_second_and_is_stopped_in_its_loop() -> None:
    """The grace after the run for the exception's own `__str__` is watched: it stops within a few slow iterations.

    Each iteration scans 8,000,000 items (tens of milliseconds); unwatched, the grace looked at its clock only
    every 256 ticks (255 iterations here, minutes), so the count printed shows which stopped it.
    """
    code = dedent(
        """
        big = [0] * 8_000_000
        class Slow(Exception):
            def __str__(self):
                for i in range(10_000):
                    -1 in big
                    print(i)
                return 'done'
        raise Slow()
        """
    )
    async with Sandbox(isolation="inline", limits=Limits(timeout=10.0)) as sb:
        result = await sb.run(code)
    assert result.error is not None
    assert result.error.message == "Slow: <the exception's message could not be shown> (line 8)"
    assert len(result.stdout.splitlines()) < 100  # unwatched: 255, a chunk of ticks less the entry's
