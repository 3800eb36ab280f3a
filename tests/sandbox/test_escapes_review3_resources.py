"""Red team, third review: resources of the host the code could hold past its run.

A delay reaches the event loop's timer heap, which orders every timer of the loop (the host's own, inline);
a delay of the code's class would be ordered by the code's `__lt__` and `__sub__`, outside its run. Async
generators whose `finally` swallows the cancellation meant to close them, and tasks that swallow theirs,
would keep the run from returning and leave tasks behind in the host's loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from review3_kit import QUICK, Case, Refused, Value, case, check, params

if TYPE_CHECKING:
    from sandbox import Sandbox

_LATE = """
import asyncio
class Late:
    def __radd__(self, other):
        return self
    def __sub__(self, other):
        return 1000.0
    def __lt__(self, other):
        return False
    def __gt__(self, other):
        return True
    def __float__(self):
        return 1000.0
"""
NOT_SECONDS = Refused("runtime", "TypeError", "must be a number of seconds (an int or a float), not 'Late'")

TIMERS: list[Case] = [
    case(f"{name}_with_a_delay_of_the_codes_class", (_LATE, code), NOT_SECONDS)
    for name, code in [
        ("sleep", "await asyncio.sleep(Late())"),
        ("timeout", "async with asyncio.timeout(Late()):\n    pass"),
        ("reschedule", "async with asyncio.timeout(None) as t:\n    t.reschedule(Late())"),
        ("wait_for", "await asyncio.wait_for(asyncio.sleep(0), Late())"),
        ("wait", "await asyncio.wait([asyncio.create_task(asyncio.sleep(0))], timeout=Late())"),
        ("as_completed", "asyncio.as_completed([asyncio.sleep(0)], timeout=Late())"),
    ]
] + [
    case(
        "sleep_for_nan_seconds",
        "import asyncio\nawait asyncio.sleep(float('nan'))",
        Refused("runtime", "ValueError", "a delay must be a number of seconds, not NaN"),
    ),
    case(
        "a_delay_of_an_int_subclass_is_its_value",
        """
        import asyncio
        class Zero(int):
            def __float__(self):
                return 1000.0
            def __radd__(self, other):
                return 1000.0
        await asyncio.sleep(Zero(0))
        async with asyncio.timeout(Zero(5)):
            await asyncio.sleep(0)
        return "slept"
        """,
        Value("slept"),
    ),
    case(
        "queue_and_semaphore_sizes_are_read_once",
        """
        import asyncio
        class Size:
            def __init__(self, first):
                self.first, self.reads = first, 0
            def __index__(self):
                self.reads += 1
                return self.first if self.reads == 1 else 0
        size, value = Size(2), Size(1)
        q = asyncio.Queue(size)
        await q.put(1)
        await q.put(2)
        s = asyncio.Semaphore(value)
        async with s:
            pass
        return [q.full(), q.maxsize, size.reads, value.reads]
        """,
        Value([True, 2, 1, 1]),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(TIMERS))
async def test_delays_reach_the_loop_as_plain_floats(sb: Sandbox, case: Case) -> None:
    """Every delay, deadline and size the asyncio facade takes is a plain number read once."""
    await check(sb, case)


_STUBBORN = """
import asyncio
async def stubborn():
    try:
        yield 1
    finally:
        try:
            await asyncio.sleep(30)
        except BaseException:
            await asyncio.sleep(30)
"""

LEFTOVERS: list[Case] = [
    case(
        "async_generator_finally_swallows_the_close_timeout",
        (_STUBBORN, "g = stubborn()\nawait anext(g)\nreturn 1"),
        Value(1),
    ),
    case(
        "forty_async_generators_swallow_the_close_timeout",
        (_STUBBORN, "gens = [stubborn() for _ in range(40)]\nfor g in gens:\n    await anext(g)\nreturn 40"),
        Value(40),
    ),
    case(
        "the_main_task_swallows_its_cancellation_at_the_timeout",
        """
        import asyncio
        try:
            await asyncio.sleep(30)
        except BaseException:
            await asyncio.sleep(30)
        """,
        Refused("timeout", None, "the code ran past its 1 s time limit waiting on tools or sleeps"),
        limits=QUICK.__class__(timeout=1.0, operations=300_000, max_size=1_000_000),
    ),
    case(
        "a_task_swallows_its_cancellation_at_the_end_of_the_run",
        """
        import asyncio
        async def stubborn():
            for _ in range(3):
                try:
                    await asyncio.sleep(30)
                except BaseException:
                    pass
        t = asyncio.create_task(stubborn())
        await asyncio.sleep(0)
        return 1
        """,
        Value(1),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(LEFTOVERS))
async def test_nothing_of_the_run_outlives_it(sb: Sandbox, case: Case, isolation: str) -> None:
    """Tasks and async generators that swallow their cancellation end with the run; no task of it is left."""
    before = len(asyncio.all_tasks())
    await check(sb, case)
    if isolation == "inline":
        assert len(asyncio.all_tasks()) == before
