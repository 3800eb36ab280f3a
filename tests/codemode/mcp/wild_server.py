"""A stdio MCP server for the tests whose tools publish schemas as servers in the wild do: `python wild_server.py`.

Built on the `mcp` SDK's low-level `Server`, which sends each `inputSchema` exactly as written: a zod-to-json-schema
draft-07 schema, an older SDK's draft-04 booleans, `definitions` with `$ref` and `id`, OpenAPI `nullable`, and one
schema that no draft accepts (`../wild_schemas.json`). Every tool answers with the JSON of the arguments it was given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

SCHEMAS: dict[str, dict[str, Any]] = json.loads(Path(__file__).parents[1].joinpath("wild_schemas.json").read_text())
"""The tools' input schemas by tool name, shared with `test_wild_schemas.py`."""
TOOLS = [
    types.Tool(name=name, description=f"The {name} tool.", input_schema=schema) for name, schema in SCHEMAS.items()
]


def build() -> Server[Any]:
    """The server: its tools, and calls that echo their arguments."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = json.dumps(params.arguments or {}, sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(text=f"{params.name} {arguments}")])

    return Server("wild", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve, build())
