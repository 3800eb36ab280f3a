"""Where each limit is enforced says the same thing: one wording per limit, whichever layer stops the run."""

from __future__ import annotations

import pytest

from sandbox import Limits, Sandbox
from sandbox._host.dispatch import Dispatcher
from sandbox._shared.hostcall import Call, HostFailure
from sandbox.limits import calls_message, memory_message, timeout_message

BOTH = pytest.mark.parametrize("isolation", ["inline", "process"])


@BOTH
async def test_a_loop_past_the_wall_clock_is_stopped_with_the_timeout_wording(sb: Sandbox) -> None:
    """The operation guard's clock check stops a busy loop with `timeout_message` of the run's own timeout."""
    result = await sb.run("while True:\n    pass", limits=Limits(timeout=0.3))
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("timeout", timeout_message(0.3) + " (line 1)")


@BOTH
async def test_waiting_past_the_wall_clock_is_stopped_with_the_timeout_wording(sb: Sandbox) -> None:
    """The runner's wait stops code that sleeps past its timeout with the same wording, saying it was waiting."""
    result = await sb.run("import asyncio\nawait asyncio.sleep(30)", limits=Limits(timeout=0.3))
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        timeout_message(0.3, " waiting on tools or sleeps"),
    )


@BOTH
async def test_one_call_past_the_call_limit_stops_the_run_with_the_calls_wording(sb: Sandbox) -> None:
    """The fourth call of a run limited to three stops it as `call_limit`, worded by `calls_message`."""
    code = "for i in range(4):\n    await echo(i)"
    result = await sb.run(code, functions={"echo": lambda x: x}, limits=Limits(timeout=10.0, calls=3))
    assert result.error is not None
    assert (result.error.kind, result.error.message, result.calls) == ("call_limit", calls_message(3) + " (line 2)", 3)


async def test_one_long_operation_past_the_wall_clock_kills_the_worker_with_the_timeout_wording(
    sandboxes: dict[str, Sandbox],
) -> None:
    """A catastrophic regular expression holds the worker past its time: killed, with the same wording."""
    code = 'import re\nreturn re.match(r"(a+)+$", "a" * 40 + "b")'
    result = await sandboxes["process"].run(code, limits=Limits(timeout=0.3))
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        timeout_message(0.3, " in one long operation (a slow regular expression?)"),
    )


@BOTH
async def test_the_host_refuses_calls_past_the_limit_that_a_worker_sends_anyway(isolation: str) -> None:
    """Across a process boundary the host counts too: a call past `calls` gets the same wording as a refusal."""
    dispatcher = Dispatcher({"echo": lambda x: x}, Limits(calls=1), limit=isolation == "process")
    assert await dispatcher(Call("echo", None, [1])) == 1
    if isolation == "inline":  # the count is the sandbox side's, in this same process
        assert await dispatcher(Call("echo", None, [2])) == 2
        return
    with pytest.raises(HostFailure) as refused:
        await dispatcher(Call("echo", None, [2]))
    assert (refused.value.type_name, refused.value.message) == ("RuntimeError", calls_message(1))


@pytest.mark.slow
async def test_an_inline_run_that_keeps_allocating_is_stopped_as_memory() -> None:
    """Inline, a run whose lists of lists grow the process past `Limits.memory` ends `memory`; the next run works."""
    grow = "rows = []\nfor i in range(50_000_000):\n    rows.append([i, i])\nreturn len(rows)"
    async with Sandbox(isolation="inline", limits=Limits(timeout=20.0, memory=32 * 1024 * 1024)) as sb:
        grown = await sb.run(grow)
        assert grown.error is not None
        assert grown.error.kind == "memory"
        assert grown.error.message.startswith(memory_message())  # and the line it was stopped at
        assert (await sb.run("return sum(range(10))")).value == 45


@BOTH
async def test_a_recursive_lambda_takes_a_tick_per_call_so_the_operation_budget_stops_it(sb: Sandbox) -> None:
    """A lambda's entry is a function's entry: a doubling recursion of lambdas ends at the operation budget."""
    code = "f = lambda n: 1 if n == 0 else f(n - 1) + f(n - 1)\nreturn f(40)"
    result = await sb.run(code, limits=Limits(timeout=10.0, operations=100_000))
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        "the code used its whole operation budget (an endless loop?); do less work per run (line 1)",
    )


async def test_a_lambda_that_c_calls_per_item_is_stopped_at_the_deadline_inline() -> None:
    """`sorted` calls its key per item from C; each call takes a tick, so the deadline watcher's halt stops it."""
    code = "big = [0] * 1_000_000\nreturn sorted(range(10_000), key=lambda i: -1 in big)"
    async with Sandbox(isolation="inline", limits=Limits(timeout=0.2)) as sb:
        result = await sb.run(code)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("timeout", timeout_message(0.2) + " (line 2)")
