# Snapshots hold the one-line messages a person reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""The command line a person meets: one-line key errors, warnings once, failing sources, `${VAR}`, `-v`, the URL."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("mcp.client")

from cli_kit import cli, free_port, python_config, serve_command
from inline_snapshot import snapshot

from codemode import load_config
from codemode.mcp import HttpServer, StdioServer, mcp_servers

if TYPE_CHECKING:
    from pathlib import Path

KEYS = ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def config_with_a_dead_server(tmp_path: Path) -> Path:
    """A config whose Python source works and whose MCP server exits at once."""
    config = python_config(tmp_path)
    config.write_text(
        f'[[tools]]\npython = "tools.py"\n[[tools]]\nmcp = ["{sys.executable}", "-c", "pass"]\nname = "dead"\n',
        encoding="utf-8",
    )
    return config


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        (
            "anthropic",
            snapshot(
                "codemode: set ANTHROPIC_API_KEY to use --provider anthropic (and ANTHROPIC_BASE_URL for another endpoint)\n"
            ),
        ),
        (
            "openai-chat",
            snapshot(
                "codemode: set OPENAI_API_KEY to use --provider openai-chat (and OPENAI_BASE_URL for another endpoint)\n"
            ),
        ),
        (
            "openai-responses",
            snapshot(
                "codemode: set OPENAI_API_KEY to use --provider openai-responses (and OPENAI_BASE_URL for another endpoint)\n"
            ),
        ),
    ],
)
def test_a_missing_api_key_is_one_line_saying_what_to_set(
    provider: str, expected: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No traceback and no "unexpected error": exit 2 and the variable to set."""
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)

    status = cli(["chat", "hi", "--provider", provider, "--model", "m", "--isolation", "inline"])

    assert status == 2
    assert capsys.readouterr().err == expected


def test_a_source_that_fails_makes_exec_and_search_exit_nonzero_and_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dead server is reported once; `exec` and `search` exit 2 without running."""
    config = config_with_a_dead_server(tmp_path)
    script = tmp_path / "script.py"
    script.write_text('return await tools.get_weather(city="Oslo")\n', encoding="utf-8")

    exec_status = cli(["exec", str(script), "--config", str(config), "--isolation", "inline"])
    exec_out = capsys.readouterr()
    search_status = cli(["search", "weather", "--config", str(config)])
    search_out = capsys.readouterr()

    assert exec_status == 2
    assert exec_out.out == ""
    assert exec_out.err.count("'dead'") == 1
    assert exec_out.err.splitlines()[-1] == snapshot(
        "codemode: a source failed to load (see above); fix the config, or pass --allow-missing to go on without it"
    )
    assert search_status == 2
    assert search_out.err.count("'dead'") == 1


def test_allow_missing_runs_with_the_sources_that_loaded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--allow-missing` reports the dead server once and runs the script against the rest."""
    config = config_with_a_dead_server(tmp_path)
    script = tmp_path / "script.py"
    script.write_text('return await tools.get_weather(city="Oslo")\n', encoding="utf-8")

    status = cli(["exec", str(script), "--config", str(config), "--isolation", "inline", "--allow-missing"])
    out = capsys.readouterr()

    assert status == 0
    assert '"temp_c": 19' in out.out
    assert out.err.count("'dead'") == 1


def test_exec_verbose_shows_each_tool_call_with_arguments_duration_and_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-v` prints one line a call on stderr: name, arguments, outcome and seconds."""
    config = python_config(tmp_path)
    script = tmp_path / "script.py"
    script.write_text(
        'await tools.get_weather(city="Oslo")\ntry:\n    await tools.get_weather(town="Oslo")\nexcept ToolError:\n    pass\n',
        encoding="utf-8",
    )

    status = cli(["exec", str(script), "--config", str(config), "--isolation", "inline", "-v"])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("codemode: call")]

    assert status == 0
    assert len(lines) == 2
    assert lines[0].startswith('codemode: call get_weather(city="Oslo") ok ')
    assert lines[0].endswith(" s")
    assert lines[1].startswith('codemode: call get_weather(town="Oslo") failed ')


def test_env_headers_and_urls_of_mcp_tables_read_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`${VAR}` and `${VAR:-default}` in `env`, `headers` and `mcp_url` come from the environment."""
    monkeypatch.setenv("CM_TEST_TOKEN", "s3cret")
    monkeypatch.delenv("CM_TEST_UNSET", raising=False)
    config = tmp_path / "codemode.toml"
    config.write_text(
        '[[tools]]\nmcp = ["server"]\nenv = { TOKEN = "${CM_TEST_TOKEN}", MODE = "${CM_TEST_UNSET:-safe}" }\n'
        '[[tools]]\nmcp_url = "http://127.0.0.1:${CM_TEST_PORT:-8123}/mcp"\n'
        'headers = { Authorization = "Bearer ${CM_TEST_TOKEN}" }\n',
        encoding="utf-8",
    )

    stdio, http = mcp_servers(load_config(config))

    assert isinstance(stdio, StdioServer)
    assert stdio.env == {"TOKEN": "s3cret", "MODE": "safe"}
    assert isinstance(http, HttpServer)
    assert http.url == "http://127.0.0.1:8123/mcp"
    assert http.headers == {"Authorization": "Bearer s3cret"}


def test_serve_http_prints_its_url(tmp_path: Path) -> None:
    """The first thing `serve --transport http` says is where it listens."""
    config = python_config(tmp_path)
    port = free_port()
    command = serve_command(config, "--transport", "http", "--port", str(port))
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert process.stderr is not None
        lines = [process.stderr.readline() for _ in range(2)]
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()

    assert f"codemode: serving MCP at http://127.0.0.1:{port}/mcp\n" in lines


def test_output_piped_into_a_reader_that_stops_early_ends_quietly() -> None:
    """`codemode demo | head -1`: the first line arrives, then the program exits 1 with no traceback."""
    program = "import sys; from codemode.cli import console; sys.argv = ['codemode', 'demo']; sys.exit(console())"
    with subprocess.Popen(
        [sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # as `head -1` does once it has its line
        errors = process.stderr.read()
        status = process.wait(timeout=60)
    assert (first, status, errors) == (
        "codemode demo: 302 tools behind one `code` tool (scripted model, offline)\n",
        1,
        "",
    )


STUCK_PY = """
import pathlib
import time

from codemode import Catalog

catalog = Catalog()


@catalog.tool
def stuck() -> str:
    \"\"\"Hang in a sync handler, as a tool waiting on a dead connection does.\"\"\"
    pathlib.Path(__file__).with_name("started").write_text("yes")
    time.sleep(60)
    return "late"
"""


def test_ctrl_c_during_a_run_in_a_sync_tool_exits_at_once_saying_so(tmp_path: Path) -> None:
    """Ctrl-C while a sync tool hangs: one line on stderr, status 130, no traceback, no wait for the tool."""
    config = python_config(tmp_path, STUCK_PY)
    script = tmp_path / "script.py"
    script.write_text("return await tools.stuck()\n", encoding="utf-8")
    command = [sys.executable, "-m", "codemode", "exec", str(script), "--config", str(config), "--isolation", "inline"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        deadline = time.monotonic() + 30
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, errors = process.communicate(timeout=20)  # the tool sleeps 60 s: exiting does not wait for it
    assert (process.returncode, out, errors) == (130, "", "codemode: interrupted\n")
