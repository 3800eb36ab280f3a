"""Each run's own process, seen from inside: a new process per run, nothing one run leaves reaches the next.

Each test runs real run processes (`COUNTING`: a sandbox's run process, its `Worker.run` wrapped to report what
it sees, for code starting `#counting`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import TYPE_CHECKING

import anyio

from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

COUNTING = r"""
import asyncio
import os
from sandbox._worker import main as _worker

class Counting(_worker.Worker):
    tasks = []
    fired = []

    async def run(self, message):
        Counting.tasks.append(asyncio.current_task())  # held, so no two tasks share an id
        code = message["code"]
        if not code.startswith("#counting "):
            return await super().run(message)
        run_id = self.current_run = message["run"]
        what = code.split()[1]
        if what == "timer":  # what a run can leave behind: a callback due after the run's end
            asyncio.get_running_loop().call_later(0.01, Counting.fired.append, True)
            value = "left"
        elif what == "pid":
            value = os.getpid()
        elif what == "tasks":
            value = len(set(map(id, Counting.tasks)))
        else:
            value = bool(Counting.fired)
        self.end_run()
        self.send({"t": "done", "run": run_id, "result": {"value": value}})

_worker.main(Counting)
"""


@contextlib.asynccontextmanager
async def counting(limits: Limits | None = None) -> AsyncIterator[Sandbox]:
    """A process sandbox whose run processes run `COUNTING`."""
    sandbox = Sandbox(isolation="process", limits=limits or Limits(timeout=5.0))
    assert sandbox._template is not None
    sandbox._template.entry = ("-c", COUNTING)
    async with sandbox:
        yield sandbox


async def test_runs_one_after_another_or_at_once_each_get_a_process_of_their_own() -> None:
    """Five runs in a row, then two at once: seven process ids, none seen twice; each process ran one task."""

    def echo(value: int) -> int:
        return value

    async with counting() as sb:
        values = [(await sb.run(f"return {i} + await echo({i})", functions={"echo": echo})).value for i in range(3)]
        assert values == [0, 2, 4]
        pids = [(await sb.run("#counting pid")).value for _ in range(5)]
        both = await asyncio.gather(sb.run("#counting pid"), sb.run("#counting pid"))
        assert len({*pids, *(result.value for result in both)}) == 7
        assert (await sb.run("#counting tasks")).value == 1


async def test_every_run_gives_the_event_loop_a_turn_even_when_its_answer_is_already_there() -> None:
    """Twenty runs in a row with another task counting its turns: it gets one per run at least, though the host
    often reads a fast worker's `done` before it would wait for it."""
    turns = 0

    async def count() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    async with Sandbox(isolation="process", max_runs=1) as sb:
        await sb.run("return 1")
        counter = asyncio.create_task(count())
        await asyncio.sleep(0)
        turns = 0
        for _ in range(20):
            assert (await sb.run("return 1")).value == 1
        counter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await counter
    assert turns >= 20


async def test_a_timer_a_run_left_never_fires_in_a_later_run() -> None:
    """A callback a run left due 10 ms after it ended is gone with its process: the next run never sees it fire."""
    async with counting() as sb:
        assert (await sb.run("#counting timer")).value == "left"
        await anyio.sleep(0.3)
        assert (await sb.run("#counting fired")).value is False


async def test_each_run_gets_its_own_limits_when_they_change_from_run_to_run() -> None:
    """Limits that change from run to run apply to each run as sent."""
    loop = "n = 0\nfor i in range(10_000):\n    n += i\nreturn n"
    async with counting() as sb:
        tight, loose = Limits(timeout=5.0, operations=1_000), Limits(timeout=5.0)
        outcomes = []
        for limits in (tight, loose, tight, tight, loose):
            result = await sb.run(loop, limits=limits)
            outcomes.append(result.error.message if result.error else result.value)
        spent = "the code used its whole operation budget (an endless loop?); do less work per run (line 2)"
        assert outcomes == [spent, 49_995_000, spent, spent, 49_995_000]


async def test_a_run_frame_and_a_reply_larger_than_the_pipe_arrive_whole() -> None:
    """A 200 KB run frame and a 1 MB reply reach the run process in several reads and are put back together."""

    def blob(size: int) -> str:
        return "x" * size

    code = f"s = {'y' * 200_000!r}\nreturn [len(s), len(await blob(1_000_000))]"
    async with counting(Limits(timeout=5.0, source=300_000)) as sb:
        result = await sb.run(code, functions={"blob": blob})
        assert (result.value, result.error) == ([200_000, 1_000_000], None)
        assert (await sb.run("return 1")).value == 1


async def test_calls_and_runs_without_a_time_limit_wait_on_the_pipe_like_any_other() -> None:
    """`timeout=inf`: the run's timer is at infinity; calls are answered as usual."""

    def echo(value: int) -> int:
        return value

    async with counting(Limits(timeout=math.inf)) as sb:
        values = [(await sb.run(f"return await echo({i}) + 1", functions={"echo": echo})).value for i in range(3)]
        assert values == [1, 2, 3]
