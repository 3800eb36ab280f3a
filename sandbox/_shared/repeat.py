"""Repeatable runs: a seed for `random` and `uuid.uuid4`, and a fixed wall clock, so a rerun makes the same choices.

A host that reruns the same code to replay it (an approval resumed later, in another process) needs the code
to take the same branches and build the same arguments. `Sandbox.run(seed=..., clock=...)` binds a `Repeat` to
the run's guards (`Guards.repeat`), and the module facades take it from there when the code imports them, so an
import in code the run left behind (a generator closed after it) still gets its run's settings. Monotonic
clocks (`time.monotonic`, `perf_counter`) keep running: they measure durations, and no value of theirs is
meaningful outside the run.
"""

from __future__ import annotations

import datetime
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Repeat:
    """What makes one run repeatable; a part left `None` behaves as usual."""

    seed: int | None = None
    """Seeds the run's `random` functions, `random.Random()` without a seed, and `uuid.uuid4()`."""
    clock: float | None = None
    """Seconds since the epoch that the wall clock reads for the whole run."""


def run_random(repeat: Repeat | None) -> random.Random:
    """The generator behind the `random` module of a run with these settings: seeded when it is repeatable."""
    seed = repeat.seed if repeat is not None else None
    return random.Random(seed)  # noqa: S311  # the model's own `random`, not for secrets


def fixed_members(name: str, repeat: Repeat | None) -> dict[str, Any]:
    """Members of module `name` that replace the usual ones in a run with these settings (none if not repeatable)."""
    if repeat is None:
        return {}
    if name == "uuid" and repeat.seed is not None:
        return _uuid(repeat.seed)
    if name == "random" and repeat.seed is not None:
        return {"Random": _seeded_random_class(random.Random(repeat.seed ^ 0x5EED))}  # noqa: S311  # not secrets
    if repeat.clock is not None and name in ("time", "datetime"):
        return _time(repeat.clock) if name == "time" else _datetime(repeat.clock)
    return {}


def _uuid(seed: int) -> dict[str, Any]:
    generator = random.Random(seed ^ 0x00D1)  # noqa: S311  # ids repeatable on purpose, not secrets

    def uuid4() -> uuid.UUID:
        return uuid.UUID(int=generator.getrandbits(128), version=4)

    return {"uuid4": uuid4}


def _seeded_random_class(seeds: random.Random) -> type[random.Random]:
    class Random(random.Random):
        def __init__(self, x: Any = None) -> None:
            super().__init__(seeds.getrandbits(64) if x is None else x)

    return Random


def _time(clock: float) -> dict[str, Any]:
    def time_() -> float:
        return clock

    def time_ns() -> int:
        return int(clock * 1_000_000_000)

    def localtime(secs: float | None = None) -> time.struct_time:
        return time.localtime(clock if secs is None else secs)

    def gmtime(secs: float | None = None) -> time.struct_time:
        return time.gmtime(clock if secs is None else secs)

    def strftime(format: str, t: Any = None) -> str:
        return time.strftime(format, time.localtime(clock) if t is None else t)

    return {"time": time_, "time_ns": time_ns, "localtime": localtime, "gmtime": gmtime, "strftime": strftime}


def _datetime(clock: float) -> dict[str, Any]:
    class datetime_(datetime.datetime):  # the model writes `datetime.datetime`
        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> Any:
            return cls.fromtimestamp(clock, tz)

        @classmethod
        def utcnow(cls) -> Any:
            return cls.fromtimestamp(clock, datetime.UTC).replace(tzinfo=None)

        @classmethod
        def today(cls) -> Any:
            return cls.fromtimestamp(clock)

    class date(datetime.date):
        @classmethod
        def today(cls) -> Any:
            return cls.fromtimestamp(clock)

    datetime_.__name__ = datetime_.__qualname__ = "datetime"
    return {"datetime": datetime_, "date": date}
