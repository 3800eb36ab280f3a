"""How a run ends: the host's exception stays out of it, and a stop the code caught still ends it as that stop."""

from __future__ import annotations

import asyncio
import textwrap
import threading

import pytest

from sandbox import Limits, Sandbox
from sandbox.limits import output_message, timeout_message


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


class HostError(Exception):
    """An exception the host is handling while it runs code (a retry path)."""


BARE_RAISE = dedent(
    """
    try:
        raise
    except BaseException as e:
        try:
            e.args[1]["token"] = "overwritten"
        except BaseException:
            pass
        return [type(e).__name__, str(e)]
    """
)


async def test_a_run_started_while_the_host_handles_an_exception_does_not_see_it() -> None:
    """The code's bare `raise` has no active exception, as in CPython; the host's exception is left as it was."""
    state = {"token": "sk-live-123"}
    async with Sandbox(limits=Limits(timeout=5.0), isolation="inline") as sb:
        try:
            raise HostError("db password", state)
        except HostError as exc:
            result = await sb.run(BARE_RAISE)
            caught = exc
    assert (result.error, result.value) == (None, ["RuntimeError", "No active exception to reraise"])
    assert state == {"token": "sk-live-123"}
    assert getattr(caught, "__notes__", None) is None
    assert caught.args == ("db password", state)


CATCHES_THE_STOP = dedent(
    """
    n = 0
    try:
        for i in range(10**12):
            n += 1
    except BaseException as e:
        caught = type(e).__name__
    return ["survived", n, caught]
    """
)


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_budget_stop_the_code_catches_still_ends_the_run(isolation: str) -> None:
    """Code that catches the operation budget's stop gets it again between two statements, and never its value."""
    async with Sandbox(limits=Limits(timeout=10.0, operations=10_000), isolation=isolation) as sb:
        result = await sb.run(CATCHES_THE_STOP)
    assert result.value is None
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        "the code used its whole operation budget (an endless loop?); do less work per run (line 7)",
    )


async def test_a_stop_the_code_catches_and_replaces_with_its_own_error_still_ends_the_run() -> None:
    """Code that catches the output flood's stop and raises its own error gets the output limit."""
    code = dedent(
        """
        try:
            while True:
                print("x" * 100)
        except BaseException:
            raise ValueError("all is well")
        """
    )
    async with Sandbox(limits=Limits(timeout=10.0, output=1_000, flood=1_000), isolation="inline") as sb:
        result = await sb.run(code)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("output_limit", output_message(1_000))


TIMEOUT = timeout_message(0.1)

LONG_CALLS_FEW_TICKS = dedent(
    """
    L = [0] * 1_000_000
    for i in range(250):
        x = L.count(1)
    return "done"
    """
)

ENDS_IN_A_LONG_CALL = dedent(
    """
    L = [0] * 3_000_000
    for i in range(2):
        pass
    return L.count(1) + L.count(1) + L.count(1) + L.count(1) + L.count(1)
    """
)


async def test_a_run_of_fewer_ticks_than_a_chunk_each_a_long_call_stops_at_its_timeout() -> None:
    """250 ticks of a few ms each: the deadline watcher halts the run, which stops at its next tick."""
    async with Sandbox(limits=Limits(timeout=0.1), isolation="inline") as sb:
        result = await sb.run(LONG_CALLS_FEW_TICKS)
    assert result.value is None
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("timeout", f"{TIMEOUT} (line 2)")


async def test_a_run_that_ends_past_its_timeout_with_no_tick_after_it_is_a_timeout() -> None:
    """A long C call past the deadline cannot be cut, but its run ends as the timeout, not with its value."""
    async with Sandbox(limits=Limits(timeout=0.1), isolation="inline") as sb:
        result = await sb.run(ENDS_IN_A_LONG_CALL)
    assert result.value is None
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("timeout", TIMEOUT)


async def test_inline_runs_share_one_deadline_watcher_thread() -> None:
    """The watcher is one daemon thread for the process: runs, in sequence or at once, start no thread of their own."""
    async with Sandbox(limits=Limits(timeout=5.0), isolation="inline") as sb:
        await sb.run("return 1")
        before = threading.enumerate()
        results = [await sb.run("return 1") for _ in range(3)]
        results += await asyncio.gather(*(sb.run("import asyncio\nawait asyncio.sleep(0)\nreturn 1") for _ in range(3)))
        after = threading.enumerate()
    assert [result.value for result in results] == [1] * 6
    assert after == before
    watchers = [thread for thread in after if thread.name == "sandbox-deadlines"]
    assert len(watchers) == 1
    assert watchers[0].daemon


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_task_group_that_fails_names_each_failure_and_a_limit_in_it_is_the_limit(isolation: str) -> None:
    """The run's message lists a group's exceptions, as a traceback would; a limit reached inside a task group's
    task ends the run as that limit, never as an `ExceptionGroup`."""
    failing = dedent(
        """
        import asyncio
        async def bad(i):
            raise ValueError(f"bad {i}")
        async with asyncio.TaskGroup() as tg:
            for i in range(2):
                tg.create_task(bad(i))
        """
    )
    spinning = dedent(
        """
        import asyncio
        async def spin():
            while True:
                pass
        async with asyncio.TaskGroup() as tg:
            tg.create_task(spin())
            tg.create_task(asyncio.sleep(5))
        """
    )
    async with Sandbox(isolation=isolation, limits=Limits(timeout=5.0, operations=100_000)) as sb:
        failed, spun = await sb.run(failing), await sb.run(spinning)
    assert failed.error is not None
    listed = "unhandled errors in a TaskGroup (2 sub-exceptions); ValueError: bad 0; ValueError: bad 1"
    assert (failed.error.kind, failed.error.type_name, failed.error.message) == (
        "runtime",
        "ExceptionGroup",
        f"ExceptionGroup: {listed} (line 4)",
    )
    assert spun.error is not None
    assert (spun.error.kind, spun.error.message) == (
        "timeout",
        "the code used its whole operation budget (an endless loop?); do less work per run (line 3)",
    )


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_group_whose_class_redefines_its_exceptions_is_listed_from_its_own_tuple(isolation: str) -> None:
    """The run's message reads a group's exceptions from the group itself: a subclass's `exceptions` property,
    which would run after the run (here raising `KeyboardInterrupt` out of an inline host), is never asked."""
    code = dedent(
        """
        class Group(ExceptionGroup):
            @property
            def exceptions(self):
                raise KeyboardInterrupt("out of the host")
        raise Group("g", [ValueError(1)])
        """
    )
    async with Sandbox(isolation=isolation) as sb:
        result = await sb.run(code)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "runtime",
        "Group: g (1 sub-exception); ValueError: 1 (line 5)",
    )
