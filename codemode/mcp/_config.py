"""A TOML config's catalog with its MCP servers: the other sources loaded now, the servers on entering."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemode.config import McpHttpSource, McpStdioSource, build_catalog
from codemode.mcp._client import McpSources
from codemode.mcp._servers import HttpServer, McpServer, StdioServer

if TYPE_CHECKING:
    from codemode.config import Config


def sources_from_config(config: Config, *, timeout: float = 60.0, connect_timeout: float = 30.0) -> McpSources:
    """The config's catalog (Python, module and JSONL sources loaded) and its MCP servers, not yet connected.

    Raises:
        ConfigError: A non-MCP source cannot be loaded (see `build_catalog`).

    Example:
        ```python
        async with sources_from_config(load_config("codemode.toml")) as sources:
            async with CodeMode(sources.catalog) as cm:
                ...
        ```
    """
    return McpSources(
        build_catalog(config, skip_mcp=True),
        mcp_servers(config),
        timeout=timeout,
        connect_timeout=connect_timeout,
    )


def mcp_servers(config: Config) -> list[McpServer]:
    """The config's MCP tables as server descriptions, in file order."""
    servers: list[McpServer] = []
    for source in config.sources:
        match source:
            case McpStdioSource():
                servers.append(
                    StdioServer(
                        command=source.command,
                        name=source.name,
                        env=source.env,
                        cwd=source.cwd,
                        approval=source.approval,
                    )
                )
            case McpHttpSource():
                servers.append(
                    HttpServer(url=source.url, name=source.name, headers=source.headers, approval=source.approval)
                )
    return servers
