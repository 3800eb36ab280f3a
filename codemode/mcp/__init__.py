"""MCP both ways: servers as catalog sources (`McpSources`), and the `code` tool served over MCP (`serve_*`).

Needs the `mcp` extra (`pip install "codemode[mcp]"`); `import codemode` never imports it.

Example:
    ```python
    from codemode import Catalog, CodeMode
    from codemode.mcp import McpSources, StdioServer

    catalog = Catalog()
    async with McpSources(catalog, [StdioServer(command=("uvx", "mcp-server-time"))]) as sources:
        async with CodeMode(catalog) as cm:
            result = await cm.execute('return await tools.get_current_time(timezone="UTC")', cm.new_state())
    ```
"""

from __future__ import annotations

from codemode.config._serve import ApiKey as ApiKey
from codemode.config._serve import JwtIssuer as JwtIssuer
from codemode.config._serve import ServeSettings as ServeSettings
from codemode.mcp._client import McpSources as McpSources
from codemode.mcp._config import mcp_servers as mcp_servers
from codemode.mcp._config import sources_from_config as sources_from_config
from codemode.mcp._server import HISTORY_META_KEY as HISTORY_META_KEY
from codemode.mcp._server import STATE_META_KEY as STATE_META_KEY
from codemode.mcp._server import build_server as build_server
from codemode.mcp._server import http_app as http_app
from codemode.mcp._server import serve_http as serve_http
from codemode.mcp._server import serve_stdio as serve_stdio
from codemode.mcp._servers import HttpServer as HttpServer
from codemode.mcp._servers import McpServer as McpServer
from codemode.mcp._servers import StdioServer as StdioServer

__all__ = [
    "HISTORY_META_KEY",
    "STATE_META_KEY",
    "ApiKey",
    "HttpServer",
    "JwtIssuer",
    "McpServer",
    "McpSources",
    "ServeSettings",
    "StdioServer",
    "build_server",
    "http_app",
    "mcp_servers",
    "serve_http",
    "serve_stdio",
    "sources_from_config",
]
