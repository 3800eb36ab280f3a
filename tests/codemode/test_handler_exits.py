# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""A handler that exits (`SystemExit` from argparse) or whose exception cannot be printed fails its call, not the host."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Literal

import pytest

pytest.importorskip("mcp.client")

from cli_kit import python_config, serve_command
from inline_snapshot import snapshot
from mcp import Client, StdioServerParameters

from codemode import Catalog, CodeMode, Limits

if TYPE_CHECKING:
    from pathlib import Path

Isolation = Literal["inline", "process"]


class Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("str broke")


def cli_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    def grep_logs(args: str) -> str:
        """Search logs; `args` are command-line flags, e.g. "--level error"."""
        parser = argparse.ArgumentParser(prog="grep_logs")
        parser.add_argument("--level")
        return f"searched {parser.parse_args(args.split())}"

    @catalog.tool
    async def quit_now(code: str) -> str:
        """A wrapper of a script that ends with `sys.exit(...)`."""
        sys.exit(code)

    @catalog.tool
    def weird() -> int:
        """Raises an exception whose `str()` fails."""
        raise Unprintable

    return catalog


CODE = """
seen = []
for call in (lambda: tools.grep_logs(args="--lvl error"), lambda: tools.quit_now(code="bye"), tools.weird):
    try:
        await call()
    except ToolError as e:
        seen.append(str(e))
return seen
"""


@pytest.mark.parametrize("isolation", ["process", "inline"])
async def test_a_tool_that_exits_or_cannot_be_printed_fails_its_call_and_the_run_goes_on(isolation: Isolation) -> None:
    """`SystemExit` (argparse's, `sys.exit("bye")`) and an unprintable exception are `ToolError`s the code catches; each call is a failed one, not in flight."""
    async with CodeMode(cli_catalog(), isolation=isolation) as cm:
        result = await cm.execute(CODE, cm.new_state())

    assert result.run.value == snapshot(
        [
            "SystemExit: 2 (the tool exited, as a command-line parser does on arguments it rejects)",
            "SystemExit: bye (the tool exited, as a command-line parser does on arguments it rejects)",
            "Unprintable: (the Unprintable's message could not be read)",
        ]
    )
    assert [(call.name, call.ok, call.in_flight) for call in result.calls] == [
        ("grep_logs", False, False),
        ("quit_now", False, False),
        ("weird", False, False),
    ]


async def test_hide_errors_names_only_the_exit() -> None:
    """With `hide_errors=True` the model reads the exception's type and the hint, no message."""
    async with CodeMode(cli_catalog(), isolation="inline", hide_errors=True) as cm:
        result = await cm.execute(CODE, cm.new_state())

    assert result.run.value == snapshot(
        [
            "SystemExit (the tool exited, as a command-line parser does on arguments it rejects)",
            "SystemExit (the tool exited, as a command-line parser does on arguments it rejects)",
            "Unprintable",
        ]
    )


def cancelled_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    async def fetch_price(symbol: str) -> float:
        """Latest price of a symbol, from a shared upstream request."""
        upstream: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        upstream.cancel()  # the shared connection was reset and its pending requests cancelled
        return await upstream

    @catalog.tool
    def fetch_rate(pair: str) -> float:
        """An exchange rate, from a client library that surfaces a reset as `CancelledError`."""
        raise asyncio.CancelledError("connection reset")

    return catalog


@pytest.mark.parametrize("isolation", ["process", "inline"])
async def test_a_tools_own_cancelled_error_is_that_calls_tool_error_at_once(isolation: Isolation) -> None:
    """An async or sync tool raising `CancelledError` itself fails its call (not in flight); the run goes on."""
    code = """
seen = []
for call in (lambda: tools.fetch_price(symbol="ACME"), lambda: tools.fetch_rate(pair="EURUSD")):
    try:
        await call()
    except ToolError as e:
        seen.append(str(e))
return seen
"""
    async with CodeMode(cancelled_catalog(), isolation=isolation, limits=Limits(timeout=5)) as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.run.value == snapshot(
        [
            "CancelledError (raised inside the tool: something it waited on was cancelled)",
            "CancelledError: connection reset (raised inside the tool: something it waited on was cancelled)",
        ]
    )
    assert [(call.name, call.ok, call.in_flight) for call in result.calls] == [
        ("fetch_price", False, False),
        ("fetch_rate", False, False),
    ]


TOOLS_PY = '''
import argparse

from codemode import Catalog

catalog = Catalog()


@catalog.tool
def grep_logs(args: str) -> str:
    """Search logs; `args` are command-line flags."""
    parser = argparse.ArgumentParser(prog="grep_logs")
    parser.add_argument("--level")
    return f"searched {parser.parse_args(args.split())}"


@catalog.tool
def ping() -> str:
    """Answer pong."""
    return "pong"
'''


@pytest.mark.slow
async def test_codemode_serve_survives_a_tool_that_exits(tmp_path: Path) -> None:
    """Under the default (process) isolation, `codemode serve` answers the exit as the call's error, then the next request."""
    command = serve_command(python_config(tmp_path, TOOLS_PY), "--isolation", "process")
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params) as client:
        failed = await client.call_tool("code", {"code": 'await tools.grep_logs(args="--lvl error")'})
        after = await client.call_tool("code", {"code": "return await tools.ping()"})

    failed_text, after_text = ([block.text for block in result.content] for result in (failed, after))
    assert failed.is_error
    assert failed_text[0].splitlines()[-1] == snapshot(
        "ToolError: SystemExit: 2 (the tool exited, as a command-line parser does on arguments it rejects) (line 1)"
    )
    assert not after.is_error
    assert after_text[0] == 'Returned: "pong"'
