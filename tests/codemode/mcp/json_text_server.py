"""A stdio MCP server whose tools answer as most servers do, with one `TextContent` and no `structuredContent`.

Built on the `mcp` SDK's low-level `Server` (no `outputSchema`, as the GitHub MCP server lists its tools):
`get_user` answers with a JSON object's text, `list_ids` with a JSON array's, `greet` with plain text, `count`
with a number's text and `broken` with text that starts like JSON but is not; `car.rental`, `car_rental` and
`list-files` answer with their own names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

_ANSWERS = {
    "get_user": json.dumps({"id": "42", "name": "Ada", "roles": ["admin"]}, indent=2),
    "list_ids": "[1, 2, 3]",
    "greet": "hello there",
    "count": "42",
    "broken": "{not json",
    "car.rental": "car.rental",  # names that differ only in punctuation, as BFCL's and some servers' do
    "car_rental": "car_rental",
    "list-files": "list-files",
}
TOOLS = [
    types.Tool(name=name, description=f"The {name} tool.", input_schema={"type": "object", "properties": {}})
    for name in _ANSWERS
]


def build() -> Server[Any]:
    """The server: its tools, each answering with its fixed text."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=_ANSWERS[params.name])])

    return Server("json-text", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve, build())
