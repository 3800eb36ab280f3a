"""Per-caller limits of `codemode serve`: runs in flight and runs started per minute, for each identity.

One caller must not take every sandbox process of a replica, nor start runs faster than the operator allows. A
`code` call over the limit is refused before anything runs, as an `isError` tool result that says how long to
wait: the client and the model read it like any failed run, and the session stays up (an HTTP `429` would reach
the MCP client as a transport failure, not as something the model can act on). Callers without an identity
(no authentication) share one allowance.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

WINDOW: Final = 60.0
"""Seconds over which `max_runs_per_minute` counts the runs a caller started."""


class QuotaError(Exception):
    """A caller is over its limit; the message says which, and when to try again."""


class RunQuota:
    """Runs in flight and runs per minute, counted per caller (by `Caller.principal`; None for no identity).

    Args:
        max_in_flight: Runs one caller may have going at once; None for no limit.
        per_minute: Runs one caller may start in any 60 seconds; None for no limit.
        clock: Seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        *,
        max_in_flight: int | None = None,
        per_minute: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_in_flight = max_in_flight
        self.per_minute = per_minute
        self._clock = clock
        self._running: defaultdict[str | None, int] = defaultdict(int)
        self._started: defaultdict[str | None, deque[float]] = defaultdict(deque)

    @contextlib.contextmanager
    def admit(self, who: str | None) -> Iterator[None]:
        """Count one run of `who` while the block lasts.

        Raises:
            QuotaError: `who` has `max_in_flight` runs going, or started `per_minute` runs in the last minute.
        """
        self._check(who)
        self._running[who] += 1
        try:
            yield
        finally:
            self._running[who] -= 1
            if not self._running[who]:
                del self._running[who]

    def _check(self, who: str | None) -> None:
        if self.max_in_flight is not None and self._running.get(who, 0) >= self.max_in_flight:
            runs = "run" if self.max_in_flight == 1 else "runs"
            raise QuotaError(
                f"Refused: this caller already has {self.max_in_flight} {runs} going, the most this server allows "
                "at once. Nothing was run; wait for a run to finish, then call `code` again."
            )
        if self.per_minute is None:
            return
        now = self._clock()
        started = self._started[who]
        while started and started[0] <= now - WINDOW:
            started.popleft()
        if len(started) >= self.per_minute:
            wait = math.ceil(started[0] + WINDOW - now)
            raise QuotaError(
                f"Refused: this caller started {self.per_minute} runs in the last minute, the most this server "
                f"allows. Nothing was run; call `code` again in {wait} s."
            )
        started.append(now)
