"""The host's side of a run on the pipe: the run's task reads it, answers sync host functions itself and hands
calls that have to wait to answering tasks; the code gets its values, errors and limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pytest

from sandbox import Limits
from sandbox._host.dispatch import Dispatcher
from sandbox._host.distrust import Admission
from sandbox._host.template import Template
from sandbox._shared.confinement import Confinement

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


async def run(template: Template, code: str, functions: dict[str, HostFunction], limits: Limits) -> RunResult:
    """One run in a run process of `template`."""
    worker = await template.take()
    try:
        return await worker.run(
            code, limits=limits, dispatcher=Dispatcher(functions, limits, limit=True), error_names=()
        )
    finally:
        await worker.kill()


async def test_sync_and_async_calls_each_get_their_own_outcome(template: Template) -> None:
    """40 gathered calls of both kinds, then sequential ones: each gets its own value or error."""
    limits = Limits(timeout=10.0, concurrent_calls=8)
    result = await run(template, MIXED, {"double": double, "triple": triple}, limits)
    assert result.error is None, result.error
    assert result.value == EXPECTED
    assert result.calls == 43


async def test_the_call_limit_and_the_timeout_hold(template: Template) -> None:
    """Past `calls` the code gets a `call_limit` error; a call that outlasts `timeout` ends the run as `timeout`."""

    async def stuck(i: int) -> int:
        await anyio.sleep(30)
        return i

    code = "for i in range(5):\n    await triple(i + 1)"
    over = await run(template, code, {"triple": triple}, Limits(calls=3))
    assert over.error is not None
    assert (over.error.kind, over.calls) == ("call_limit", 3)
    late = await run(template, "return await stuck(1)", {"stuck": stuck}, Limits(timeout=0.5))
    assert late.error is not None
    assert late.error.kind == "timeout"


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
