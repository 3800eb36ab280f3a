"""The one place codemode imports the `mcp` SDK (the `mcp` extra); the rest of `codemode.mcp` imports from here.

Keeping every SDK name behind this module means a missing extra fails in one spot, with one message that
says how to install it, and an SDK upgrade has one list of names to check.
"""

from __future__ import annotations

try:
    import jwt
    import mcp_types as types
    import uvicorn
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.routes import build_resource_metadata_url
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from starlette.responses import JSONResponse
    from starlette.routing import Route
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `mcp` extra: pip install "codemode[mcp]"') from e

__all__ = [
    "MODERN_PROTOCOL_VERSIONS",
    "AccessToken",
    "AuthSettings",
    "AuthenticatedUser",
    "Client",
    "JSONResponse",
    "ListenNotSupportedError",
    "MCPError",
    "RequireAuthMiddleware",
    "Route",
    "Server",
    "StdioServerParameters",
    "SubscriptionLost",
    "TransportSecuritySettings",
    "build_resource_metadata_url",
    "jwt",
    "stdio_server",
    "streamable_http_client",
    "types",
    "uvicorn",
]
