"""asyncio's locks, events, queues and timeouts as the code sees them: plain numbers in, awaitables only awaited.

A delay reaches the event loop's timer heap, which orders it against every other timer of the loop (the
host's own, inline) by comparison; a delay of the code's class with `__radd__` and `__lt__` would be ordered
by the code, outside its run. So every delay and deadline is converted to a plain float first. The primitives'
methods that wait return a `Lazy` instead of asyncio's coroutine: it cannot be driven by hand, and one never
awaited leaves no coroutine behind to warn in the host.
"""

from __future__ import annotations

import asyncio
import decimal
import fractions
import math
import operator
from typing import Any

from sandbox._runtime.awaiting import Lazy

_NUMBERS = (decimal.Decimal, fractions.Fraction)


def seconds(value: object, what: str = "a delay") -> float:
    """`value` as a plain float of seconds (never the code's own number type, never NaN)."""
    if isinstance(value, float):
        result = float.__float__(value)  # the value itself, even of a subclass
    elif isinstance(value, int):
        result = float(int.__index__(value))
    elif type(value) in _NUMBERS:
        result = float(value)  # type: ignore[arg-type]  # exactly Decimal or Fraction: their own conversion
    else:
        raise TypeError(f"{what} must be a number of seconds (an int or a float), not {type(value).__name__!r}")
    if math.isnan(result):
        raise ValueError(f"{what} must be a number of seconds, not NaN")
    return result


def optional_seconds(value: object, what: str = "a timeout") -> float | None:
    """`seconds(value)`, or None for no limit."""
    return None if value is None else seconds(value, what)


def count(value: object) -> int:
    """A count (a semaphore's value, a queue's size) as a plain int, read once."""
    return int.__index__(operator.index(value))  # type: ignore[arg-type]


class Timeout(asyncio.Timeout):  # type: ignore[misc]  # final only in the stubs; `reschedule` must convert
    """`asyncio.timeout()`'s context manager; its deadline is a plain float."""

    def reschedule(self, when: object) -> None:
        """Move the deadline (a loop time in seconds), or remove it with None."""
        super().reschedule(optional_seconds(when, "a deadline"))


def timeout(delay: object) -> Timeout:
    """Cancel the block after `delay` seconds (None for no limit), raising `TimeoutError`."""
    limit = optional_seconds(delay)
    return Timeout(None if limit is None else asyncio.get_running_loop().time() + limit)


class Lock(asyncio.Lock):
    """`asyncio.Lock`."""

    def acquire(self) -> Lazy:  # type: ignore[override]
        """Wait until the lock is free, then take it."""
        return Lazy(super().acquire)


class Event(asyncio.Event):
    """`asyncio.Event`."""

    def wait(self) -> Lazy:  # type: ignore[override]
        """Wait until the event is set."""
        return Lazy(super().wait)


class Condition(asyncio.Condition):
    """`asyncio.Condition`, on the sandbox's `Lock`."""

    def __init__(self, lock: Lock | None = None) -> None:
        super().__init__(Lock() if lock is None else lock)

    def wait(self) -> Lazy:  # type: ignore[override]
        """Release the lock, wait to be notified, take the lock again."""
        return Lazy(super().wait)

    def wait_for(self, predicate: Any) -> Lazy:  # type: ignore[override]
        """Wait until `predicate()` is true."""
        return Lazy(lambda: super(Condition, self).wait_for(predicate))


class Semaphore(asyncio.Semaphore):
    """`asyncio.Semaphore`, counting with a plain int."""

    def __init__(self, value: object = 1) -> None:
        super().__init__(count(value))

    def acquire(self) -> Lazy:  # type: ignore[override]
        """Wait until the count is above zero, then decrement it."""
        return Lazy(super().acquire)


class BoundedSemaphore(asyncio.BoundedSemaphore):
    """`asyncio.BoundedSemaphore`, counting with a plain int."""

    def __init__(self, value: object = 1) -> None:
        super().__init__(count(value))

    def acquire(self) -> Lazy:  # type: ignore[override]
        """Wait until the count is above zero, then decrement it."""
        return Lazy(super().acquire)


class Queue(asyncio.Queue[Any]):
    """`asyncio.Queue`, its waiting methods returning awaitables only `await` can use."""

    def __init__(self, maxsize: object = 0) -> None:
        super().__init__(count(maxsize))

    def put(self, item: Any) -> Lazy:  # type: ignore[override]
        """Put `item` in, waiting for room."""
        return Lazy(lambda: super(Queue, self).put(item))

    def get(self) -> Lazy:  # type: ignore[override]
        """Take the next item out, waiting for one."""
        return Lazy(super().get)

    def join(self) -> Lazy:  # type: ignore[override]
        """Wait until every item put in has been marked done."""
        return Lazy(super().join)


class LifoQueue(Queue, asyncio.LifoQueue[Any]):
    """`asyncio.LifoQueue`."""


class PriorityQueue(Queue, asyncio.PriorityQueue[Any]):
    """`asyncio.PriorityQueue`."""


PRIMITIVES: dict[str, Any] = {
    "timeout": timeout,
    "Lock": Lock,
    "Event": Event,
    "Condition": Condition,
    "Semaphore": Semaphore,
    "BoundedSemaphore": BoundedSemaphore,
    "Queue": Queue,
    "LifoQueue": LifoQueue,
    "PriorityQueue": PriorityQueue,
}
"""The primitives of the `asyncio` facade: the same for every run."""
