"""The deadline watcher: one daemon thread that stops the inline runs gone past their wall clock between checks.

A run's budget looks at its deadline only when a chunk of ticks runs out (`sandbox._ticks`), so a few hundred
ticks that each make a long C call (`max` of a big list) would run far past it, and a run ending before its next
check would not be stopped at all. Every `_INTERVAL` seconds the watcher halts each run in progress that is past
its deadline: the run stops at its next tick. It reads and halts only the runs' budgets, never the code's
objects, and the thread is started once, for the first run: back-to-back runs add and discard a set entry each.
With no run in progress for `_IDLE_TURNS` turns it sleeps until one starts. A process worker needs none: its
host kills it 1 s past its deadline (`sandbox.host.process`).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from sandbox.limits import timeout_message

if TYPE_CHECKING:
    from sandbox._ticks import Budget

_INTERVAL = 0.025
"""Seconds between two looks: how far past its deadline a run that ticks may go."""
_IDLE_TURNS = 40
"""Looks with no run in progress before the thread sleeps: a second, so a host running runs one after another
never pays for waking it."""


class DeadlineWatcher:
    """The inline runs in progress, and the thread that halts any of them past its deadline."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: set[Budget] = set()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._asleep = False

    def watch(self, budget: Budget) -> None:
        """Halt `budget`'s run once it is past its deadline, until `unwatch`."""
        with self._lock:
            self._runs.add(budget)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="sandbox-deadlines", daemon=True)
                self._thread.start()
            elif self._asleep:
                self._asleep = False
                self._wake.set()

    def unwatch(self, budget: Budget) -> None:
        """Stop watching `budget` (its run is over, or its budget is reset): once this returns, it is never halted."""
        with self._lock:
            self._runs.discard(budget)

    def _loop(self) -> None:
        idle = 0
        while True:
            time.sleep(_INTERVAL)
            with self._lock:
                now = time.monotonic()
                for budget in self._runs:
                    if now > budget.deadline:  # halted again each look: a refill racing the first one cannot undo it
                        budget.halt("timeout", timeout_message(budget.timeout))
                idle = 0 if self._runs else idle + 1
                self._asleep = sleep = idle >= _IDLE_TURNS
                if sleep:
                    self._wake.clear()
            if sleep:  # a run starting from here on sets the event, so the wait returns at once
                self._wake.wait()
                idle = 0


WATCHER = DeadlineWatcher()
"""The process's one watcher, for every inline run on any thread."""
