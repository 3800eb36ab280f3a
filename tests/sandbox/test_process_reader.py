"""The host's side of a run on the pipe: a reader callback on asyncio, the run's own task elsewhere, same outcomes.

On asyncio the host watches a worker's pipe with a reader callback for the whole run: it answers sync host
functions itself and hands calls that have to wait to answering tasks, which take the next such call when they
are done. On another event loop the run's task reads the pipe itself (`FramePipe.watch` says it cannot). Both
give the code the same values, errors and limits.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pytest

from sandbox import Limits, Sandbox
from sandbox._confine import Confinement
from sandbox._dispatch import Dispatcher
from sandbox._distrust import Admission
from sandbox._pipe import FramePipe
from sandbox._protocol import encode
from sandbox.host.template import Template

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Coroutine

    from sandbox.functions import HostFunction
    from sandbox.result import RunResult

pytestmark = pytest.mark.anyio

MIXED = """\
import asyncio

async def one(i):
    try:
        return await (double(i) if i % 2 else triple(i))
    except ValueError as error:
        return str(error)

values = await asyncio.gather(*[one(i) for i in range(40)])
return [values, [await double(i) for i in (1, 3)], await triple(2)]
"""


async def double(i: int) -> int:
    await anyio.sleep(0.001 * (i % 3))
    if i % 5 == 0:
        raise ValueError(f"no {i}")
    return i * 2


def triple(i: int) -> int:
    if i % 4 == 0:
        raise ValueError(f"not {i}")
    return i * 3


EXPECTED = [
    [
        f"no {i}" if i % 2 and i % 5 == 0 else f"not {i}" if not i % 2 and i % 4 == 0 else i * (2 if i % 2 else 3)
        for i in range(40)
    ],
    [2, 6],
    6,
]


@pytest.fixture
async def template() -> AsyncIterator[Template]:
    """A template of a sandbox's own kind, whose run processes are forked and confined as a run's are."""
    async with Template(confinement=Confinement(), spares=1) as made:
        yield made


async def run(
    template: Template, code: str, functions: dict[str, HostFunction], limits: Limits, *, watched: bool = True
) -> RunResult:
    """One run in a run process of `template`, whose pipe a reader callback watches or a task reads."""
    worker = await template.take()
    if not watched:
        worker.pipe.watch = lambda callback: False  # type: ignore[method-assign]  # as on an event loop without readers
    try:
        return await worker.run(
            code, limits=limits, dispatcher=Dispatcher(functions, limits, limit=True), error_names=()
        )
    finally:
        await worker.kill()


@pytest.mark.parametrize("watched", [True, False], ids=["reader-callback", "task-reads"])
async def test_sync_and_async_calls_get_the_same_outcomes_whoever_reads_the_pipe(
    template: Template, watched: bool
) -> None:
    """40 gathered calls of both kinds, then sequential ones: each gets its own value or error, either way."""
    limits = Limits(timeout=10.0, concurrent_calls=8)
    result = await run(template, MIXED, {"double": double, "triple": triple}, limits, watched=watched)
    assert result.error is None, result.error
    assert result.value == EXPECTED
    assert result.calls == 43


@pytest.mark.parametrize("watched", [True, False], ids=["reader-callback", "task-reads"])
async def test_the_call_limit_and_the_timeout_hold_whoever_reads_the_pipe(template: Template, watched: bool) -> None:
    """Past `calls` the code gets a `call_limit` error; a call that outlasts `timeout` ends the run as `timeout`."""

    async def stuck(i: int) -> int:
        await anyio.sleep(30)
        return i

    code = "for i in range(5):\n    await triple(i + 1)"
    over = await run(template, code, {"triple": triple}, Limits(calls=3), watched=watched)
    assert over.error is not None
    assert (over.error.kind, over.calls) == ("call_limit", 3)
    late = await run(template, "return await stuck(1)", {"stuck": stuck}, Limits(timeout=0.5), watched=watched)
    assert late.error is not None
    assert late.error.kind == "timeout"


async def test_sequential_calls_that_have_to_wait_are_answered_by_one_task() -> None:
    """Ten awaited calls one after another run in one answering task; gathered ones each in a task of their own."""
    tasks: list[asyncio.Task[object] | None] = []

    async def where(i: int) -> int:
        tasks.append(asyncio.current_task())
        await anyio.sleep(0.01)
        return i

    code = (
        "import asyncio\n"
        "s = [await where(i) for i in range(10)]\n"
        "return s + await asyncio.gather(*[where(i) for i in range(5)])"
    )
    async with Sandbox(max_runs=1, limits=Limits(timeout=10.0)) as sb:
        result = await sb.run(code, functions={"where": where})
    assert result.value == [*range(10), *range(5)]
    assert len(set(map(id, tasks[:10]))) == 1
    assert len(set(map(id, tasks[10:]))) == 5  # in flight together: one task each (the first may be reused)


def test_admission_is_full_at_twice_the_calls_in_flight_and_has_room_again_after_a_release() -> None:
    """`concurrent_calls=2`: the fourth call held closes the door, one outcome opens it."""
    admission = Admission(Limits(concurrent_calls=2))
    for _ in range(3):
        admission.admit(10)
    assert not admission.full
    admission.admit(10)
    assert admission.full
    admission.release(10)
    assert not admission.full
    assert (admission.count, admission.held, admission.held_bytes) == (4, 3, 30)


async def test_admission_wakes_a_reader_waiting_for_room() -> None:
    """The reader waits in `room()` while the host holds too many calls, and goes on once one is released."""
    admission = Admission(Limits(concurrent_calls=1))
    admission.admit(1)
    admission.admit(1)
    woke: list[bool] = []

    async def reader() -> None:
        await admission.room()
        woke.append(admission.full)

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        await anyio.wait_all_tasks_blocked()
        assert woke == []
        admission.release(1)
    assert woke == [False]


async def _into(seen: list[object], value: Coroutine[Any, Any, object]) -> None:
    seen.append(await value)


async def test_what_a_worker_writes_between_runs_stays_unread_until_the_next_run_watches() -> None:
    """The pipe stays registered after a run, but bytes that arrive with no run watching are not read, nor lost."""
    from_worker, worker_out = os.pipe()
    worker_in, to_worker = os.pipe()
    os.set_blocking(from_worker, False)
    pipe = FramePipe(to_worker=to_worker, from_worker=from_worker)
    calls: list[int] = []
    try:
        assert pipe.watch(lambda: calls.append(1))
        pipe.unwatch()  # the run is over
        os.write(worker_out, encode({"t": "call", "id": 1}))
        for _ in range(5):  # loop turns, each polling the pipe (its bytes are there already)
            await anyio.lowlevel.checkpoint()
        assert calls == []
        assert pipe.buffered() is None

        read = anyio.Event()

        def take() -> None:
            pipe.read_now()
            read.set()

        assert pipe.watch(take)  # the next run
        with anyio.fail_after(5):
            await read.wait()
        assert pipe.buffered() == {"t": "call", "id": 1}
    finally:
        pipe.close()
        for fd in (worker_out, worker_in):
            os.close(fd)
