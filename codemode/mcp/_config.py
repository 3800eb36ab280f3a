"""A TOML config's catalog with its MCP servers: the other sources loaded now, the servers on entering."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemode.config import McpHttpSource, McpStdioSource, build_catalog, expand_env
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
    """The config's MCP tables as server descriptions, in file order.

    `${VAR}` and `${VAR:-default}` in `env` values, `headers` values and `mcp_url` are read from the environment,
    so tokens stay out of the file.

    Raises:
        ConfigError: A variable without a default is not set.
    """
    servers: list[McpServer] = []
    for source in config.sources:
        where = f"{config.path}: {source.table}"
        match source:
            case McpStdioSource():
                env = {k: expand_env(v, where) for k, v in source.env.items()}
                servers.append(
                    StdioServer(
                        command=source.command, name=source.name, env=env, cwd=source.cwd, approval=source.approval
                    )
                )
            case McpHttpSource():
                headers = {k: expand_env(v, where) for k, v in source.headers.items()}
                url = expand_env(source.url, where)
                servers.append(HttpServer(url=url, name=source.name, headers=headers, approval=source.approval))
    return servers
