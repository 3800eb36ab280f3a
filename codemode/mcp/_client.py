"""`McpSources`: MCP servers as sources of a catalog, with the connections they need for the tools' calls.

Each server's tools are registered in the catalog under their own names (prefixed with the server's name only
when they clash with another tool), and each call is sent back under the server's own tool name. Inside
`async with`, one connection a server is opened concurrently with the others, reused by every call, watched
for `tools/list_changed` (the catalog follows, so the next announcement marks updated and removed tools), and
reopened after the server dies or stops answering. Outside it, each call opens a connection of its own: what
a synchronous caller such as `codemode exec` gets.

Connection and call failures are the model's to read (`ToolError` with a message); a server that cannot be
reached while sources are added is reported in `failures` and left out, never fatal to the catalog.
"""

from __future__ import annotations

import contextlib
import logging
import math
from typing import TYPE_CHECKING, Any, Self

import anyio

from codemode._jsonschema import report_problem, schema_problem
from codemode._naming import portable_alias
from codemode.config import needs_approval
from codemode.errors import CatalogError, tool_error
from codemode.mcp._sdk import Client, ListenNotSupportedError, MCPError, SubscriptionLost, types
from codemode.mcp._servers import McpServer, connect
from codemode.tools import Tool

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable
    from types import TracebackType

    from anyio.abc import TaskGroup, TaskStatus
    from anyio.streams.memory import MemoryObjectReceiveStream

    from codemode._json import JsonObject, JsonValue
    from codemode.catalog import Catalog

logger = logging.getLogger("codemode.mcp")

_MAX_PAGES = 1000
"""Pages of `tools/list` read before giving up on a server that never stops paginating."""


class McpSources:
    """MCP servers whose tools are registered in `catalog`, and the connections that serve their calls.

    Args:
        catalog: Where the servers' tools go.
        servers: The servers, connected concurrently on entering (or by `add`).
        timeout: Seconds a tool call may take before it fails and the server's connection is reopened.
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
        self._links: list[_Link] = []
        self._stack: contextlib.AsyncExitStack | None = None
        self._task_group: TaskGroup | None = None

    @property
    def servers(self) -> dict[str, McpServer]:
        """The servers whose tools are in the catalog, by name."""
        return {link.label: link.server for link in self._links}

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            self._task_group = await stack.enter_async_context(anyio.create_task_group())
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
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()  # connection tasks only wait; their own cleanup is bounded
        self._task_group = None
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def add(self, *servers: McpServer) -> list[Tool]:
        """Connect to more servers, concurrently, and register their tools; returns the tools registered.

        A server that cannot be reached is recorded in `failures` (and logged), and its tools are left out.
        Before `async with` (or after it), each server is connected only to list its tools.
        """
        links = [_Link(self, server) for server in servers]
        listed: dict[int, list[types.Tool]] = {}

        async def open_one(index: int, link: _Link) -> None:
            try:
                with anyio.fail_after(self.connect_timeout):
                    listed[index] = await link.open(self._task_group)
            except Exception as error:  # noqa: BLE001  # any failure of one server leaves the others working
                self._fail(link.label, f"cannot connect: {describe(error)}")

        async with anyio.create_task_group() as group:
            for index, link in enumerate(links):
                group.start_soon(open_one, index, link)
        batch = [(link, listed[index]) for index, link in enumerate(links) if index in listed]
        self._links += [link for link, _ in batch]
        return self._register(batch)

    def _register(self, batch: list[tuple[_Link, list[types.Tool]]]) -> list[Tool]:
        """Add the batch's tools to the catalog, prefixed where names clash; one change when all fit."""
        named = self._named(batch)
        try:
            self.catalog.extend(tool for _, tool in named)
        except CatalogError:
            registered = []
            for link, tool in named:  # find the ones that do not fit, and register the rest
                try:
                    self.catalog.extend([tool])
                    registered.append((link, tool))
                except CatalogError as error:
                    self._fail(f"{link.label}/{link.names.pop(tool.name)}", str(error))
            named = registered
        for link, tool in named:
            problem = schema_problem(tool.parameters)
            if problem is not None:  # kept: a tool is never lost for its schema
                key = f"{link.label}/{link.names[tool.name]}"
                self.failures[key] = (
                    f"kept, but its input schema is valid under no JSON Schema draft ({problem}); its arguments "
                    "are checked only where the schema can be read"
                )
                report_problem(tool.name, problem)
        return [tool for _, tool in named]

    def _named(self, batch: list[tuple[_Link, list[types.Tool]]]) -> list[tuple[_Link, Tool]]:
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

    def sync(self, link: _Link, listed: list[types.Tool]) -> None:
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
                    self._fail(f"{link.label}/{server_name}", str(error))
        added = [mcp_tool for server_name, mcp_tool in fresh.items() if server_name not in by_server_name]
        if added:
            self._register([(link, added)])

    def _fail(self, key: str, message: str) -> None:
        self.failures[key] = message
        logger.warning("MCP server %r left out: %s", key, message)


class _Link:
    """One server: its tools' names, and (inside `async with`) the connection that serves their calls."""

    def __init__(self, owner: McpSources, server: McpServer) -> None:
        self.owner = owner
        self.server = server
        self.label = server.label
        self.names: dict[str, str] = {}
        """Catalog name -> the server's own tool name."""
        self.client: Client | None = None
        self._scope: anyio.CancelScope | None = None
        self._lock = anyio.Lock()

    def tool(self, mcp_tool: types.Tool, name: str) -> Tool:
        """The catalog's definition of one of this server's tools, under `name`."""
        server_name = mcp_tool.name

        async def call(**arguments: JsonValue) -> JsonValue:
            return await self.call(server_name, arguments)

        return Tool(
            name=name,
            description=mcp_tool.description or mcp_tool.title or "",
            parameters=mcp_tool.input_schema,
            returns=mcp_tool.output_schema,
            handler=call,
            approval=needs_approval(self.server.approval, server_name),
        )

    async def open(self, task_group: TaskGroup | None) -> list[types.Tool]:
        """Connect and list the tools; the connection stays open in `task_group`, if there is one."""
        if task_group is None:
            async with connect(self.server) as client:
                return await list_tools(client)
        client = await task_group.start(self._run)
        return await list_tools(client)

    async def call(self, tool_name: str, arguments: JsonObject) -> JsonValue:
        """Call one of the server's tools; every failure is a `ToolError` for the model."""
        timeout = self.owner.timeout
        if self.owner._task_group is None:
            try:
                with anyio.fail_after(self.owner.connect_timeout + timeout):
                    async with connect(self.server) as client:
                        return result_json(await client.call_tool(tool_name, arguments))
            except TimeoutError:
                raise tool_error(self._timed_out(tool_name)) from None
            except MCPError as error:
                raise tool_error(self._refused(error)) from None
        client = await self._connected()
        try:
            with anyio.fail_after(timeout):
                result = await client.call_tool(tool_name, arguments)
        except TimeoutError:
            self._drop(client)
            raise tool_error(self._timed_out(tool_name)) from None
        except MCPError as error:
            if error.code != types.CONNECTION_CLOSED:
                raise tool_error(self._refused(error)) from None
            self._drop(client)
            raise tool_error(self._lost(tool_name, error)) from None
        except Exception as error:  # noqa: BLE001  # a broken transport fails in many ways; the model reads which
            self._drop(client)
            raise tool_error(self._lost(tool_name, error)) from None
        return result_json(result)

    async def _connected(self) -> Client:
        async with self._lock:  # one reconnect for many concurrent calls
            if self.client is not None:
                return self.client
            task_group = self.owner._task_group
            assert task_group is not None
            try:
                with anyio.fail_after(self.owner.connect_timeout):
                    client: Client = await task_group.start(self._run, True)
            except Exception as error:  # noqa: BLE001  # reported to the model, who may try again later
                raise tool_error(
                    f"cannot reach MCP server {self.label!r}: {describe(error)}. Try again later, or use another tool."
                ) from None
            return client

    async def _run(self, relist: bool = False, *, task_status: TaskStatus[Client]) -> None:
        """Own one connection: open it, watch for tool list changes, until it ends or is dropped."""
        legacy_send, legacy_changes = anyio.create_memory_object_stream[None](1)

        async def on_message(message: object) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                with contextlib.suppress(anyio.WouldBlock):  # one pending refresh covers any number of changes
                    legacy_send.send_nowait(None)

        started = False
        with anyio.CancelScope() as scope, legacy_send, legacy_changes:
            self._scope = scope
            try:
                async with (
                    connect(self.server, message_handler=on_message) as client,
                    _changes(client, legacy_changes) as changes,
                ):
                    if relist:
                        self.owner.sync(self, await list_tools(client))
                    self.client = client
                    started = True
                    task_status.started(client)
                    async for _ in changes:
                        await self._refresh(client)
            except Exception as error:
                if not started:
                    raise
                logger.warning("connection to MCP server %r ended: %s", self.label, describe(error))
            finally:
                if started and self.client is client:
                    self.client = None

    async def _refresh(self, client: Client) -> None:
        try:
            with anyio.fail_after(self.owner.timeout):
                listed = await list_tools(client)
        except Exception as error:  # noqa: BLE001  # a failed refresh keeps the old list; the next change retries
            logger.warning("cannot refresh the tools of MCP server %r: %s", self.label, describe(error))
            return
        self.owner.sync(self, listed)

    def _drop(self, client: Client) -> None:
        """Close a connection that failed, so the next call opens a new one."""
        if self.client is client:
            self.client = None
            if self._scope is not None:
                self._scope.cancel()

    def _timed_out(self, tool_name: str) -> str:
        return (
            f"MCP server {self.label!r} did not answer `{tool_name}` within {self.owner.timeout:g} s; the call was "
            "abandoned and the connection will be reopened on the next call."
        )

    def _lost(self, tool_name: str, error: BaseException) -> str:
        return (
            f"the connection to MCP server {self.label!r} was lost during `{tool_name}` ({describe(error)}); "
            "it will be reopened on the next call, so you may retry."
        )

    def _refused(self, error: MCPError) -> str:
        return f"MCP server {self.label!r} refused the call: {error.message}"


@contextlib.asynccontextmanager
async def _changes(client: Client, legacy: MemoryObjectReceiveStream[None]) -> AsyncIterator[AsyncIterator[Any]]:
    """Tool list changes: a `subscriptions/listen` stream (2026-07-28), else the legacy notifications."""
    async with contextlib.AsyncExitStack() as stack:
        changes: AsyncIterator[Any] = legacy
        # A server without `subscriptions/listen` (or an older protocol) sends legacy notifications, if any.
        with contextlib.suppress(ListenNotSupportedError, MCPError, SubscriptionLost, TimeoutError):
            with anyio.fail_after(10):
                changes = await stack.enter_async_context(client.listen(tools_list_changed=True))
        yield changes


async def list_tools(client: Client) -> list[types.Tool]:
    """Every tool the server offers, page after page."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise RuntimeError(f"the server's tool list did not end after {_MAX_PAGES} pages")


def result_json(result: types.CallToolResult) -> JsonValue:
    """A tool result as JSON: the structured content if any, else the text; an error result raises `ToolError`."""
    if result.is_error:
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        raise tool_error("\n".join(texts).strip() or "the tool failed without saying why")
    if result.structured_content is not None:
        structured: JsonValue = result.structured_content
        return structured
    if all(isinstance(block, types.TextContent) for block in result.content):
        return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    return [_block_json(block) for block in result.content]


def _block_json(block: Any) -> JsonValue:
    data: dict[str, JsonValue] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    payload = data.get("data")
    if isinstance(payload, str):  # base64 media is no use to code that cannot see it; say what it was
        data["data"] = f"<{math.ceil(len(payload) * 3 / 4):,} bytes of base64 data left out>"
    return data


def describe(error: BaseException) -> str:
    """A short account of an error, looking inside exception groups for the first real cause."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return error.message
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
