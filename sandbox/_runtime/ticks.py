"""The operation budget: each loop iteration and function entry of the model's code takes one operation (a tick).

Ticks are counted in C. `tick` is the `__next__` of an endless iterator that hands out chunks of `_CHUNK` ticks
(a range iterator over cached small ints, rewound in place), and the policy wraps each `for` loop's iterable in
`itertools.compress(iterable, ticks)`, which takes a tick per item with no Python call. When a chunk runs out,
`refill` checks what a tick enforces (a stop already signalled, the operation count, the deadline) and rewinds
the chunk, or raises the stop at this and every later tick. `halt` empties the chunk, so the very next tick
stops the run. How the pieces fit is what keeps every tick counted: `chain` drops its source for good if the
source fails, so the source is a primed `cycle` of two C iterators that never fails; an error raised by its
current iterator (a stop, a `RecursionError` at the stack's limit) leaves that iterator current, so `refill`
runs inside a `map` over an endless `repeat`, asked again at the next tick; and it ends its turn by raising
`StopIteration`, which moves `chain` on to the rewound chunk. The chunk and chain are built when `tick`, `ticks`
or `gate` is first read; built empty, so the first tick checks the budget and any stop.

The gate, `_gate_` between two statements of the code's, is the same machinery without the count: a pass costs
no operation, a stop (a halt from the deadline watcher, inline) raises at the next statement, and the clock is read
at the end of each chunk of passes. So straight-line code, which takes no tick, stops between two operations.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING, Any, NoReturn, cast

from sandbox._runtime.signals import SEAL, StopRun
from sandbox.limits import timeout_message

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

_CHUNK = 256
"""Ticks handed out between two checks: `range(1, _CHUNK + 1)` yields only the ints CPython caches."""
_BUDGET_MESSAGE = "the code used its whole operation budget (an endless loop?); do less work per run"
_OVER = StopRun("timeout", "the run is over", seal=SEAL)
"""Every finished run's stop: never raised itself, only its fresh copies (`StopRun.again`)."""


def _unarmed(_: int) -> None:
    """A budget with no chunk yet has none to rewind."""


class _Armed:
    """A tick machinery attribute: the first read of either builds the run's chunk and chain (most runs tick never)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, budget: Budget | None, owner: type | None = None) -> Any:
        if budget is None:  # read on the class
            return self
        budget.arm()
        return vars(budget)[self.name]  # an instance attribute now: later reads never come here


class Budget:
    """The operation budget and wall clock of one run, and the stop signal that every later tick raises again."""

    ticks: Iterator[int] = cast("Any", _Armed())
    """Endless; each item taken is one tick (`itertools.compress` takes them for a `for` loop)."""
    tick: Callable[[], int] = cast("Any", _Armed())
    """One tick: the guard `_tick_` the policy puts in every `while` body and at every function entry."""
    gate: Callable[[], int] = cast("Any", _Armed())
    """One pass, not counted: the guard `_gate_` the policy puts between two statements; it raises a stop."""

    def __init__(self, *, operations: int, deadline: float, timeout: float) -> None:
        self.operations_left = operations
        self.deadline = deadline
        self.timeout = timeout
        self.resident_ceiling = 0
        """Resident bytes of the process past which the deadline watcher stops the run as `memory` (0: none)."""
        self.stopped: StopRun | None = None
        self._rewind: Callable[[int], None] = _unarmed
        """Sets the chunk's position: 0 refills it, `_CHUNK` empties it (nothing to set before `arm`)."""
        self._rewind_gate: Callable[[int], None] = _unarmed
        """Sets the gate's chunk's position, as `_rewind` the ticks'."""

    def arm(self) -> None:
        """Build the chunks and their chains, empty: the first tick checks the budget, the first pass the clock."""
        if "ticks" in vars(self):
            return
        ticks, rewind = _chunked(self._refill_turn)
        gate, rewind_gate = _chunked(self._gate_turn)
        vars(self).update(
            ticks=ticks, tick=ticks.__next__, gate=gate.__next__, _rewind=rewind, _rewind_gate=rewind_gate
        )

    def ticking(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """`iterable`'s items, a tick taken after each one is produced."""
        return itertools.compress(iterable, self.ticks)

    def refill(self) -> None:
        """Check the budget at the end of a chunk and start the next, or stop the run."""
        if self.stopped is not None:
            raise self.stopped.again()
        if self.operations_left <= 0:
            self.stop("timeout", _BUDGET_MESSAGE)
        self.operations_left -= _CHUNK
        self._reopen(self._rewind)

    def _refill_turn(self, _: None) -> NoReturn:
        self.refill()
        raise StopIteration  # the chunk is rewound: `chain` goes on to it

    def _gate_turn(self, _: None) -> NoReturn:
        """At the end of the gate's chunk: raise a stop, or the deadline's, else open the next chunk."""
        if self.stopped is not None:
            raise self.stopped.again()
        self._reopen(self._rewind_gate)
        raise StopIteration

    def _reopen(self, rewind: Callable[[int], None]) -> None:
        """Stop the run past its deadline, else refill the chunk `rewind` sets (empty again if halted meanwhile)."""
        if time.monotonic() > self.deadline:
            self.stop("timeout", timeout_message(self.timeout))
        rewind(0)
        if self.stopped is not None:  # halted from another thread (`sandbox._runtime.deadlines`) since the check above
            rewind(_CHUNK)

    def stop(self, kind: str, message: str) -> NoReturn:
        """Stop the run now and at every later tick (a bare `except:` cannot swallow it)."""
        raise self.halt(kind, message)

    def halt(self, kind: str, message: str) -> StopRun:
        """Make every later tick stop the run; returns the signal (the first one set wins)."""
        if self.stopped is None:
            self.stopped = StopRun(kind, message, seal=SEAL)
        self._close()
        return self.stopped.again()

    def finish(self) -> None:
        """The run is over: any of its code that still runs (a generator being closed) stops at once."""
        self.stopped = _OVER
        self._close()

    def _close(self) -> None:
        """Empty both chunks: the next tick and the next pass look at the stop."""
        self._rewind(_CHUNK)
        self._rewind_gate(_CHUNK)

    def grace(self, *, operations: int, seconds: float) -> None:
        """A small fresh budget, for the model's code the host itself runs after a stop (an exception's `__str__`)."""
        self.stopped = None
        self.operations_left = operations
        self.deadline = time.monotonic() + seconds
        self._close()


def _chunked(turn: Callable[[None], NoReturn]) -> tuple[Iterator[int], Callable[[int], None]]:
    """An endless iterator of chunks of `_CHUNK` items with `turn` run between two, and the rewind of its chunk."""
    chunk = iter(range(1, _CHUNK + 1))
    rewind: Callable[[int], None] = cast("Any", chunk).__setstate__
    source = itertools.cycle((chunk, map(turn, itertools.repeat(None))))
    next(source), next(source)  # primed: from here on `cycle` hands out its two items without allocating
    rewind(_CHUNK)  # empty; a halt from another thread before this is seen by the first turn
    return itertools.chain.from_iterable(source), rewind
