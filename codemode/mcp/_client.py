"""`McpSources`: MCP servers as sources of a catalog, with the connections they need for the tools' calls.

Each server's tools are registered in the catalog under their own names (prefixed with the server's name only
when they clash with another tool), and each call is sent back under the server's own tool name. Inside
`async with`, one connection a server is opened concurrently with the others, reused by every call, watched
for `tools/list_changed` (the catalog follows, so the next announcement marks updated and removed tools), and
reopened after the server dies or stops answering. Outside it, each call opens a connection of its own: what
a synchronous caller such as `codemode exec` gets.

A server that cannot be reached while sources are added is reported in `failures` and left out, never fatal to
the catalog. One server's connection and calls are `codemode.mcp._link`'s.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Self

import anyio

from codemode._naming import portable_alias
from codemode.catalog._sources import approval_problem, register_fitting
from codemode.errors import CatalogError
from codemode.mcp._link import ServerLink, describe
from codemode.schema._validator import report_problem, schema_problem

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

    from anyio.abc import TaskGroup

    from codemode.catalog import Catalog
    from codemode.mcp._sdk import types
    from codemode.mcp._servers import McpServer
    from codemode.tools import Tool

logger = logging.getLogger("codemode.mcp")


class McpSources:
    """MCP servers whose tools are registered in `catalog`, and the connections that serve their calls.

    Args:
        catalog: Where the servers' tools go.
        servers: The servers, connected concurrently on entering (or by `add`).
        timeout: Seconds a tool call may take before it is cancelled and fails (the connection stays open
            for the other calls, unless the server stopped answering).
        connect_timeout: Seconds to connect to a server and list its tools.

    Example:
        ```python
        catalog = Catalog()
        servers = [StdioServer(command=("uvx", "mcp-server-time")), HttpServer(url="http://127.0.0.1:8000/mcp")]
        async with McpSources(catalog, servers) as sources, CodeMode(catalog) as cm:
            print(sources.failures)  # servers left out, with the reason
            result = await cm.execute('return await tools.get_current_time(timezone="UTC")', cm.new_state())
        ```
    """

    def __init__(
        self,
        catalog: Catalog,
        servers: Iterable[McpServer] = (),
        *,
        timeout: float = 60.0,
        connect_timeout: float = 30.0,
    ) -> None:
        self.catalog = catalog
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.failures: dict[str, str] = {}
        """What was left out, by server name (or `server/tool` for a single tool), with the reason; and the tools
        kept with relaxed argument checks, their schema being valid under no JSON Schema draft (`kept, but ...`)."""
        self._pending = list(servers)
        self._links: list[ServerLink] = []
        self._stack: contextlib.AsyncExitStack | None = None
        self.task_group: TaskGroup | None = None
        """Owns the servers' connections inside `async with`; None outside it, where each call connects anew."""

    @property
    def servers(self) -> dict[str, McpServer]:
        """The servers whose tools are in the catalog, by name."""
        return {link.label: link.server for link in self._links}

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            self.task_group = await stack.enter_async_context(anyio.create_task_group())
            pending, self._pending = self._pending, []
            await self.add(*pending)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every connection (stopping stdio servers); later calls open a connection each."""
        if self.task_group is not None:
            self.task_group.cancel_scope.cancel()  # connection tasks only wait; their own cleanup is bounded
        self.task_group = None
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def add(self, *servers: McpServer) -> list[Tool]:
        """Connect to more servers, concurrently, and register their tools; returns the tools registered.

        A server that cannot be reached is recorded in `failures` (and logged), and its tools are left out.
        Before `async with` (or after it), each server is connected only to list its tools.
        """
        links = [ServerLink(self, server) for server in servers]
        listed: dict[int, list[types.Tool]] = {}

        async def open_one(index: int, link: ServerLink) -> None:
            try:
                with anyio.fail_after(self.connect_timeout):
                    listed[index] = await link.open(self.task_group)
            except Exception as error:  # noqa: BLE001  # any failure of one server leaves the others working
                self._fail(link.label, f"cannot connect: {describe(error)}")

        async with anyio.create_task_group() as group:
            for index, link in enumerate(links):
                group.start_soon(open_one, index, link)
        batch = [
            (link, listed[index])
            for index, link in enumerate(links)
            if index in listed and self._guarded(link, listed[index])
        ]
        self._links += [link for link, _ in batch]
        return self._register(batch)

    def _guarded(self, link: ServerLink, listed: list[types.Tool]) -> bool:
        """Whether the server's `approval` patterns each match one of its tools; if not, it is left out."""
        label = link.label
        # last, the name `tools.` shows it under (a clash with another server's adds `label.`, matched too)
        names = [
            (t.name, f"{label}.{t.name}", portable_alias(f"{label}.{t.name}"), portable_alias(t.name)) for t in listed
        ]
        problem = approval_problem(link.server.approval, names)
        if problem is not None:  # a safety rule that protects nothing: none of the server's tools is registered
            self._fail(label, f"{problem}; none of the server's tools is registered")
        return problem is None

    def _register(self, batch: list[tuple[ServerLink, list[types.Tool]]]) -> list[Tool]:
        """Add the batch's tools to the catalog, prefixed where names clash; one change when all fit."""
        named = self._named(batch)
        links = {tool.name: link for link, tool in named}

        def misfit(tool: Tool, error: CatalogError) -> None:
            link = links[tool.name]
            self._fail(f"{link.label}/{link.names.pop(tool.name)}", str(error), what="tool")

        fitted = register_fitting(self.catalog, [tool for _, tool in named], misfit)
        for tool in fitted:
            problem = schema_problem(tool.parameters)
            if problem is not None:  # kept: a tool is never lost for its schema
                link = links[tool.name]
                self.failures[f"{link.label}/{link.names[tool.name]}"] = (
                    f"kept, but its input schema is valid under no JSON Schema draft ({problem}); its arguments "
                    "are checked only where the schema can be read"
                )
                report_problem(tool.name, problem)
        return fitted

    def _named(self, batch: list[tuple[ServerLink, list[types.Tool]]]) -> list[tuple[ServerLink, Tool]]:
        owners: dict[str, set[int]] = {}
        for index, (_, listed) in enumerate(batch):
            for mcp_tool in listed:
                for key in (mcp_tool.name, portable_alias(mcp_tool.name)):
                    owners.setdefault(key, set()).add(index)
        named = []
        for index, (link, listed) in enumerate(batch):
            for mcp_tool in listed:
                keys = (mcp_tool.name, portable_alias(mcp_tool.name))
                clash = any(owners[key] != {index} or key in self.catalog for key in keys)
                name = f"{link.label}.{mcp_tool.name}" if clash else mcp_tool.name
                link.names[name] = mcp_tool.name
                named.append((link, link.tool(mcp_tool, name)))
        return named

    def sync(self, link: ServerLink, listed: list[types.Tool]) -> None:
        """Bring the catalog in line with a server's new tool list: replace, remove and add."""
        by_server_name = {server_name: name for name, server_name in link.names.items()}
        fresh = {mcp_tool.name: mcp_tool for mcp_tool in listed}
        for server_name, name in by_server_name.items():
            if server_name not in fresh:
                del link.names[name]
                if name in self.catalog:
                    self.catalog.remove(name)
        for server_name, mcp_tool in fresh.items():
            known = by_server_name.get(server_name)
            old = self.catalog.get(known) if known is not None else None
            if known is None or old is None:
                continue
            new = link.tool(mcp_tool, known)
            if (old.description, old.parameters, old.returns) != (new.description, new.parameters, new.returns):
                try:
                    self.catalog.replace(new)
                except CatalogError as error:
                    self._fail(f"{link.label}/{server_name}", str(error), what="tool")
        added = [mcp_tool for server_name, mcp_tool in fresh.items() if server_name not in by_server_name]
        if added:
            self._register([(link, added)])

    def _fail(self, key: str, message: str, *, what: str = "server") -> None:
        self.failures[key] = message
        logger.warning("MCP %s %r left out: %s", what, key, message)
