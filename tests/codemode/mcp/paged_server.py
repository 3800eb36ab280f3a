"""A stdio MCP server for the tests, built on the `mcp` SDK's low-level `Server`: `python paged_server.py [options]`.

It lists its six tools two a page (three pages of `tools/list`, the cursor being the next offset). `pid` answers
the server's process id; `slow` first sends that id in a UDP datagram to `127.0.0.1:PORT` (with `--report PORT`),
so a test can kill the server in the middle of a call; `alpha`...`delta` answer their own names.
"""

from __future__ import annotations

import argparse
import os
import socket
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

PAGE_SIZE = 2
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name="pid", description="The server's process id.", input_schema=NO_ARGUMENTS),
    types.Tool(
        name="slow",
        description="Wait for some seconds, then answer.",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
    ),
    *(
        types.Tool(name=name, description=f"Answer {name!r}.", input_schema=NO_ARGUMENTS)
        for name in ("alpha", "beta", "gamma", "delta")
    ),
]


def build(*, report_port: int | None) -> Server[Any]:
    """The server: paged `tools/list`, and the tools' calls."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE_SIZE
        return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "pid":
            return text(str(os.getpid()))
        if params.name == "slow":
            if report_port is not None:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                    sock.sendto(str(os.getpid()).encode(), ("127.0.0.1", report_port))
            await anyio.sleep(float(arguments["seconds"]))
            return text("done")
        return text(params.name)

    return Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", type=int, default=None)
    args = parser.parse_args()
    anyio.run(serve, build(report_port=args.report))


if __name__ == "__main__":
    main()
