"""A host function raising its own `CancelledError` fails that call; the run's own cancellation still goes through."""

from __future__ import annotations

import asyncio
from typing import Literal

import anyio
import pytest

from sandbox import Limits, Sandbox


async def fetch_later() -> str:
    upstream = asyncio.get_running_loop().create_future()
    upstream.cancel()  # a shared connection reset, its pending requests cancelled
    result: str = await upstream
    return result


def fetch_now() -> str:
    raise asyncio.CancelledError("upstream reset")


async def slow() -> str:
    await anyio.sleep(60)
    return "late"


CODE = """
import asyncio
seen = []
for call in (fetch_later, fetch_now):
    try:
        await call()
    except Exception as e:
        seen.append(f"{type(e).__name__}: {e}")
try:
    await asyncio.wait_for(slow(), timeout=0.05)
except asyncio.TimeoutError:
    seen.append("slow timed out")
return seen
"""


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_host_functions_own_cancelled_error_fails_its_call_and_the_code_goes_on(
    isolation: Literal["inline", "process"],
) -> None:
    """The code catches each call's `CancelledError` as an `Exception`, at once; its own `wait_for` still cancels."""
    async with Sandbox(isolation=isolation, limits=Limits(timeout=10)) as sb:
        result = await sb.run(CODE, functions={"fetch_later": fetch_later, "fetch_now": fetch_now, "slow": slow})
    assert result.error is None, result.error
    assert result.value == ["CancelledError: ", "CancelledError: upstream reset", "slow timed out"]
