"""A call to an MCP server that is already gone says it was not sent, so the model knows nothing happened."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp.client")


from mcp_helpers import notes_server

from codemode import Catalog, CodeMode
from codemode.mcp import HttpServer, McpSources


@pytest.mark.slow
async def test_a_call_to_a_server_that_is_gone_says_it_was_not_sent() -> None:
    """A server stopped after its tools were listed: the call cannot connect, and the model reads that it never ran."""
    catalog = Catalog()
    async with notes_server() as server:
        await McpSources(catalog, timeout=5, connect_timeout=5).add(HttpServer(url=server.url, name="notes"))
        server.process.kill()
        await server.process.wait()
        async with CodeMode(catalog, isolation="inline") as cm:
            result = await cm.execute('return await tools.add_note(text="x")', cm.new_state())

    assert result.run.error is not None
    assert [call.in_flight for call in result.calls] == [False]
    message = result.run.error.message
    assert message.startswith("ToolError: cannot reach MCP server 'notes' (")  # then the transport's own words
    assert message.endswith(
        "), so `add_note` was not sent and did not run. Try again later, or use another tool. (line 1)"
    )
