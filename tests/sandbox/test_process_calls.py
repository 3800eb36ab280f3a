"""Host calls through the worker boundary: calls issued together, replies written together, timers while waiting.

The worker blocks on the pipe while its only call is out and nothing else is ready, and writes the calls of one
turn of its loop in one go; the host writes the replies that finish together in one go. None of that may change
what the code sees: each call gets its own value or error, in order, and the code's own timers still fire while
a call is out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest

from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sb() -> AsyncIterator[Sandbox]:
    """A one-worker process sandbox with room for 100 calls in flight."""
    async with Sandbox(isolation="process", max_runs=1, limits=Limits(timeout=10.0, concurrent_calls=100)) as sandbox:
        yield sandbox


GATHERED = """\
import asyncio

async def one(i):
    try:
        return await double(i)
    except ValueError as error:
        return str(error)

return await asyncio.gather(*[one(i) for i in range(100)])
"""


async def test_gathered_calls_each_get_their_own_value_or_error(sb: Sandbox) -> None:
    async def double(i: int) -> int:
        await anyio.sleep(0.01 * (i % 4))  # replies finish in a few bunches, not in call order
        if i % 3 == 0:
            raise ValueError(f"no {i}")
        return i * 2

    result = await sb.run(GATHERED, functions={"double": double})
    assert result.error is None
    assert result.value == [f"no {i}" if i % 3 == 0 else i * 2 for i in range(100)]
    assert result.calls == 100


async def test_a_large_argument_among_small_calls_arrives_whole(sb: Sandbox) -> None:
    code = """\
import asyncio
sizes = [10, 300_000, 20, 100_000, 30]
return await asyncio.gather(*[size(\"x\" * n) for n in sizes])
"""
    result = await sb.run(code, functions={"size": len})
    assert result.error is None
    assert result.value == [10, 300_000, 20, 100_000, 30]


async def test_the_codes_own_timer_fires_while_its_only_call_is_out(sb: Sandbox) -> None:
    """`wait` returns only once the code's sleeping task has called `mark`: a worker blocked on the pipe never would."""
    marked = anyio.Event()

    async def wait() -> str:
        await marked.wait()
        return "woken"

    def mark() -> None:
        marked.set()

    code = """\
import asyncio

async def later():
    await asyncio.sleep(0.2)
    await mark()

task = asyncio.create_task(later())
answer = await wait()
await task
return answer
"""
    with anyio.fail_after(8):
        result = await sb.run(code, functions={"wait": wait, "mark": mark})
    assert result.error is None
    assert result.value == "woken"
    assert result.calls == 2


async def test_sequential_calls_then_a_run_on_the_same_worker(sb: Sandbox) -> None:
    code = "t = 0\nfor i in range(200):\n    t += await echo(i)\nreturn t"
    first = await sb.run(code, functions={"echo": lambda x: x})
    second = await sb.run("return 'next'")
    assert (first.value, first.calls, second.value) == (sum(range(200)), 200, "next")


async def test_sync_and_async_functions_answer_calls_gathered_together(sb: Sandbox) -> None:
    """The reader answers a sync function itself and an async one in a task: each call still gets its own value."""

    async def slow_double(i: int) -> int:
        await anyio.sleep(0.005 * (i % 3))
        return i * 2

    def triple(i: int) -> int:
        if i == 7:
            raise ValueError("seven")
        return i * 3

    code = """\
import asyncio

async def one(i):
    try:
        return [await slow_double(i), await triple(i)]
    except ValueError as error:
        return str(error)

return await asyncio.gather(*[one(i) for i in range(60)])
"""
    result = await sb.run(code, functions={"slow_double": slow_double, "triple": triple})
    assert result.error is None, result.error
    assert result.value == ["seven" if i == 7 else [i * 2, i * 3] for i in range(60)]
    assert result.calls == 120


async def test_replies_larger_than_the_pipe_while_the_worker_sends_large_calls(sb: Sandbox) -> None:
    """Replies the pipe cannot take at once wait for room while the host goes on reading the worker's large calls."""
    code = """\
import asyncio
sizes = await asyncio.gather(*[echo("y" * 200_000 + str(i)) for i in range(20)])
return [len(s) for s in sizes]
"""
    with anyio.fail_after(20):
        result = await sb.run(code, functions={"echo": lambda text: text * 2})
    assert result.error is None, result.error
    assert result.value == [2 * (200_000 + len(str(i))) for i in range(20)]


async def test_an_argument_of_millions_of_commas_inside_a_string_arrives_whole(sb: Sandbox) -> None:
    """2,100,000 commas (more than a frame's values) between escaped backslashes and quotes: not values."""

    def size(text: str) -> int:
        return len(text)

    result = await sb.run("""return await size('\\\\",' * 2_100_000)""", functions={"size": size})
    assert (result.error, result.value) == (None, 6_300_000)
