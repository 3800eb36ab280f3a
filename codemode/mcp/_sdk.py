"""The one place codemode imports the `mcp` SDK (the `mcp` extra); the rest of `codemode.mcp` imports from here.

Keeping every SDK name behind this module means a missing extra fails in one spot, with one message that
says how to install it, and an SDK upgrade has one list of names to check.
"""

from __future__ import annotations

try:
    import mcp_types as types
    import uvicorn
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `mcp` extra: pip install "codemode[mcp]"') from e

__all__ = [
    "MODERN_PROTOCOL_VERSIONS",
    "Client",
    "ListenNotSupportedError",
    "MCPError",
    "Server",
    "StdioServerParameters",
    "SubscriptionLost",
    "stdio_server",
    "streamable_http_client",
    "types",
    "uvicorn",
]
