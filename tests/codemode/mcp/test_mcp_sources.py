"""MCP servers as catalog sources: PyPI reference servers and a low-level SDK server (stdio), an SDK server (HTTP)."""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

import anyio
import pytest

pytest.importorskip("mcp.client")

from anyio.abc import SocketAttribute
from inline_snapshot import snapshot
from mcp_helpers import JSON_TEXT_SERVER, PAGED_SERVER, notes_server

from codemode import Catalog, CodeMode
from codemode.cli import main
from codemode.mcp import HttpServer, McpSources, StdioServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from codemode.catalog import CatalogChange


@pytest.fixture(scope="module")
async def reference(git_repo: Path) -> AsyncIterator[McpSources]:
    """`mcp-server-time` and `mcp-server-git` over stdio, and a server that exits at once."""
    servers = [
        StdioServer(command=(sys.executable, "-m", "mcp_server_time")),
        StdioServer(command=(sys.executable, "-m", "mcp_server_git", "--repository", str(git_repo)), name="git"),
        StdioServer(command=(sys.executable, "-c", "pass"), name="broken"),
    ]
    async with McpSources(Catalog(), servers, timeout=20) as sources:
        yield sources


async def run(catalog: Catalog, code: str) -> tuple[bool, str, object]:
    async with CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute(code, cm.new_state())
    return result.ok, result.text, result.run.value


@pytest.mark.slow
async def test_a_broken_server_is_reported_and_left_out_while_the_others_work(reference: McpSources) -> None:
    """The server that exits is in `failures`; the time and git servers' tools are in the catalog."""
    assert list(reference.failures) == ["broken"]
    assert "cannot connect" in reference.failures["broken"]
    assert sorted(reference.servers) == ["git", "mcp_server_time"]
    names = {tool.name for tool in reference.catalog}
    assert {"get_current_time", "convert_time", "git_status", "git_log", "git_commit"} <= names


async def test_search_finds_the_reference_servers_tools(reference: McpSources) -> None:
    """`tools.search` ranks the servers' tools by their MCP names and descriptions."""
    ok, text, value = await run(
        reference.catalog,
        'a = await tools.search("current time in a timezone", max_results=2)\n'
        'b = await tools.search("show the commit log of the repository", max_results=3)\n'
        'return [a[0]["name"], [t["name"] for t in b]]',
    )
    assert ok, text
    assert isinstance(value, list)
    assert value[0] == "get_current_time"
    assert "git_log" in value[1]


async def test_stubs_render_the_servers_input_and_output_schemas(reference: McpSources) -> None:
    """`outputSchema` becomes the return type (a TypedDict); `inputSchema` the keyword parameters."""
    ok, text, value = await run(reference.catalog, 'return await tools.describe("get_current_time")')
    assert ok, text
    assert isinstance(value, str)
    assert "class TimeResult(TypedDict):\n    timezone: str\n    datetime: str" in value
    assert "async def get_current_time(*, timezone: str) -> TimeResult:" in value


async def test_calls_work_from_sandbox_code_concurrently(reference: McpSources, git_repo: Path) -> None:
    """Four calls to two servers at once: structured content comes back as JSON, text content as text."""
    ok, text, value = await run(
        reference.catalog,
        "import asyncio\n"
        "now, moved, status, log = await asyncio.gather(\n"
        '    tools.get_current_time(timezone="Europe/Paris"),\n'
        '    tools.convert_time(source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo"),\n'
        f"    tools.git_status(repo_path={str(git_repo)!r}),\n"
        f"    tools.git_log(repo_path={str(git_repo)!r}, max_count=1),\n"
        ")\n"
        'return [now["timezone"], moved["target"]["datetime"][11:16], status, log]',
    )
    assert ok, text
    assert isinstance(value, list)
    assert value[:2] == ["Europe/Paris", "21:00"]
    assert "main" in str(value[2])
    assert "initial commit" in str(value[3])


@pytest.mark.slow
async def test_json_text_without_structured_content_reaches_the_code_as_data_and_other_text_as_text() -> None:
    """One `TextContent` holding a JSON object or array is parsed; a word, a number or broken JSON stays a str."""
    servers = [StdioServer(command=(sys.executable, str(JSON_TEXT_SERVER)), name="json")]
    async with McpSources(Catalog(), servers, timeout=20) as sources:
        ok, text, value = await run(
            sources.catalog,
            "user = await tools.get_user()\n"
            "return [user['name'], user['roles'], await tools.list_ids(), await tools.greet(),\n"
            "        await tools.count(), await tools.broken(), await tools.describe('get_user')]",
        )
    assert ok, text
    assert value == [
        "Ada",
        ["admin"],
        [1, 2, 3],
        "hello there",
        "42",
        "{not json",
        snapshot('''\
async def get_user() -> Any:
    """The get_user tool.

    Returns:
        The server's answer: JSON text as its data (a dict or list); other text as a str.
    """
    ...
'''),
    ]


@pytest.mark.slow
async def test_a_servers_names_that_differ_only_in_punctuation_all_load_with_numbered_aliases() -> None:
    """`car_rental` keeps its name, `car.rental` is `tools.car_rental_2`; both answer, by alias and by name."""
    servers = [StdioServer(command=(sys.executable, str(JSON_TEXT_SERVER)), name="json")]
    async with McpSources(Catalog(), servers, timeout=20) as sources:
        aliases = {tool.name: tool.alias for tool in sources.catalog if "rental" in tool.name or "files" in tool.name}
        ok, text, value = await run(
            sources.catalog,
            "return [await tools.car_rental(), await tools.car_rental_2(), await tools['car.rental'](),\n"
            "        await tools.list_files()]",
        )
    assert sources.failures == {}
    assert aliases == {"car.rental": "car_rental_2", "car_rental": "car_rental", "list-files": "list_files"}
    assert ok, text
    assert value == ["car_rental", "car.rental", "car.rental", "list-files"]


async def test_an_error_result_is_a_tool_error_with_the_servers_message(reference: McpSources) -> None:
    """`isError` from the server reaches the model's code as `ToolError` with the server's own words."""
    ok, text, _ = await run(
        reference.catalog,
        'try:\n    await tools.get_current_time(timezone="Nowhere/Atlantis")\n'
        "except ToolError as e:\n    print('caught', e)\n"
        'await tools.get_current_time(timezone="Nowhere/Atlantis")',
    )
    assert not ok
    assert "caught" in text
    assert "ToolError: " in text
    assert "Invalid timezone" in text


@pytest.mark.slow
async def test_http_tools_are_prefixed_with_the_server_name_only_where_names_clash() -> None:
    """A local `add_note` makes the server's `notes.add_note`; its other tools keep their own names."""
    catalog = Catalog()

    @catalog.tool
    def add_note(text: str) -> str:
        """A local tool whose name the server also uses."""
        return "local"

    async with notes_server() as server, McpSources(catalog, [HttpServer(url=server.url, name="notes")]):
        assert {"notes.add_note", "list_notes", "slow", "evolve"} <= {tool.name for tool in catalog}
        ok, text, value = await run(
            catalog,
            'await tools.notes_add_note(text="from the server")\n'
            'return [await tools.add_note(text="x"), await tools.list_notes()]',
        )
        assert ok, text
        assert value == ["local", {"result": ["from the server"]}]  # the server wraps lists, per its outputSchema
        ok, text, _ = await run(catalog, 'await tools.fail_note(reason="no room")')
        assert not ok
        assert "the notebook refused: no room" in text


@pytest.mark.slow
async def test_list_changed_refreshes_the_catalog_and_announces_updated_and_removed_tools() -> None:
    """After `tools/list_changed`, the next announcement marks the changed tool updated and the gone one removed."""
    catalog = Catalog()
    changed = anyio.Event()

    def on_change(change: CatalogChange) -> None:
        if any(tool.name == "count_notes" for tool in change.added):
            changed.set()

    catalog.subscribe(on_change)
    async with (
        notes_server() as server,
        McpSources(catalog, [HttpServer(url=server.url)]),
        CodeMode(catalog, isolation="inline") as cm,
    ):
        state = cm.new_state()
        first = await cm.execute('await tools.add_note(text="a")\nreturn await tools.list_notes()', state)
        assert first.ok, first.text
        assert [name for name, _ in first.announced.new] == ["add_note", "list_notes"]
        evolved = await cm.execute("return await tools.evolve()", state)
        assert evolved.run.value == {"result": "evolved"}
        with anyio.fail_after(10):
            await changed.wait()
        after = await cm.execute('return await tools.add_note(text="b", tag="t")', state)
    assert after.ok, after.text
    # The refresh may land before the `evolve` run ends (its announcement) or after (the next one's): either way once.
    announced = f"{evolved.announcement}\n{after.announcement}"
    assert announced.count("# updated tool: add_note") == 1
    assert 'tag: str = ""' in announced
    assert announced.count("# removed tool: list_notes") == 1


@pytest.mark.slow
async def test_a_hung_call_times_out_with_a_clear_error_and_the_next_call_is_answered() -> None:
    """A call past the timeout fails for the model (only that request is cancelled); the next call is answered."""
    catalog = Catalog()
    async with notes_server() as server, McpSources(catalog, [HttpServer(url=server.url, name="notes")], timeout=1):
        ok, text, _ = await run(catalog, "await tools.slow(seconds=30)")
        assert not ok
        assert "MCP server 'notes' did not answer `slow` within 1 s" in text
        ok, text, value = await run(catalog, 'return await tools.add_note(text="after")')
        assert ok, text
        assert value == {"count": 1}


@pytest.mark.slow
async def test_killing_the_server_mid_call_gives_a_clear_error_and_a_working_reconnect() -> None:
    """The call in flight fails with "connection lost"; a restarted server answers the next call."""
    catalog = Catalog()
    async with notes_server() as server:
        port = server.port
        sources = McpSources(catalog, [HttpServer(url=server.url, name="notes")], timeout=20)
        async with sources:
            outcome: list[tuple[bool, str, object]] = []

            async def slow_call() -> None:
                outcome.append(await run(catalog, "await tools.slow(seconds=30)"))

            async with anyio.create_task_group() as group:
                group.start_soon(slow_call)
                with anyio.fail_after(15):
                    assert await anext(server.lines) == "slow started"
                server.process.kill()
            ok, text, _ = outcome[0]
            assert not ok
            assert "ToolError: " in text
            assert "'notes'" in text
            async with notes_server(port) as restarted:
                assert restarted.port == port
                ok, text, value = await run(catalog, 'return await tools.add_note(text="again")')
            assert ok, text
            assert value == {"count": 1}


@pytest.mark.slow
async def test_a_tool_list_served_in_pages_is_read_to_the_last_page() -> None:
    """All three pages of `tools/list` reach the catalog, and a tool from the last page answers its call."""
    catalog = Catalog()
    async with McpSources(catalog, [StdioServer(command=(sys.executable, str(PAGED_SERVER)), name="paged")]) as sources:
        assert sources.failures == {}
        assert sorted(tool.name for tool in catalog) == ["alpha", "beta", "delta", "gamma", "pid", "slow"]
        ok, text, value = await run(catalog, "return await tools.delta()")
    assert ok, text
    assert value == "delta"


@pytest.mark.slow
async def test_killing_a_stdio_server_mid_call_gives_a_clear_error_and_the_next_call_restarts_it() -> None:
    """The call in flight fails with "connection lost"; the next call starts a new server process, which answers."""
    catalog = Catalog()
    async with await anyio.create_udp_socket(local_host="127.0.0.1") as reports:
        port = reports.extra(SocketAttribute.local_port)
        server = StdioServer(command=(sys.executable, str(PAGED_SERVER), "--report", str(port)), name="paged")
        async with McpSources(catalog, [server], timeout=20):
            outcome: list[tuple[bool, str, object]] = []

            async def slow_call() -> None:
                outcome.append(await run(catalog, "await tools.slow(seconds=30)"))

            async with anyio.create_task_group() as group:
                group.start_soon(slow_call)
                with anyio.fail_after(5):
                    killed = int((await reports.receive())[0])  # `slow` reports its pid once the call is running
                os.kill(killed, signal.SIGKILL)
            ok, text, _ = outcome[0]
            assert not ok
            assert text.splitlines()[-1] == snapshot(
                "ToolError: the connection to MCP server 'paged' was lost during `slow` (Connection closed); the call "
                "may have reached the server: check before you repeat it. The next call reconnects. (line 1)"
            )
            # `delta` is on the last page: the reconnect's relisting must page too, or the tool would be removed.
            ok, text, value = await run(catalog, "return [await tools.pid(), await tools.delta()]")
    assert ok, text
    assert isinstance(value, list)
    assert value[0] != str(killed)
    assert value[1] == "delta"


@pytest.mark.slow
async def test_exec_and_search_commands_read_mcp_servers_from_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`codemode search` and `codemode exec` list the config's MCP tools, and `exec` calls them."""
    async with notes_server() as server:
        config = tmp_path / "codemode.toml"
        config.write_text(f'[[tools]]\nmcp_url = "{server.url}"\nname = "notes"\n')
        script = tmp_path / "script.py"
        script.write_text('print(await tools.add_note(text="cli"))\nreturn await tools.list_notes()')
        # The commands run their own event loop, as from a shell: in a worker thread here.
        assert await anyio.to_thread.run_sync(main, ["search", "add a note", "--config", str(config)]) == 0
        args = ["exec", str(script), "--config", str(config), "--isolation", "inline"]
        assert await anyio.to_thread.run_sync(main, args) == 0
    out = capsys.readouterr().out
    assert "1. add_note(*, text: str)" in out
    assert "{'count': 1}" in out
    assert '"result": [\n  "cli"\n ]' in out


async def test_an_mcp_tool_marked_for_approval_pauses_and_runs_on_the_server_once_approved() -> None:
    """`approval=` patterns on a server mark its tools; the paused call reaches the server only when approved."""
    catalog = Catalog()
    async with notes_server() as server:
        server_config = HttpServer(url=server.url, name="notes", approval=("add_*",))
        async with McpSources(catalog, [server_config]), CodeMode(catalog, isolation="inline") as cm:
            assert [(tool.name, tool.approval) for tool in catalog if tool.name in ("add_note", "list_notes")] == [
                ("add_note", True),
                ("list_notes", False),
            ]
            state = cm.new_state()
            paused = await cm.execute('await tools.add_note(text="hi")\nreturn await tools.list_notes()', state)
            assert paused.pending is not None
            assert (await cm.execute("return await tools.list_notes()", cm.new_state())).run.value == {"result": []}
            done = await cm.resume(state, approved=True)
    assert done.run.value == {"result": ["hi"]}


async def test_an_mcp_approval_pattern_that_matches_no_tool_leaves_the_server_out_with_the_names_it_could_mean() -> (
    None
):
    """`add-note*` matches none of the server's tools, so it would protect nothing: none of them is registered."""
    catalog = Catalog()
    async with notes_server() as server:
        server_config = HttpServer(url=server.url, name="notes", approval=("add-note*",))
        async with McpSources(catalog, [server_config]) as sources:
            assert list(catalog) == []
    assert sources.failures == snapshot(
        {
            "notes": "the approval pattern 'add-note*' matches none of its 5 tools, so it would protect nothing; did you mean 'add_note', 'fail_note'? (a pattern matches a tool's own name, its name with the source's prefix, or its name as `tools.` shows it); none of the server's tools is registered"  # noqa: E501  # the message verbatim
        }
    )


async def test_a_server_tool_whose_name_and_prefixed_name_are_both_taken_is_reported_and_the_others_load() -> None:
    """`add_note` clashes, and so does `notes.add_note`: it is left out with the reason; the other tools register."""
    catalog = Catalog()
    for name in ("add_note", "notes.add_note"):
        catalog.add(name=name, description="Already here.", parameters={"type": "object"})
    async with notes_server() as server, McpSources(catalog, [HttpServer(url=server.url, name="notes")]) as sources:
        assert sources.failures == snapshot(
            {
                "notes/add_note": "Tool 'notes.add_note' is already in the catalog. Give the new tool another name, "
                "use `catalog.replace(tool)` to change its definition, or load each source with its own `prefix`."
            }
        )
        assert "list_notes" in catalog
        assert catalog.get("notes.add_note").description == "Already here."  # type: ignore[union-attr]
