"""Where an MCP server is (`StdioServer`, `HttpServer`) and how to open one connection to it.

A server description is plain, frozen data: it can come from Python or from a TOML config, and it opens any
number of connections over its life (a dead server is reconnected), each one an `mcp.Client` owned by the
`async with` that opened it.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit

import httpx2

from codemode.mcp._sdk import Client, StdioServerParameters, streamable_http_client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping
    from pathlib import Path

    from mcp.client.session import MessageHandlerFnT

_RUNNERS = frozenset({"uvx", "npx", "pipx", "uv", "bunx", "bun", "deno", "node", "docker", "pnpm", "yarn"})
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?(\.exe)?$")


@dataclass(frozen=True, kw_only=True)
class StdioServer:
    """An MCP server started as a subprocess and spoken to over its stdin and stdout.

    Example:
        ```python
        StdioServer(command=["uvx", "mcp-server-time"], name="time")
        ```
    """

    command: tuple[str, ...]
    """The program and its arguments."""
    name: str | None = None
    """The server's name, used to prefix its tools when their names clash; by default from the command."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables, over the SDK's safe defaults (`PATH`, `HOME`, ...)."""
    cwd: str | Path | None = None
    """The server's working directory."""
    approval: tuple[str, ...] = ()
    """Patterns (shell-style, `*` for all) of the server's tool names whose calls need a person's approval."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "command", tuple(self.command))
        if not self.command or not all(isinstance(part, str) and part for part in self.command):
            raise ValueError(f"`command` must be a non-empty list of strings, got {self.command!r}")

    @property
    def label(self) -> str:
        """The name given, or one made from the command (`uvx mcp-server-time` -> `mcp-server-time`)."""
        return self.name or _name_from_command(self.command)


@dataclass(frozen=True, kw_only=True)
class HttpServer:
    """An MCP server reached over streamable HTTP.

    Example:
        ```python
        HttpServer(url="https://example.com/mcp", headers={"Authorization": "Bearer ..."}, name="example")
        ```
    """

    url: str
    """The server's MCP endpoint."""
    name: str | None = None
    """The server's name, used to prefix its tools when their names clash; by default the URL's host."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent with every request."""
    approval: tuple[str, ...] = ()
    """Patterns (shell-style, `*` for all) of the server's tool names whose calls need a person's approval."""

    @property
    def label(self) -> str:
        """The name given, or the URL's host name."""
        return self.name or urlsplit(self.url).hostname or self.url


McpServer: TypeAlias = StdioServer | HttpServer


@contextlib.asynccontextmanager
async def connect(server: McpServer, *, message_handler: MessageHandlerFnT | None = None) -> AsyncIterator[Client]:
    """One initialized connection to `server`, closed (and a stdio server stopped) on exit."""
    match server:
        case StdioServer():
            params = StdioServerParameters(
                command=server.command[0],
                args=list(server.command[1:]),
                env=dict(server.env) or None,
                cwd=server.cwd,
            )
            async with Client(params, cache=None, message_handler=message_handler) as client:
                yield client
        case HttpServer():
            # The SDK's recommended timeouts: a server may hold a response stream open for minutes.
            timeout = httpx2.Timeout(30.0, read=300.0)
            async with (
                httpx2.AsyncClient(headers=dict(server.headers), timeout=timeout) as http,
                Client(
                    streamable_http_client(server.url, http_client=http), cache=None, message_handler=message_handler
                ) as client,
            ):
                yield client


def _name_from_command(command: tuple[str, ...]) -> str:
    """A server name from its command: the module after `-m`, the package a runner starts, or the program."""
    program = os.path.basename(command[0])
    args = list(command[1:])
    if _PYTHON.match(program) and "-m" in args[:-1]:
        return args[args.index("-m") + 1]
    if program in _RUNNERS or _PYTHON.match(program):
        for arg in args:
            if not arg.startswith("-") and arg not in ("run", "exec", "dlx", "x"):
                return _strip_version(os.path.basename(arg.rstrip("/")))
    return os.path.splitext(program)[0]


def _strip_version(name: str) -> str:
    """`@scope/pkg@1.2` and `pkg==1.2` lose their version; a script loses its extension."""
    name = re.split(r"==|(?<!^)@", name)[0]
    return os.path.splitext(name)[0] if name.endswith((".py", ".js", ".mjs", ".ts")) else name
