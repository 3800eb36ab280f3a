"""The host's answering tasks and its bookkeeping between runs: what a cheaper path must still do.

A call that has to wait is answered by a task of the run's task group: it sees the context of the task that
called `run`, anyio's cancel scopes work in it, and it is cancelled when the run ends without it. The in-flight
cap hands slots out in turn.
"""

from __future__ import annotations

import asyncio
import contextvars

import anyio
import anyio.lowlevel
import pytest

from sandbox import Limits, Sandbox
from sandbox._host.dispatch import Dispatcher
from sandbox._shared.hostcall import Call, HostFailure

pytestmark = pytest.mark.anyio

USER: contextvars.ContextVar[str] = contextvars.ContextVar("USER", default="none")


async def test_an_async_function_sees_the_context_of_each_runs_caller() -> None:
    """Sequential and gathered async calls see the `ContextVar`s of the task that called `run`, run after run."""

    async def user() -> str:
        await anyio.lowlevel.checkpoint()
        return USER.get()

    code = "import asyncio\nreturn [await user(), *await asyncio.gather(user(), user())]"

    async def one(name: str, sb: Sandbox) -> object:
        USER.set(name)
        return (await sb.run(code, functions={"user": user})).value

    async with Sandbox(max_runs=1, limits=Limits(timeout=10.0)) as sb:
        seen = [await one("first", sb)]
        async with anyio.create_task_group() as group:

            async def second() -> None:
                seen.append(await one("second", sb))

            group.start_soon(second)
    assert seen == [["first"] * 3, ["second"] * 3]


async def test_a_call_the_code_stopped_waiting_for_is_cancelled_when_the_run_ends() -> None:
    """`asyncio.wait_for` gives up on a call; the run returns, and the host function, still waiting, is cancelled."""
    seen: list[str] = []

    async def stuck() -> int:
        try:
            with anyio.fail_after(30):  # an anyio deadline inside, as codemode's own tool calls have
                await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled")
            raise
        return 1

    code = (
        "import asyncio\n"
        "try:\n"
        "    await asyncio.wait_for(stuck(), 0.05)\n"
        "except asyncio.TimeoutError:\n"
        "    return 'gave up'"
    )
    async with Sandbox(max_runs=1, limits=Limits(timeout=20.0)) as sb:
        with anyio.fail_after(15):
            result = await sb.run(code, functions={"stuck": stuck})
        assert (result.value, result.error) == ("gave up", None)
        assert seen == ["cancelled"]
        assert (await sb.run("return 2")).value == 2


async def test_a_host_functions_own_cancel_scopes_work_in_its_answering_task() -> None:
    """`move_on_after` and `fail_after` inside gathered async host functions behave as they do anywhere else."""

    async def patient(i: int) -> str:
        with anyio.move_on_after(0.01):
            await anyio.sleep(5)
            return "slept"
        try:
            with anyio.fail_after(0.01):
                await anyio.sleep(5)
        except TimeoutError:
            return f"moved on {i}"
        return "never"

    code = "import asyncio\nreturn await asyncio.gather(*[patient(i) for i in range(3)])"
    async with Sandbox(max_runs=1, limits=Limits(timeout=10.0)) as sb:
        result = await sb.run(code, functions={"patient": patient})
    assert result.value == ["moved on 0", "moved on 1", "moved on 2"]


async def test_in_flight_slots_go_in_turn() -> None:
    """`concurrent_calls=1`: calls 1, 2 and 3 wait behind call 0, and run in the order they came once it ends."""
    release = anyio.Event()
    started: list[int] = []

    async def work(i: int) -> int:
        started.append(i)
        if i == 0:
            await release.wait()
        return i

    dispatcher = Dispatcher({"work": work}, Limits(concurrent_calls=1), limit=True)
    results: dict[int, object] = {}

    async def call(i: int) -> None:
        results[i] = await dispatcher(Call("work", None, [i], {}))

    async with anyio.create_task_group() as group:
        for i in range(4):
            group.start_soon(call, i)
            await anyio.wait_all_tasks_blocked()
        assert started == [0]
        release.set()
    assert started == [0, 1, 2, 3]
    assert results == {0: 0, 1: 1, 2: 2, 3: 3}


async def test_a_waiter_cancelled_after_its_slot_came_hands_it_to_the_next() -> None:
    """The slot call 0 frees goes to call 1, cancelled before it could run: call 2 takes it, and no slot is lost."""
    release = anyio.Event()
    started: list[int] = []

    async def work(i: int) -> int:
        started.append(i)
        if i == 0:
            await release.wait()
        return i

    dispatcher = Dispatcher({"work": work}, Limits(concurrent_calls=1), limit=True)
    results: dict[int, object] = {}
    tasks: dict[int, asyncio.Task[None]] = {}

    async def call(i: int) -> None:
        results[i] = await dispatcher(Call("work", None, [i], {}))
        if i == 0:  # call 1 has been handed the slot, and has not run yet
            tasks[1].cancel()

    async with asyncio.TaskGroup() as group:
        for i in range(3):
            tasks[i] = group.create_task(call(i))
            await anyio.wait_all_tasks_blocked()
        release.set()
    assert tasks[1].cancelled()
    assert started == [0, 2]
    assert results == {0: 0, 2: 2}
    assert dispatcher._slots is not None
    assert (dispatcher._slots._busy, len(dispatcher._slots._queue)) == (0, 0)


class Label(str):
    """A str subclass, which is not plain JSON data."""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        ("text", "text"),
        (-(2**61), -(2**61)),
        (2**70, 2**70),
        (2**10_001, "TypeError"),
        (Label("x"), "TypeError"),
    ],
    ids=["none", "bool", "str", "small-int", "big-int", "too-many-bits", "str-subclass"],
)
async def test_a_sync_functions_scalar_result_is_given_back_or_refused_as_check_json_says(
    value: object, expected: object
) -> None:
    """Plain scalars come back as they are; an int past `MAX_INT_BITS` or a str subclass is a `TypeError`."""
    dispatcher = Dispatcher({"give": lambda: value}, Limits(), limit=True)
    try:
        outcome = await dispatcher(Call("give", None, [], {}))
    except HostFailure as failure:
        outcome = failure.type_name
    assert outcome == expected
    assert type(outcome) is type(expected)
