# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""A real MCP server (the SDK's low-level `Server`, over stdio) publishing schemas as servers in the wild do."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp.client")


import sys

from inline_snapshot import snapshot
from mcp_helpers import WILD_SERVER

from codemode import Catalog, CodeMode
from codemode.mcp import McpSources, StdioServer


async def test_every_tool_of_a_server_with_wild_schemas_is_kept_and_checked_under_its_draft() -> None:
    """Draft-07, draft-04 booleans, `definitions`, `nullable` and a schema no draft accepts: all five tools work."""
    server = StdioServer(command=(sys.executable, str(WILD_SERVER)), name="wild")
    async with (
        McpSources(Catalog(), [server], timeout=20) as sources,
        CodeMode(sources.catalog, isolation="inline") as cm,
    ):
        names = sorted(tool.name for tool in sources.catalog)
        result = await cm.execute(
            "out = [\n"
            "    await tools.zod_count(count=1),\n"
            "    await tools.old_page(limit=99),\n"
            '    await tools.draw_point(at={"x": 1, "y": 2}),\n'
            "    await tools.set_note(note=None, id=1),\n"
            '    await tools.loose_echo(text="hi", mode="x"),\n'
            "]\n"
            "for call in [lambda: tools.zod_count(count=0), lambda: tools.old_page(limit=100), lambda: tools.draw_point(at={'x': 1})]:\n"
            "    try:\n"
            "        await call()\n"
            "    except ToolError as e:\n"
            "        out.append(str(e).split('. Signature')[0])\n"
            "return out",
            cm.new_state(),
        )

    assert names == ["draw_point", "loose_echo", "old_page", "set_note", "zod_count"]
    assert sources.failures == snapshot(
        {
            "wild/loose_echo": "kept, but its input schema is valid under no JSON Schema draft ('strng' is not valid under any of the given schemas (at `properties/mode/type`)); its arguments are checked only where the schema can be read"
        }
    )
    assert result.ok, result.text
    assert result.run.value == snapshot(
        [
            'zod_count {"count": 1}',
            'old_page {"limit": 99}',
            'draw_point {"at": {"x": 1, "y": 2}}',
            'set_note {"id": 1, "note": null}',
            'loose_echo {"mode": "x", "text": "hi"}',
            "tools.zod_count(): argument `count`: 0 is less than or equal to the minimum of 0 (given 0)",
            "tools.old_page(): argument `limit`: 100 is greater than or equal to the maximum of 100 (given 100)",
            'tools.draw_point(): argument `at`: missing key `y` (given {"x": 1})',
        ]
    )
