"""A run with a seed and a clock is repeatable: `random`, `uuid.uuid4()` and the wall clock give the same values."""

from __future__ import annotations

import asyncio

import pytest

from sandbox import Sandbox

CODE = """
import datetime, random, time, uuid
from datetime import date
mine = random.Random()
return [
    random.random(), random.randint(1, 10**9), mine.random(), str(uuid.uuid4()), time.time(), time.strftime("%Y"),
    datetime.datetime.now(datetime.UTC).isoformat(), str(date.today() - date(2023, 1, 1)),
    (datetime.datetime.now() - datetime.datetime.now()).total_seconds(),
]
"""


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_seeded_run_with_a_clock_repeats_its_random_values_ids_and_times(isolation: str) -> None:
    """Two runs with the same seed and clock return the same values; the clock reads the time given."""
    async with Sandbox(isolation=isolation) as sb:  # type: ignore[arg-type]  # parametrized with the literals
        first = await sb.run(CODE, seed=42, clock=1_700_000_000.25)
        second = await sb.run(CODE, seed=42, clock=1_700_000_000.25)
        other = await sb.run(CODE, seed=43, clock=1_700_000_000.25)
    assert first.ok, first.error
    assert first.value == second.value
    assert isinstance(first.value, list)
    assert isinstance(other.value, list)
    assert first.value[4:] == [1_700_000_000.25, "2023", "2023-11-14T22:13:20.250000+00:00", "317 days, 0:00:00", 0.0]
    assert all(a != b for a, b in zip(first.value[:4], other.value[:4], strict=True))


async def test_a_run_without_a_seed_draws_fresh_values_and_reads_the_real_clock() -> None:
    """Without `seed` and `clock`, two runs differ and `time.time()` is the host's time."""
    async with Sandbox(isolation="inline") as sb:
        first = await sb.run("import random, time\nreturn [random.random(), time.time()]")
        second = await sb.run("import random, time\nreturn [random.random(), time.time()]")
    assert isinstance(first.value, list)
    assert isinstance(second.value, list)
    assert first.value[0] != second.value[0]
    assert first.value[1] > 1_700_000_000.25


async def test_concurrent_runs_each_get_their_own_seed_and_clock() -> None:
    """Inline runs that overlap on one event loop each import `random` and `time` with the settings of their run."""
    code = "import asyncio\nawait asyncio.sleep(0.01)\nimport random, time\nreturn [random.random(), time.time()]"
    async with Sandbox(isolation="inline") as sb:
        alone = [await sb.run(code, seed=seed, clock=float(seed)) for seed in (1, 2)]
        together = await asyncio.gather(*(sb.run(code, seed=seed, clock=float(seed)) for seed in (1, 2)))
    assert [result.value for result in together] == [result.value for result in alone]
    assert [result.value[1] for result in alone if isinstance(result.value, list)] == [1.0, 2.0]
