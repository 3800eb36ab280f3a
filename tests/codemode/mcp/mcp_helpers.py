"""Helpers for the MCP tests: the test HTTP server (`notes_server.py`) run in a subprocess, and the stdio one's path."""

from __future__ import annotations

import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import ByteReceiveStream, Process

NOTES_SERVER = Path(__file__).with_name("notes_server.py")
PAGED_SERVER = Path(__file__).with_name("paged_server.py")
BUSY_SERVER = Path(__file__).with_name("busy_server.py")
WILD_SERVER = Path(__file__).with_name("wild_server.py")
JSON_TEXT_SERVER = Path(__file__).with_name("json_text_server.py")


class NotesServer:
    """The test HTTP server's process, its port, and the lines it prints."""

    def __init__(self, process: Process, port: int, lines: AsyncIterator[str]) -> None:
        self.process = process
        self.port = port
        self.lines = lines

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@asynccontextmanager
async def notes_server(port: int = 0) -> AsyncIterator[NotesServer]:
    """Run `notes_server.py` until the block ends (killed then; every wait bounded)."""
    process = await anyio.open_process([sys.executable, str(NOTES_SERVER), str(port)], stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        lines = _lines(process.stdout)
        with anyio.fail_after(20):
            bound = int(await anext(lines))
        yield NotesServer(process, bound, lines)
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.move_on_after(5, shield=True):
            await process.wait()
        await process.aclose()


async def _lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode()
