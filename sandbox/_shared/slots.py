"""An in-flight cap: calls take a slot without waiting while one is free, and wait in turn when none is.

One owner for both sides of a call: the sandbox's cap on the calls its code has in flight (`sandbox._runtime.calls`) and
the host's own count of a worker's calls (`sandbox._host.dispatch`). Taking a free slot is a plain count, with no
coroutine, lock or future: most calls never wait.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable


class Event(Protocol):
    """What a waiting call waits on: `asyncio.Event` in the sandbox, `anyio.Event` on the host (any event loop)."""

    def set(self) -> object:
        """Wake every waiter."""

    async def wait(self) -> object:
        """Wait until `set` is called."""


class Slots:
    """`size` slots; a slot freed while calls wait goes to the first of them, which then holds it.

    Args:
        size: How many calls may hold a slot at once.
        event: Makes what a waiting call waits on.
    """

    __slots__ = ("_busy", "_event", "_queue", "size")

    def __init__(self, size: int, event: Callable[[], Event]) -> None:
        self.size = size
        self._event = event
        self._busy = 0
        """Slots held."""
        self._queue: deque[Event] = deque()
        """Calls waiting for a slot, first come first served."""

    @property
    def full(self) -> bool:
        """Whether every slot is held."""
        return self._busy >= self.size

    def take_now(self) -> bool:
        """Take a slot if one is free and no call waits before this one; whether it was taken."""
        if self._busy < self.size and not self._queue:
            self._busy += 1
            return True
        return False

    async def take(self) -> None:
        """Take a slot, waiting in turn for one; `free` it once the call is over."""
        if self.take_now():
            return
        turn = self._event()
        self._queue.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn in self._queue:
                self._queue.remove(turn)
            else:  # cancelled after the slot was handed over: it goes to the next in line
                self.free()
            raise

    def free(self) -> None:
        """Give a slot back: to the first call waiting for one (it stays held), else free."""
        if self._queue:
            self._queue.popleft().set()
        else:
            self._busy -= 1
