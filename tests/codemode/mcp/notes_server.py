"""A streamable-HTTP MCP server for the tests, built with the `mcp` SDK's `MCPServer`: `python notes_server.py [PORT]`.

It binds 127.0.0.1 (port 0 picks a free one), prints the port on stdout, and serves until killed. `slow` prints
`slow started` on stdout when it begins, so a test can kill the server in the middle of a call. `evolve`
changes the tool list (one tool updated, one removed, one added) and publishes `tools/list_changed`.
"""

from __future__ import annotations

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("notes")
notes: list[str] = []


@server.tool()
def add_note(text: str) -> dict[str, int]:
    """Add a note to the notebook."""
    notes.append(text)
    return {"count": len(notes)}


@server.tool()
def list_notes() -> list[str]:
    """List every note in the notebook."""
    return list(notes)


@server.tool()
def fail_note(reason: str) -> str:
    """A note tool that always fails."""
    raise ToolError(f"the notebook refused: {reason}")


@server.tool()
async def slow(seconds: float) -> str:
    """Wait for some seconds, then answer."""
    print("slow started", flush=True)
    await anyio.sleep(seconds)
    return "done"


@server.tool()
async def evolve(ctx: Context) -> str:
    """Change the notebook's tools."""

    def add_note_v2(text: str, tag: str = "") -> dict[str, int]:
        """Add a tagged note to the notebook."""
        notes.append(f"{tag}:{text}")
        return {"count": len(notes)}

    def count_notes() -> int:
        """Count the notes in the notebook."""
        return len(notes)

    server.remove_tool("add_note")
    server.add_tool(add_note_v2, name="add_note")
    server.remove_tool("list_notes")
    server.add_tool(count_notes)
    await ctx.notify_tools_changed()
    return "evolved"


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="error")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
