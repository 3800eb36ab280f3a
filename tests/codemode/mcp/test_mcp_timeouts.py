"""A call past `McpSources(timeout=...)` is cancelled alone: the calls beside it on the same connection finish."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("mcp.client")

from mcp_helpers import BUSY_SERVER

from codemode import Catalog, CodeMode
from codemode.mcp import McpSources, StdioServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@pytest.fixture(scope="module")
async def code_mode() -> AsyncIterator[CodeMode]:
    """`busy_server.py` over stdio with a 2 s call timeout (one server start for the module: each takes seconds)."""
    catalog = Catalog()
    server = StdioServer(command=(sys.executable, str(BUSY_SERVER)), name="busy")
    async with McpSources(catalog, [server], timeout=2), CodeMode(catalog, isolation="inline") as cm:
        yield cm


BESIDE_A_TIMEOUT = """
import asyncio
before = await tools.pid()
async def beside():
    await asyncio.sleep(1)  # starts before `slow` times out at 2 s, and is due itself at 3 s
    return await tools.until_cancelled()
slow, beside = await asyncio.gather(tools.slow(seconds=60), beside(), return_exceptions=True)
return {"slow": str(slow), "beside": beside, "same server": await tools.pid() == before}
"""


@pytest.mark.slow
async def test_a_call_past_the_timeout_is_cancelled_alone_and_the_call_beside_it_answers_on_the_same_connection(
    code_mode: CodeMode,
) -> None:
    """The server is told to cancel `slow` (which lets `until_cancelled` answer); the connection stays open."""
    result = await code_mode.execute(BESIDE_A_TIMEOUT, code_mode.new_state())
    calls = sorted((call.name, call.ok, call.in_flight) for call in result.calls)
    assert calls == [
        ("pid", True, False),
        ("pid", True, False),
        ("slow", False, True),
        ("until_cancelled", True, False),
    ]
    assert result.run.value == {
        "slow": "MCP server 'busy' did not answer `slow` within 2 s, so the call was cancelled; it may still have "
        "taken effect: check before you repeat it.",
        "beside": "a slow call was cancelled",
        "same server": True,
    }


FROZEN = """
before = await tools.pid()
try:
    await tools.freeze(seconds=5)
except ToolError as error:
    frozen = str(error)
return {"frozen": frozen, "new server": await tools.pid() != before}
"""


@pytest.mark.slow
async def test_a_server_that_stops_answering_anything_is_replaced_for_the_next_call(code_mode: CodeMode) -> None:
    """A timed-out call on a server that also misses the probe retires its connection: the next call reconnects."""
    result = await code_mode.execute(FROZEN, code_mode.new_state())
    assert result.run.value == {
        "frozen": "MCP server 'busy' did not answer `freeze` within 2 s, so the call was cancelled; it may still have "
        "taken effect: check before you repeat it.",
        "new server": True,
    }
