"""What a run's setup must not change, through the public API.

A run goes on in a task of its own, unseen by the code: host functions and the code's timeouts run in the run's
own task, never the caller's; the caller's cancellation still ends a run that swallows every exception; a timeout
in the code cancels the code, not the caller. And a run's builtins hold only the shared ones its code names: what
the interpreter looks up by itself (`class`, `import`) and what the sandbox's own facades find through them
(`sys.stdout`) still work.
"""

from __future__ import annotations

import asyncio
import gc
import textwrap

import anyio
import anyio.lowlevel
import pytest

from sandbox import Limits, Sandbox

SWALLOWER = """
import asyncio
while True:
    try:
        await asyncio.sleep(10)
    except BaseException:
        pass
"""


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


async def test_host_functions_run_in_the_runs_own_task_from_the_first_line() -> None:
    """Every host call, the first included, runs in one task that is not the caller's, and may hold a cancel scope."""
    seen: list[object] = []

    async def probe(n: int) -> int:
        with anyio.fail_after(5):  # a cancel scope entered and left in one task, or anyio raises
            seen.append(asyncio.current_task())
            await anyio.lowlevel.checkpoint()
        return n

    def sync_probe(n: int) -> int:
        seen.append(asyncio.current_task())
        return n

    code = dedent(
        """
        first = await probe(n=1)
        second = sync_probe(n=2)
        import asyncio
        await asyncio.sleep(0)
        return [first, await second, await probe(n=3)]
        """
    )
    async with Sandbox(isolation="inline") as sb:
        result = await sb.run(code, functions={"probe": probe, "sync_probe": sync_probe})
    assert (result.error, result.value) == (None, [1, 2, 3])
    assert len(seen) == 3
    assert asyncio.current_task() not in seen
    assert seen[0] is seen[1] is seen[2]


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_timeout_entered_before_the_first_wait_cancels_only_the_code(isolation: str) -> None:
    """`asyncio.timeout()` on the first line ends the code's wait with `TimeoutError`; the caller is not cancelled."""
    code = dedent(
        """
        import asyncio
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
        except TimeoutError:
            return "timed out"
        """
    )
    async with Sandbox(isolation=isolation) as sb:  # type: ignore[arg-type]  # a parameter of the two isolations
        result = await sb.run(code)
        caller = asyncio.current_task()
        assert caller is not None
        assert (result.error, result.value, caller.cancelling()) == (None, "timed out", 0)
        await anyio.lowlevel.checkpoint()  # no cancellation is pending for the caller


async def test_the_callers_cancellation_ends_a_run_that_swallows_every_exception() -> None:
    """Inline, a caller's cancel scope still ends a run whose code catches `BaseException` around each wait."""
    async with Sandbox(isolation="inline", limits=Limits(timeout=30.0)) as sb:
        with anyio.move_on_after(0.05) as scope:
            await sb.run(SWALLOWER)
        assert scope.cancelled_caught
        assert (await sb.run("return 1")).value == 1  # the sandbox goes on serving runs


async def test_a_run_that_never_waits_gives_the_same_result_as_one_that_does() -> None:
    """Errors, values and output are the same whether the code waited before them or not."""
    code = dedent(
        """
        print("hi")
        def f(n):
            return 10 / n
        {wait}f(0)
        """
    )
    async with Sandbox(isolation="inline") as sb:
        direct = await sb.run(code.format(wait=""))
        waited = await sb.run("import asyncio\n" + code.format(wait="await asyncio.sleep(0)\n"))
    assert direct.error is not None
    assert waited.error is not None
    assert (direct.stdout, direct.error.kind, direct.error.type_name) == ("hi\n", "runtime", "ZeroDivisionError")
    assert (waited.stdout, waited.error.kind, waited.error.type_name) == ("hi\n", "runtime", "ZeroDivisionError")
    assert direct.error.traceback.splitlines()[1:] == [
        "  line 4, in <module>",
        "    f(0)",
        "  line 3, in f",
        "    return 10 / n",
        "ZeroDivisionError: division by zero (line 3)",
    ]
    assert waited.error.traceback.splitlines()[1:] == [
        "  line 6, in <module>",
        "    f(0)",
        "  line 4, in f",
        "    return 10 / n",
        "ZeroDivisionError: division by zero (line 4)",
    ]


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_code_that_names_no_builtin_still_has_classes_imports_and_stdout(isolation: str) -> None:
    """`class`, `import` and `sys.stdout.write` need builtins the code never names; they work all the same."""
    code = dedent(
        """
        import sys
        class Point:
            x = 1
        sys.stdout.write("written")
        return Point.x
        """
    )
    async with Sandbox(isolation=isolation) as sb:  # type: ignore[arg-type]  # a parameter of the two isolations
        result = await sb.run(code)
    assert (result.error, result.value, result.stdout) == (None, 1, "written")


async def test_two_runs_at_once_inline_each_see_only_their_own_state() -> None:
    """Runs of one code under one `asyncio.gather`: each its own output, budget, decimal context and globals."""
    code = dedent(
        """
        import asyncio
        import decimal
        decimal.getcontext().prec = precision
        def mark():
            global seen
            try:
                return seen
            except NameError:
                seen = label
                return None
        for i in range(rounds):
            print(label, i, mark())
            await asyncio.sleep(0)
        return [label, str(decimal.Decimal(1) / 3), mark()]
        """
    )
    async with Sandbox(isolation="inline") as sb:
        runs = [
            sb.run(code, variables={"label": "a", "precision": 3, "rounds": 3}),
            sb.run(code, variables={"label": "b", "precision": 5, "rounds": 10**9}, limits=Limits(operations=2_000)),
            sb.run(code, variables={"label": "c", "precision": 5, "rounds": 2}),
        ]
        first, endless, third = await asyncio.gather(*runs)
    assert (first.error, first.value) == (None, ["a", "0.333", "a"])
    assert first.stdout == "a 0 None\na 1 a\na 2 a\n"
    assert (third.error, third.value, third.stdout) == (None, ["c", "0.33333", "c"], "c 0 None\nc 1 c\n")
    assert endless.error is not None
    assert endless.error.kind == "timeout"
    assert endless.stdout.splitlines()[:2] == ["b 0 None", "b 1 b"]
    assert {line.split()[0] for line in endless.stdout.splitlines()} == {"b"}


async def test_code_a_finished_run_left_behind_prints_to_its_own_run_only() -> None:
    """A generator of one run, closed by the collector in the middle of the next run, never writes to that run."""
    left = dedent(
        """
        def late():
            try:
                yield 1
            finally:
                print("from the first run")
        held = [late()]
        next(held[0])
        held.append(held)  # a cycle: only the collector frees it, after the run
        print("first")
        """
    )

    def collect() -> int:
        return gc.collect()

    async with Sandbox(isolation="inline") as sb:
        gc.disable()  # the collection happens inside the second run, not before it
        try:
            first = await sb.run(left)
            second = await sb.run('await collect()\nprint("second")', functions={"collect": collect})
        finally:
            gc.enable()
    assert (first.error, first.stdout) == (None, "first\n")
    assert (second.error, second.stdout) == (None, "second\n")


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_an_import_only_inside_a_function_or_class_body_gets_the_runs_modules(isolation: str) -> None:
    """Code whose only imports are nested still gets its modules, its decimal context and its printed output."""
    code = dedent(
        """
        def floor(x):
            import math
            return math.floor(x)
        class Quarter:
            import decimal
            text = str(decimal.Decimal(1) / 4)
        def write(text):
            from sys import stdout
            stdout.write(text)
        write("nested")
        return [floor(2.5), Quarter.text]
        """
    )
    async with Sandbox(isolation=isolation) as sb:  # type: ignore[arg-type]  # a parameter of the two isolations
        result = await sb.run(code)
    assert (result.error, result.value, result.stdout) == (None, [2, "0.25"], "nested")
