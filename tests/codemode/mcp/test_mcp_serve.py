"""`codemode serve` driven by the `mcp` SDK's own client, over stdio and over streamable HTTP."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("mcp.client")

from cli_kit import python_config, serve_command, serve_http
from mcp import Client, StdioServerParameters

from codemode import CodeMode, build_catalog, load_config

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

SCRIPT = 'found = await tools.search("weather in a city")\nreturn await tools.get_weather(city="Oslo")'


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return python_config(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
async def stdio_client(config: Path) -> AsyncIterator[Client]:
    command = serve_command(config)
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params) as client:
        yield client


def texts(result: object) -> list[str]:
    return [block.text for block in getattr(result, "content", [])]


@pytest.mark.slow
async def test_serve_lists_exactly_one_tool_with_the_fixed_code_definition(stdio_client: Client, config: Path) -> None:
    """`tools/list` has one tool, `code`, with the same description and schema as `CodeMode.tool`."""
    listed = await stdio_client.list_tools()
    expected = CodeMode(build_catalog(load_config(config)), isolation="inline").tool
    assert [(tool.name, tool.description, tool.input_schema) for tool in listed.tools] == [
        (expected.name, expected.description, expected.input_schema)
    ]


async def test_a_code_call_returns_output_value_and_the_announcement_once_per_session(stdio_client: Client) -> None:
    """The first run announces `get_weather` in the result; the same session is not told twice."""
    first = await stdio_client.call_tool("code", {"code": f'print("hi")\n{SCRIPT}'})
    assert not first.is_error
    output, announcement = texts(first)
    assert output.startswith("hi\nReturned: {")
    assert '"city": "Oslo"' in output
    assert "<tools-discovered>" in announcement
    assert "# new tool: get_weather" in announcement
    assert first.meta is not None
    assert "get_weather" in first.meta["codemode/state"]["announced"]
    second = await stdio_client.call_tool("code", {"code": SCRIPT})
    assert len(texts(second)) == 1


async def test_a_failing_script_is_an_error_result_with_the_short_message(stdio_client: Client) -> None:
    """A script that raises comes back as `isError` with the exception, not as a protocol error."""
    result = await stdio_client.call_tool("code", {"code": "x = 1\nreturn x / 0"})
    assert result.is_error
    assert "ZeroDivisionError: division by zero" in texts(result)[0]


@pytest.fixture(scope="module")
async def http_url(config: Path) -> AsyncIterator[str]:
    async with serve_http(config) as url:
        yield url


@pytest.fixture(scope="module")
async def stateless_url(config: Path) -> AsyncIterator[str]:
    async with serve_http(config, "--stateless") as url:
        yield url


@pytest.mark.slow
async def test_serve_over_http_keeps_discovery_state_per_session(http_url: str) -> None:
    """Two HTTP sessions (2025 handshake) each get the announcement once; failing code is an error result."""
    for _ in range(2):
        async with Client(http_url, mode="legacy") as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["code"]
            first = await client.call_tool("code", {"code": SCRIPT})
            assert "# new tool: get_weather" in texts(first)[1]
            again = await client.call_tool("code", {"code": SCRIPT})
            assert len(texts(again)) == 1
            failed = await client.call_tool("code", {"code": "raise ValueError('nope')"})
            assert failed.is_error
            assert "ValueError: nope" in texts(failed)[0]


@pytest.mark.slow
async def test_stateless_http_takes_the_state_from_the_requests_meta(stateless_url: str) -> None:
    """Stateless mode: with no `_meta` state each run announces again; with the returned state, it does not."""
    async with Client(stateless_url) as client:
        first = await client.call_tool("code", {"code": SCRIPT})
        assert "# new tool: get_weather" in texts(first)[1]
        no_state = await client.call_tool("code", {"code": SCRIPT})
        assert len(texts(no_state)) == 2
        assert first.meta is not None
        with_state = await client.call_tool(
            "code", {"code": SCRIPT}, meta={"codemode/state": first.meta["codemode/state"]}
        )
        assert len(texts(with_state)) == 1
        history = await client.call_tool("code", {"code": SCRIPT}, meta={"codemode/history": texts(first)})
        assert len(texts(history)) == 1


def _node_major() -> int | None:
    """The installed Node.js major version, or None without Node.js."""
    if shutil.which("node") is None:
        return None
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    digits = version.strip().lstrip("v").split(".")[0]
    return int(digits) if digits.isdigit() else None


def _inspector() -> str | None:
    """The MCP Inspector's CLI entry point, if an offline copy is installed; never downloaded here."""
    if shutil.which("node") is None:
        return None
    roots = [os.path.expanduser("~/.npm/_npx/*/node_modules"), "/usr/lib/node_modules", "/usr/local/lib/node_modules"]
    for root in roots:
        for found in glob.glob(os.path.join(root, "@modelcontextprotocol", "inspector", "cli", "build", "cli.js")):
            return found
    return None


def test_the_mcp_inspector_cli_lists_and_calls_the_code_tool(config: Path) -> None:
    """The Inspector's `--cli` mode (a peer in another language) sees one tool and runs a script."""
    node = _node_major()
    if node is not None and node < 22:  # every Inspector release needs Node.js >= 22 (checked: 0.16 to 2.12)
        pytest.skip(f"the MCP Inspector needs Node.js >= 22; this machine has Node.js {node}")
    inspector = _inspector()
    if inspector is None:
        pytest.skip("the MCP Inspector (npm @modelcontextprotocol/inspector) is not installed offline")
    base = ["node", inspector, *serve_command(config)]
    listed = subprocess.run([*base, "--method", "tools/list"], capture_output=True, text=True, timeout=60, check=True)
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == ["code"]
    called = subprocess.run(
        [*base, "--method", "tools/call", "--tool-name", "code", "--tool-arg", f"code={SCRIPT}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "get_weather" in called.stdout
