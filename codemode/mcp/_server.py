"""`codemode serve`: the one `code` tool as an MCP server, over stdio or streamable HTTP.

The server lists exactly one tool, `code`, with the fixed definition of `CodeMode.tool`. A call's result holds
the printed output and returned value (one text block) and, when the run found tools the conversation has not
seen, their announcement (a second text block): the MCP host owns the history, so announcements travel in the
tool result. A failing script is an `isError` result with the short message, never a protocol error.

Discovery state (which stubs the conversation has seen) lives per MCP session: the stdio connection, or an
HTTP session of the 2025 handshake (`Mcp-Session-Id`); requests of the sessionless 2026-07-28 protocol over
HTTP belong to no session. Every result also carries the state in `_meta["codemode/state"]`
(`DiscoveryState.to_json()`), and a request may send it back the same way, or send the texts of earlier `code`
results in `_meta["codemode/history"]`; such a request is served from that state whatever the session. In
stateless HTTP mode, where each request may reach another replica behind a load balancer, that is the only
state: a client that sends none gets every discovered tool announced again, which is redundant but never
leaves the model without a definition.

A run that stops at a call needing approval asks the person through MCP elicitation (over the session, or as an
`InputRequiredResult` for 2026-07-28 clients), or answers with how to decide it (`codemode.mcp._approvals`); the
signed record of the paused run travels in the same state.

Over HTTP, who may call at all is `codemode.mcp._auth`'s (bearer tokens, Host and Origin); the caller a request
authenticated as runs the code (`CodeMode.execute(..., caller=...)`: hooks, log, traces, and the paused run's
record see it), and `codemode.mcp._quota` counts their runs.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

from codemode.config._serve import ServeSettings
from codemode.discovery import DiscoveryState
from codemode.errors import ApprovalError
from codemode.mcp._approvals import (
    PENDING_META_KEY,
    DecisionError,
    fallback_text,
    pending_meta,
    round_state,
    run_code,
)
from codemode.mcp._auth import (
    BearerVerifier,
    auth_settings,
    caller_of,
    check_exposure,
    key_metadata,
    point_401_at_metadata,
    resource_url,
    transport_security,
)
from codemode.mcp._quota import QuotaError, RunQuota
from codemode.mcp._sdk import MCPError, Server, stdio_server, types, uvicorn

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from starlette.applications import Starlette

    from codemode import PendingApproval
    from codemode.code_mode import CodeMode

logger = logging.getLogger("codemode.mcp.server")

STATE_META_KEY: Final = "codemode/state"
"""`_meta` key of the discovery state (`DiscoveryState.to_json()`), in results and optionally in requests."""
HISTORY_META_KEY: Final = "codemode/history"
"""`_meta` key of a request's earlier `code` result texts, to rebuild the discovery state from."""
MAX_SESSIONS: Final = 10_000
"""HTTP sessions whose discovery state is kept; the least recently used are forgotten (and re-announced)."""


def build_server(
    cm: CodeMode, *, stateless: bool = False, name: str = "codemode", quota: RunQuota | None = None
) -> Server[Any]:
    """An MCP server whose one tool is `cm`'s `code` tool.

    Args:
        cm: The code mode to run calls in; the caller enters it (it owns the sandbox).
        stateless: Keep no state between requests: only what a request's `_meta` carries.
        name: The server's name, reported to clients.
        quota: Runs in flight and per minute allowed to each caller; over it, a call is refused with a tool error.
    """
    states: OrderedDict[str, DiscoveryState] = OrderedDict()
    quota = quota or RunQuota()
    code_tool = types.Tool(name=cm.tool.name, description=cm.tool.description, input_schema=cm.tool.input_schema)

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(tools=[code_tool])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        if params.name != code_tool.name:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool {params.name!r}: this server has only `code`.")
        code = (params.arguments or {}).get("code")
        state = round_state(params) or _state_from_meta(params.meta)
        key = None if stateless else _session_key(ctx)
        if key is not None:
            state = _remember(states, key, state)
        state = state or DiscoveryState()
        if not isinstance(code, str):
            return _result([f"`code` must be a string of Python source, got {type(code).__name__}."], state, True)
        caller = caller_of(ctx.request)
        try:
            with quota.admit(None if caller is None else caller.principal):
                result = await run_code(cm, ctx, code, state, params, caller=caller)
        except (DecisionError, ApprovalError, QuotaError) as error:
            return _result([str(error)], state, True)
        except Exception as error:  # the MCP handler boundary: log it, and tell the model it was not its fault
            logger.exception("`code` failed inside codemode")
            return _result([f"internal error in codemode ({type(error).__name__}); try again."], state, True)
        if isinstance(result, types.InputRequiredResult):
            return result
        text = fallback_text(result, result.pending) if result.pending is not None else result.text
        texts = [text, *([result.announcement] if result.announcement else [])]
        return _result(texts, state, not result.ok, pending=result.pending)

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(cm: CodeMode, *, stateless: bool = False) -> None:
    """Serve `cm`'s `code` tool on this process's stdin and stdout until the client closes them."""
    server = build_server(cm, stateless=stateless)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(
    cm: CodeMode,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    stateless: bool = False,
    path: str = "/mcp",
    settings: ServeSettings | None = None,
    allow_unauthenticated: bool = False,
) -> None:
    """Serve `cm`'s `code` tool over streamable HTTP at `http://host:port/mcp` until interrupted.

    See `http_app` for what is checked; `settings` holds the credentials, allowed hosts and origins, and limits.

    Raises:
        ConfigError: `host` is reachable from other machines, no credential is configured, and
            `allow_unauthenticated` is false.
    """
    app = http_app(
        cm,
        host=host,
        port=port,
        stateless=stateless,
        path=path,
        settings=settings,
        allow_unauthenticated=allow_unauthenticated,
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def http_app(
    cm: CodeMode,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    stateless: bool = False,
    path: str = "/mcp",
    settings: ServeSettings | None = None,
    allow_unauthenticated: bool = False,
) -> Starlette:
    """The ASGI app of `serve_http`, to run under a server of your own.

    Every request's Host and Origin are checked (the loopback names, the listening address and
    `settings.allowed_hosts` / `allowed_origins`; others get `421` / `403`). With API keys or a JWT issuer in
    `settings`, a request without a valid bearer token gets `401` with `WWW-Authenticate`, and the Protected
    Resource Metadata (RFC 9728) is published at `/.well-known/oauth-protected-resource{path}`.

    Args:
        cm: The code mode to run calls in; the caller enters it.
        host: The address the app will listen on (its checks depend on it).
        port: The port it will listen on (for the resource URL, unless `settings.resource_url` names it).
        stateless: Keep no state between requests.
        path: Where the MCP endpoint is.
        settings: Credentials, allowed hosts and origins, and per-caller limits; none by default.
        allow_unauthenticated: Serve a non-loopback `host` without credentials (only behind something that
            authenticates for you).

    Raises:
        ConfigError: `host` is reachable from other machines, no credential is configured, and
            `allow_unauthenticated` is false.
    """
    settings = settings or ServeSettings()
    check_exposure(host, settings, allow_unauthenticated=allow_unauthenticated)
    quota = RunQuota(max_in_flight=settings.max_runs_in_flight, per_minute=settings.max_runs_per_minute)
    server = build_server(cm, stateless=stateless, quota=quota)
    security = transport_security(host, settings)
    if not settings.authenticated:
        return server.streamable_http_app(
            streamable_http_path=path, stateless_http=stateless, host=host, transport_security=security
        )
    resource = resource_url(host, port, path, settings)
    app = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=stateless,
        host=host,
        transport_security=security,
        auth=auth_settings(settings, resource),
        token_verifier=BearerVerifier(settings),
        custom_starlette_routes=None if settings.jwt is not None else [key_metadata(resource)],
    )
    if settings.jwt is None:
        point_401_at_metadata(app, resource)
    return app


def _session_key(ctx: ServerRequestContext[Any]) -> str | None:
    """The session a request belongs to: the stdio connection, an HTTP `Mcp-Session-Id`, or none."""
    if ctx.request is None:
        return "stdio"  # one process serves one stdio connection
    headers = getattr(ctx.request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    return f"http:{session_id}" if isinstance(session_id, str) and session_id else None


def _remember(states: OrderedDict[str, DiscoveryState], key: str, given: DiscoveryState | None) -> DiscoveryState:
    """The session's state (`given` replaces it), most recent last; the oldest sessions are forgotten."""
    state = given or states.pop(key, None) or DiscoveryState()
    states.pop(key, None)
    states[key] = state
    while len(states) > MAX_SESSIONS:
        states.popitem(last=False)
    return state


def _state_from_meta(meta: object) -> DiscoveryState | None:
    """The state a request carries in `_meta`, if any (a malformed one counts as none)."""
    if not isinstance(meta, dict):
        return None
    state = meta.get(STATE_META_KEY)
    if isinstance(state, dict):
        try:
            return DiscoveryState.from_json(state)
        except (TypeError, ValueError):
            logger.warning("ignored a malformed %r in a request's `_meta`", STATE_META_KEY)
    history = meta.get(HISTORY_META_KEY)
    if isinstance(history, list):
        return DiscoveryState.from_history(text for text in history if isinstance(text, str))
    return None


def _result(
    texts: list[str], state: DiscoveryState, is_error: bool, *, pending: PendingApproval | None = None
) -> types.CallToolResult:
    meta: dict[str, Any] = {STATE_META_KEY: state.to_json()}
    if pending is not None:  # the id a decision names, as data: a client need not read it from the text
        meta[PENDING_META_KEY] = pending_meta(pending)
    return types.CallToolResult(content=[types.TextContent(text=text) for text in texts], is_error=is_error, _meta=meta)
