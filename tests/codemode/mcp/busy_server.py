"""A stdio MCP server for the timeout tests, on the `mcp` SDK's low-level `Server`: `python busy_server.py`.

`slow` sleeps (a cancellation from the client interrupts it, and is remembered); `until_cancelled` answers once a
`slow` call has been cancelled, so a test can see that the server was told of that one request; `freeze` blocks
the server's whole event loop (a server that stops answering anything); `pid` answers the process id.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

SECONDS: dict[str, Any] = {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}
TOOLS = [
    types.Tool(name="slow", description="Wait for some seconds, then answer.", input_schema=SECONDS),
    types.Tool(
        name="until_cancelled",
        description="Answer once a `slow` call has been cancelled.",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(name="freeze", description="Block the whole server for some seconds.", input_schema=SECONDS),
    types.Tool(name="pid", description="The server's process id.", input_schema={"type": "object", "properties": {}}),
]


def build() -> Server[Any]:
    """The server and its tools' calls."""
    cancelled = anyio.Event()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "slow":
            try:
                await anyio.sleep(float(arguments["seconds"]))
            except anyio.get_cancelled_exc_class():
                cancelled.set()
                raise
            return text("done")
        if params.name == "until_cancelled":
            await cancelled.wait()
            return text("a slow call was cancelled")
        if params.name == "freeze":
            time.sleep(float(arguments["seconds"]))  # noqa: ASYNC251  # the point: a server that answers nothing
            return text("thawed")
        return text(str(os.getpid()))

    return Server("busy", on_list_tools=list_tools, on_call_tool=call_tool)


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve, build())
