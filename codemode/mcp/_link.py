"""`ServerLink`: one MCP server's connection, the calls of its tools, and its tool list kept up to date.

Inside `McpSources`'s `async with`, the link owns one connection in the sources' task group, reused by every
call, watched for tool list changes (`subscriptions/listen`, else `tools/list_changed`), and reopened after the
server dies or stops answering; outside it, each call opens a connection of its own. A call past its timeout is
cancelled alone (the SDK sends `notifications/cancelled`), never by closing a connection other calls are using:
a connection whose server no longer answers is retired, closing once its last call ends, and new calls get a new
one. Connection and call failures are the model's to read (`ToolError` with a message that says what may have
happened).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from codemode._naming import portable_alias
from codemode.catalog._sources import needs_approval
from codemode.errors import tool_error
from codemode.mcp._sdk import Client, ListenNotSupportedError, MCPError, SubscriptionLost, types
from codemode.mcp._servers import McpServer, connect
from codemode.run._runtime import MAY_HAVE_ACTED, CutOffError
from codemode.tools import Tool

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import TaskGroup, TaskStatus
    from anyio.streams.memory import MemoryObjectReceiveStream

    from codemode.mcp._client import McpSources
    from sandbox import JsonObject, JsonValue

logger = logging.getLogger("codemode.mcp")

_MAX_PAGES = 1000
_TEXT_RESULT: JsonObject = {
    "description": "The server's answer: JSON text as its data (a dict or list); other text as a str."
}
"""The result of a tool without `outputSchema`, as `result_json` gives it: the stub says so."""
"""Pages of `tools/list` read before giving up on a server that never stops paginating."""
_PROBE_TIMEOUT = 5.0
"""Seconds a server has to answer the probe after a call timed out (at most the call timeout), before its
connection is retired."""


@dataclass(eq=False)
class _Connection:
    """One open connection to a server: its client, the scope that closes it, and its calls in flight."""

    client: Client
    scope: anyio.CancelScope
    calls: int = 0
    retired: bool = False
    """Whether new calls go elsewhere: it closes when its last call in flight ends."""

    def retire(self) -> None:
        """Take no new calls, and close once the calls in flight have ended."""
        self.retired = True
        self._close_if_done()

    def release(self) -> None:
        """One call ended."""
        self.calls -= 1
        self._close_if_done()

    def _close_if_done(self) -> None:
        if self.retired and self.calls == 0:
            self.scope.cancel()


class ServerLink:
    """One server: its tools' names, and (inside `async with`) the connection that serves their calls."""

    def __init__(self, owner: McpSources, server: McpServer) -> None:
        self.owner = owner
        self.server = server
        self.label = server.label
        self.names: dict[str, str] = {}
        """Catalog name -> the server's own tool name."""
        self.connection: _Connection | None = None
        """The connection new calls use, inside `async with` the sources."""
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
            returns=_TEXT_RESULT if mcp_tool.output_schema is None else mcp_tool.output_schema,
            handler=call,
            approval=needs_approval(self.server.approval, server_name, name, portable_alias(name)),
        )

    async def open(self, task_group: TaskGroup | None) -> list[types.Tool]:
        """Connect and list the tools; the connection stays open in `task_group`, if there is one."""
        if task_group is None:
            async with connect(self.server) as client:
                return await list_tools(client)
        connection: _Connection = await task_group.start(self._run)
        return await list_tools(connection.client)

    async def call(self, tool_name: str, arguments: JsonObject) -> JsonValue:
        """Call one of the server's tools; every failure is a `ToolError` for the model."""
        timeout = self.owner.timeout
        if self.owner.task_group is None:
            connected = False
            try:
                with anyio.fail_after(self.owner.connect_timeout + timeout):
                    async with connect(self.server) as client:
                        connected = True
                        return result_json(await client.call_tool(tool_name, arguments))
            except TimeoutError:
                raise CutOffError(self._timed_out(tool_name)) from None
            except MCPError as error:
                if error.code == types.CONNECTION_CLOSED:
                    raise CutOffError(self._lost(tool_name, error)) from None
                raise tool_error(self._refused(error)) from None
            except Exception as error:  # noqa: BLE001  # a server that cannot be reached fails in many ways
                if connected:
                    raise CutOffError(self._lost(tool_name, error)) from None
                raise tool_error(self._unreachable(tool_name, error)) from None
        connection = await self._connected(tool_name)
        connection.calls += 1
        try:
            with anyio.fail_after(timeout):  # cancels this request alone: the SDK tells the server so
                result = await connection.client.call_tool(tool_name, arguments)
        except TimeoutError:
            await self._check(connection)
            raise CutOffError(self._timed_out(tool_name)) from None
        except MCPError as error:
            if error.code != types.CONNECTION_CLOSED:
                raise tool_error(self._refused(error)) from None
            self._retire(connection)
            raise CutOffError(self._lost(tool_name, error)) from None
        except Exception as error:  # noqa: BLE001  # a broken transport fails in many ways; the model reads which
            self._retire(connection)
            raise CutOffError(self._lost(tool_name, error)) from None
        finally:
            connection.release()
        return result_json(result)

    async def _connected(self, tool_name: str) -> _Connection:
        async with self._lock:  # one reconnect for many concurrent calls
            if self.connection is not None:
                return self.connection
            task_group = self.owner.task_group
            assert task_group is not None
            try:
                with anyio.fail_after(self.owner.connect_timeout):
                    connection: _Connection = await task_group.start(self._run, True)
            except Exception as error:  # noqa: BLE001  # reported to the model, who may try again later
                raise tool_error(self._unreachable(tool_name, error)) from None
            return connection

    async def _check(self, connection: _Connection) -> None:
        """After a call timed out: keep the connection if the server still answers, else retire it.

        The probe is the first page of `tools/list` (`ping` is gone from the 2026-07-28 protocol); an error the
        server sends back is an answer too.
        """
        if connection.retired:
            return
        try:
            with anyio.fail_after(min(_PROBE_TIMEOUT, self.owner.timeout)):
                await connection.client.list_tools()
        except MCPError as error:
            if error.code == types.CONNECTION_CLOSED:
                self._retire(connection)
        except Exception as error:  # noqa: BLE001  # a timeout or a broken transport: this connection is done
            logger.warning("MCP server %r stopped answering (%s): reconnecting", self.label, describe(error))
            self._retire(connection)

    async def _run(self, relist: bool = False, *, task_status: TaskStatus[_Connection]) -> None:
        """Own one connection: open it, watch for tool list changes, until it ends or is dropped."""
        legacy_send, legacy_changes = anyio.create_memory_object_stream[None](1)

        async def on_message(message: object) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                with contextlib.suppress(anyio.WouldBlock):  # one pending refresh covers any number of changes
                    legacy_send.send_nowait(None)

        connection: _Connection | None = None
        with anyio.CancelScope() as scope, legacy_send, legacy_changes:
            try:
                async with (
                    connect(self.server, message_handler=on_message) as client,
                    _changes(client, legacy_changes) as changes,
                ):
                    if relist:
                        self.owner.sync(self, await list_tools(client))
                    connection = self.connection = _Connection(client=client, scope=scope)
                    task_status.started(connection)
                    async for _ in changes:
                        await self._refresh(client)
            except Exception as error:
                if connection is None:
                    raise
                logger.warning("connection to MCP server %r ended: %s", self.label, describe(error))
            finally:
                if connection is not None and self.connection is connection:
                    self.connection = None

    async def _refresh(self, client: Client) -> None:
        try:
            with anyio.fail_after(self.owner.timeout):
                listed = await list_tools(client)
        except Exception as error:  # noqa: BLE001  # a failed refresh keeps the old list; the next change retries
            logger.warning("cannot refresh the tools of MCP server %r: %s", self.label, describe(error))
            return
        self.owner.sync(self, listed)

    def _retire(self, connection: _Connection) -> None:
        """New calls get a new connection; this one closes once its calls in flight have ended."""
        if self.connection is connection:
            self.connection = None
        connection.retire()

    def _unreachable(self, tool_name: str, error: BaseException) -> str:
        return (
            f"cannot reach MCP server {self.label!r} ({describe(error)}), so `{tool_name}` was not sent and did not "
            "run. Try again later, or use another tool."
        )

    def _timed_out(self, tool_name: str) -> str:
        return (
            f"MCP server {self.label!r} did not answer `{tool_name}` within {self.owner.timeout:g} s, so the call "
            f"was cancelled; {MAY_HAVE_ACTED}."
        )

    def _lost(self, tool_name: str, error: BaseException) -> str:
        return (
            f"the connection to MCP server {self.label!r} was lost during `{tool_name}` ({describe(error)}); the "
            "call may have reached the server: check before you repeat it. The next call reconnects."
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
    """A tool result as JSON: the structured content if any, else the text; an error result raises `ToolError`.

    One text block that is a whole JSON object or array (what most servers send) is its data.
    """
    if result.is_error:
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        raise tool_error("\n".join(texts).strip() or "the tool failed without saying why")
    if result.structured_content is not None:
        structured: JsonValue = result.structured_content
        return structured
    if all(isinstance(block, types.TextContent) for block in result.content):
        text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
        return _json_text(text) if len(result.content) == 1 else text
    return [_block_json(block) for block in result.content]


def _json_text(text: str) -> JsonValue:
    """`text` parsed, if it is a whole JSON object or array; else `text` itself (a number or a word stays text)."""
    if text.lstrip()[:1] not in ("{", "["):
        return text
    try:
        data: JsonValue = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return data


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
