"""The deadline watcher: one daemon thread that stops the inline runs gone past their wall clock or their memory.

A run's budget looks at its deadline only when a chunk of ticks runs out (`sandbox._runtime.ticks`), so a few hundred
ticks that each make a long C call (`max` of a big list) would run far past it, and a run ending before its next
check would not be stopped at all. Every `_INTERVAL` seconds the watcher halts each run in progress that is past
its deadline: the run stops at its next tick or statement (`_gate_`). It reads and halts only the runs' budgets,
never the code's objects, and the thread is started once, for the first run: back-to-back runs add and discard a
set entry each.
With no run in progress for `_IDLE_TURNS` turns it sleeps until one starts. At each look it also reads the
process's resident memory (`/proc/self/statm`) and halts, as `memory`, each run during which it grew more than
the run's `Limits.memory`: inline runs share the host's memory, so the run stopped is the one whose limit was
passed, whichever run allocated. What one C call allocates at once is not bounded inline. A run process needs
none of this: its host kills it 1 s past its deadline (`sandbox._host.process`) and its rlimits bound its memory.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from sandbox.limits import memory_message, timeout_message

if TYPE_CHECKING:
    from sandbox._runtime.ticks import Budget

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

    def watch(self, budget: Budget, *, memory: int = 0) -> None:
        """Halt `budget`'s run once it is past its deadline (or the process grew `memory` bytes), until `unwatch`."""
        if memory > 0:  # an inline run shares the host's memory: its growth is the process's
            budget.resident_ceiling = resident_bytes() + memory
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
                resident = resident_bytes() if any(budget.resident_ceiling for budget in self._runs) else 0
                for budget in self._runs:
                    if now > budget.deadline:  # halted again each look: a refill racing the first one cannot undo it
                        budget.halt("timeout", timeout_message(budget.timeout))
                    elif 0 < budget.resident_ceiling < resident:
                        budget.halt("memory", memory_message())
                idle = 0 if self._runs else idle + 1
                self._asleep = sleep = idle >= _IDLE_TURNS
                if sleep:
                    self._wake.clear()
            if sleep:  # a run starting from here on sets the event, so the wait returns at once
                self._wake.wait()
                idle = 0


def resident_bytes() -> int:
    """Resident bytes of this process, from `/proc/self/statm` (0 where there is none)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

WATCHER = DeadlineWatcher()
"""The process's one watcher, for every inline run on any thread."""
