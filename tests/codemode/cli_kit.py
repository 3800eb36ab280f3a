"""What the tests that drive the command line share: `main` on a thread of its own, a one-tool config, and
`codemode serve --transport http` run as a real process until its port answers.

Imported by name from any test folder (`tests/codemode` is on pytest's `pythonpath`).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from codemode.cli import main

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

WEATHER_PY = '''
from codemode import Catalog

catalog = Catalog()


@catalog.tool
async def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temp_c": 19}
'''
"""A catalog file with one tool, `get_weather`."""


def cli(argv: list[str]) -> int:
    """`codemode.cli.main(argv)` on a thread of its own, where no event loop runs, as in a program.

    The pytest thread may hold the asyncio context of another file's higher-scoped async fixtures, and
    `anyio.run` refuses to start inside it.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(main, argv).result()


def python_config(folder: Path, tools_py: str = WEATHER_PY) -> Path:
    """`folder/codemode.toml` with one `python` source, `folder/tools.py` holding `tools_py`."""
    (folder / "tools.py").write_text(tools_py, encoding="utf-8")
    config = folder / "codemode.toml"
    config.write_text('[[tools]]\npython = "tools.py"\n', encoding="utf-8")
    return config


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(config: Path, *extra: str) -> list[str]:
    """`codemode serve` on `config`, inline, with `extra` options."""
    return [sys.executable, "-m", "codemode", "serve", "--config", str(config), "--isolation", "inline", *extra]


@asynccontextmanager
async def serve_http(config: Path, *extra: str) -> AsyncIterator[str]:
    """`codemode serve --transport http` on a free port; its MCP URL once the port answers, until the block ends."""
    port = free_port()
    command = serve_command(config, "--transport", "http", "--port", str(port), *extra)
    process = await anyio.open_process(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with anyio.fail_after(30):
            while True:  # a subprocess gives no readiness signal here but its open port
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.1)
                    continue
                await stream.aclose()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        with anyio.move_on_after(10, shield=True):
            await process.wait()
        if process.returncode is None:
            process.kill()
        await process.aclose()
