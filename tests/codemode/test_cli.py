"""The `codemode` command line, run in-process through `codemode.cli.main` (and once as the real console script)."""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from cli_kit import cli
from inline_snapshot import snapshot

# The provider tests' fake replies; tests/codemode is on sys.path, as pytest prepends a test module's folder.
from providers.provider_fakes import SERVERS, Step, anthropic_usage, chat_usage, responses_usage

from codemode.providers import anthropic as anthropic_wire
from codemode.providers import openai_chat as chat_wire
from codemode.providers import openai_responses as responses_wire

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from codemode.providers.base import Usage

# The CLI's output module is imported before any test redirects stdout, as an application would import it, so
# what the tests read from stdout does not depend on which test happens to import it first.
importlib.import_module("codemode.cli._show")

TOOLS_PY = '''
from codemode import Catalog

catalog = Catalog()


@catalog.tool
async def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temp_c": 19}


@catalog.tool
async def get_forecast(city: str, days: int) -> list:
    """Get the weather forecast for a city for the next days."""
    return [f"{city} day {n + 1}: sunny" for n in range(days)]


@catalog.tool
async def send_email(to: str, subject: str, body: str) -> dict:
    """Send an email message to a recipient."""
    return {"to": to, "status": "sent"}
'''

JSONL_ROWS = [
    {
        "name": "convert_currency",
        "description": "Convert an amount of money between currencies.",
        "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "target": {"type": "string"}}},
    },
    {
        "name": "list_invoices",
        "description": "List the invoices of a customer.",
        "parameters": {"type": "object", "properties": {"customer": {"type": "string"}}},
    },
]


def write_config(folder: Path) -> Path:
    """A TOML config with a Python catalog file and a JSONL file of definitions, in `folder`."""
    (folder / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    (folder / "more.jsonl").write_text("".join(json.dumps(row) + "\n" for row in JSONL_ROWS), encoding="utf-8")
    config = folder / "codemode.toml"
    config.write_text('[[tools]]\npython = "tools.py"\n[[tools]]\njsonl = "more.jsonl"\n', encoding="utf-8")
    return config


# --- demo -------------------------------------------------------------------------------------------------------


def test_the_demo_console_script_runs_offline_without_a_key() -> None:
    """`python -m codemode demo` exits 0 with constant tool bytes and full prompt reuse, no key, no network."""
    env = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_BASE_URL"))}
    done = subprocess.run(
        [sys.executable, "-m", "codemode", "demo"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "`tools` bytes constant          yes" in done.stdout
    assert "min 100.0%" in done.stdout
    assert "request  cache read  cache write  uncached  output" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("wire_format", ["anthropic", "openai-chat", "openai-responses"])
def test_the_demo_runs_inline_in_each_wire_format(wire_format: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The scripted demo answers in seven requests with the same tool bytes and full reuse in every format."""
    status = cli(["demo", "--isolation", "inline", "--format", wire_format])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert "scripted model, offline" in out
    assert "  requests                        7\n" in out
    assert "  `tools` bytes constant          yes\n" in out
    assert "100% 100% 100% 100% 100% 100% (min 100.0%)" in out


def test_the_demo_prints_its_transcript_and_cache_report_to_the_current_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each step's code, the final answer and the cache report go to `sys.stdout` as it is when `main` runs."""
    assert cli(["demo", "--isolation", "inline"]) == 0
    out = capsys.readouterr().out
    assert "[code #1]" in out
    assert "A payment reminder went to each of the three." in out
    assert "request  cache read  cache write  uncached  output" in out


def test_demo_with_a_provider_but_no_model_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`--provider` without `--model` exits 2 and says what is missing."""
    assert cli(["demo", "--provider", "anthropic"]) == 2
    assert capsys.readouterr().err == snapshot("codemode: --provider needs --model NAME\n")


def test_max_runs_below_one_is_refused_with_what_it_must_be(capsys: pytest.CaptureFixture[str]) -> None:
    """`--max-runs 0` is a usage error that says what a cap on runs must be."""
    with pytest.raises(SystemExit) as exited:
        cli(["exec", "--max-runs", "0", "-c", "return 1"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == snapshot(
        "codemode exec: error: argument --max-runs: must be a whole number of at least 1, not '0'"
    )


# --- exec -------------------------------------------------------------------------------------------------------


def test_exec_runs_a_script_file_and_announces_what_it_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script that succeeds exits 0, printing its output and value, and to stderr the announcement of the tools
    it used (so `codemode exec x.py | jq` or `> out.txt` gets the script's output only)."""
    config = write_config(tmp_path)
    script = tmp_path / "script.py"
    script.write_text('print(await tools.get_weather(city="Paris"))\nreturn 6 * 7\n', encoding="utf-8")
    status = cli(["exec", str(script), "--config", str(config), "--isolation", "inline"])
    out, err = capsys.readouterr()
    assert (status, out) == (0, "{'city': 'Paris', 'temp_c': 19}\nReturned: 42\n")
    assert err.startswith("<tools-discovered>\n")
    assert re.findall(r"^# new tool: (\S+)", err, re.MULTILINE) == ["get_weather"]


def test_exec_reads_the_script_from_stdin_and_exits_1_when_it_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-` reads standard input; a script that raises exits 1 with the error in its output."""
    config = write_config(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO('print("before")\nraise ValueError("no such city")\n'))
    status = cli(["exec", "-", "--config", str(config), "--isolation", "inline"])
    out, err = capsys.readouterr()
    assert (status, err) == (1, "")
    assert out.startswith("before\n")
    assert "ValueError: no such city" in out


def test_exec_finds_tools_from_both_config_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Search inside the script sees the Python file's tools and the JSONL definitions alike."""
    config = write_config(tmp_path)
    script = tmp_path / "script.py"
    script.write_text('return [t["name"] for t in await tools.search("convert money currencies")]', encoding="utf-8")
    assert cli(["exec", str(script), "--config", str(config), "--isolation", "inline"]) == 0
    assert "convert_currency" in capsys.readouterr().out


def test_exec_with_a_missing_script_exits_2_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script that cannot be read is a usage error, reported on one line."""
    config = write_config(tmp_path)
    status = cli(["exec", str(tmp_path / "missing.py"), "--config", str(config)])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.replace(str(tmp_path), "<tmp>") == snapshot(
        "codemode: cannot read '<tmp>/missing.py': No such file or directory\n"
    )


def test_exec_with_a_bad_config_exits_2_and_names_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config that is not TOML is a usage error naming the file and the line."""
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\npython = "tools.py"\n[[tools]\n', encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text("return 1", encoding="utf-8")
    status = cli(["exec", str(script), "--config", str(config)])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.replace(str(tmp_path), "<tmp>") == snapshot(
        "codemode: <tmp>/codemode.toml: not valid TOML: "
        "Expected ']]' at the end of an array declaration (at line 3, column 8)\n"
    )


def test_exec_with_a_missing_tools_file_exits_2_and_names_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config whose source cannot be loaded is a usage error naming the table."""
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\npython = "nowhere.py"\n', encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text("return 1", encoding="utf-8")
    assert cli(["exec", str(script), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"codemode: {config}: tools[0]: ")
    assert err.count("\n") == 1


# --- search and eval-search ---------------------------------------------------------------------------------------


def test_search_prints_the_best_tools_ranked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each result is a numbered signature with its score, then its description."""
    config = write_config(tmp_path)
    assert cli(["search", "weather forecast for a city", "--config", str(config), "-k", "2"]) == 0
    assert capsys.readouterr().out == snapshot(
        """\
1. get_forecast(*, city: str, days: int) -> list[Any]    (score 3.97)
   Get the weather forecast for a city for the next days.
2. get_weather(*, city: str) -> dict[str, Any]    (score 2.67)
   Get the current weather for a city.
"""
    )


def test_search_without_a_match_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A query no tool matches prints that, and still exits 0."""
    config = write_config(tmp_path)
    assert cli(["search", "zebra xylophone", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "no matching tools\n"


def test_search_hybrid_finds_a_paraphrase_that_keywords_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--search hybrid` ranks by meaning too: a request sharing no word with any tool still finds the weather."""
    pytest.importorskip("wordllama", reason="needs the `semantic` extra")
    monkeypatch.setenv("CODEMODE_CACHE_DIR", str(tmp_path / "cache"))
    config = write_config(tmp_path)
    query = ["search", "will it rain tomorrow", "--config", str(config), "-k", "1"]
    assert cli(query) == 0
    assert capsys.readouterr().out == "no matching tools\n"
    assert cli([*query, "--search", "hybrid"]) == 0
    assert capsys.readouterr().out.startswith("1. get_forecast(")


def test_exec_takes_search_hybrid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`exec --search hybrid` answers `tools.search` in the script with the hybrid ranking."""
    pytest.importorskip("wordllama", reason="needs the `semantic` extra")
    monkeypatch.setenv("CODEMODE_CACHE_DIR", str(tmp_path / "cache"))
    config = write_config(tmp_path)
    script = tmp_path / "script.py"
    script.write_text('print([t["name"] for t in await tools.search("will it rain tomorrow", max_results=1)])\n')
    argv = ["exec", str(script), "--config", str(config), "--isolation", "inline", "--search", "hybrid"]
    assert cli(argv) == 0
    assert capsys.readouterr().out.startswith("['get_forecast']")


@pytest.mark.parametrize("command", ["search", "exec", "chat", "serve"])
def test_search_hybrid_without_the_extra_exits_2_with_the_install_command(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command that takes `--search hybrid` stops before any work when the extra is missing."""
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now raises ImportError, as if not installed
    for module in ("codemode.search.hybrid", "codemode.search._embeddings"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    config = str(write_config(tmp_path))
    argv = {
        "search": ["search", "weather", "--config", config],
        "exec": ["exec", "-", "--config", config],
        "chat": ["chat", "hello", "--provider", "anthropic", "--model", "m"],
        "serve": ["serve", "--config", config],
    }[command]
    assert cli([*argv, "--search", "hybrid"]) == 2
    assert 'pip install "codemode[semantic]"' in capsys.readouterr().err


def test_eval_search_json_prints_the_documented_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--json` prints one object with counts, quality metrics and latency percentiles."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text("".join(json.dumps(row) + "\n" for row in JSONL_ROWS), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        json.dumps({"query": "convert euros to dollars", "relevant": ["convert_currency"]})
        + "\n"
        + json.dumps({"query": "invoices of a customer", "relevant": ["list_invoices"]})
        + "\n",
        encoding="utf-8",
    )
    assert cli(["eval-search", "--tools", str(tools), "--queries", str(queries), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert {"tools", "queries", "recall_at_k", "ndcg_at_10", "mrr_at_10", "p50_ms", "p95_ms"} <= set(report)
    assert {key: value for key, value in report.items() if not key.endswith("_ms")} == snapshot(
        {"tools": 2, "queries": 2, "k": 5, "recall_at_k": 1.0, "ndcg_at_10": 1.0, "mrr_at_10": 1.0}
    )
    assert 0 <= report["p50_ms"] <= report["p95_ms"]


def test_eval_search_with_unreadable_data_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing tools file is reported on stderr with exit status 2."""
    missing = tmp_path / "missing.jsonl"
    assert cli(["eval-search", "--tools", str(missing), "--queries", str(missing), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("codemode eval-search: cannot read the data: ")


# --- chat against a loopback server -------------------------------------------------------------------------------

PATHS = {"anthropic": "/v1/messages", "openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses"}
ANSWER = "Berlin will be clear; nothing else to do."
CHAT_STEPS = (
    Step("Let me look.", ('print(await tools.search("weather forecast for a city", max_results=2))',)),
    Step(ANSWER),
)


@dataclass
class Exchange:
    """What the loopback server saw: each request's path and JSON body."""

    paths: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)


Answer = Callable[[int, dict[str, Any]], tuple[int, str, bytes]]
"""Request number and body -> status, content type and body bytes of the reply."""


class _Handler(BaseHTTPRequestHandler):
    server: _Loopback

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.exchange.paths.append(self.path)
        self.server.exchange.bodies.append(body)
        status, content_type, content = self.server.answer(len(self.server.exchange.bodies) - 1, body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


class _Loopback(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer: Answer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.exchange = Exchange()


@pytest.fixture
def loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Answer], Exchange]]:
    """Starts HTTP servers on 127.0.0.1 and points both SDKs at the last one; all are shut down afterwards."""
    started: list[tuple[_Loopback, threading.Thread]] = []

    def start(answer: Answer) -> Exchange:
        server = _Loopback(answer)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        started.append((server, thread))
        base = f"http://127.0.0.1:{server.server_address[1]}"
        for name, value in {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": base,
            "OPENAI_API_KEY": "test",
            "OPENAI_BASE_URL": f"{base}/v1",
            "NO_PROXY": "127.0.0.1",
        }.items():
            monkeypatch.setenv(name, value)
        return server.exchange

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def scripted(provider: str) -> Answer:
    """Replies in `provider`'s wire format: a `code` call, then the final answer (streamed if asked)."""
    reply = SERVERS[provider][0]

    def answer(index: int, body: dict[str, Any]) -> tuple[int, str, bytes]:
        response = reply(index, CHAT_STEPS[index], bool(body.get("stream")))
        return response.status_code, response.headers["content-type"], response.content

    return answer


def reported_usage(provider: str, index: int) -> Usage:
    """The usage the scripted server reports for request `index`, normalised as the CLI prints it."""
    match provider:
        case "anthropic":
            return anthropic_wire.read_usage(anthropic_usage(index))
        case "openai-chat":
            return chat_wire.read_usage(chat_usage(index))
        case _:
            return responses_wire.read_usage(responses_usage(index))


def assert_cache_report(provider: str, out: str) -> None:
    """`out` holds the cache report with the usage the server reported for both requests."""
    assert "request  cache read  cache write  uncached  output" in out
    for index in range(2):
        usage = reported_usage(provider, index)
        row = (
            f"{index + 1:>7}  {usage.cache_read_tokens:>10,}  {usage.cache_write_tokens:>11,}  "
            f"{usage.uncached_input_tokens:>8,}  {usage.output_tokens:>6,}"
        )
        assert row in out.splitlines()


def chat(provider: str, *options: str) -> int:
    """`codemode chat` in-process, on the bundled demo catalog."""
    return cli(["chat", "What is the weather in Berlin?", "--provider", provider, "--model", "m", *options])


PROVIDERS = ["anthropic", "openai-chat", "openai-responses"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_runs_a_code_call_then_answers_through_the_sdk(
    provider: str, loopback: Callable[[Answer], Exchange], capsys: pytest.CaptureFixture[str]
) -> None:
    """Two requests reach the provider's endpoint with the same `tools`; the second carries the code's output."""
    exchange = loopback(scripted(provider))
    status = chat(provider, "--isolation", "inline", "--no-stream")
    err = capsys.readouterr().err
    assert (status, err) == (0, "")
    assert exchange.paths == [PATHS[provider]] * 2
    assert [body["model"] for body in exchange.bodies] == ["m", "m"]
    assert not any(body.get("stream") for body in exchange.bodies)
    assert len({json.dumps(body["tools"]) for body in exchange.bodies}) == 1
    first, second = (json.dumps(body) for body in exchange.bodies)
    assert "weather_get_forecast" not in first
    assert "weather_get_forecast(*, city: str" in second
    assert "] weather.get_forecast" in second  # found only: its one-line stub, marked with its original name


def announcement_roles(body: dict[str, Any]) -> list[str]:
    """The role of each message of a request that holds an announcement (`tool_result` when inside one)."""
    roles = []
    for message in body.get("messages") or body.get("input") or []:
        text = json.dumps(message)
        if "<tools-discovered>" not in text:
            continue
        content = message.get("content")
        blocks = [b for b in content if "<tools-discovered>" in json.dumps(b)] if isinstance(content, list) else []
        results = blocks and all(b.get("type") == "tool_result" for b in blocks)
        tool = message.get("role") == "tool" or message.get("type") == "function_call_output" or results
        roles.append("tool_result" if tool else str(message.get("role")))
    return roles


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_puts_announcements_in_the_tool_result_unless_told_to_use_a_user_message(
    provider: str, loopback: Callable[[Answer], Exchange]
) -> None:
    """By default the stubs reach the model as tool output; `--placement user` sends them as a user message."""
    default = loopback(scripted(provider))
    assert chat(provider, "--isolation", "inline", "--no-stream") == 0
    as_user = loopback(scripted(provider))
    assert chat(provider, "--isolation", "inline", "--no-stream", "--placement", "user") == 0

    assert announcement_roles(default.bodies[1]) == ["tool_result"]
    assert announcement_roles(as_user.bodies[1]) == ["user"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_prints_each_step_the_answer_and_the_cache_report(
    provider: str, stream: bool, loopback: Callable[[Answer], Exchange], capsys: pytest.CaptureFixture[str]
) -> None:
    """The code, its announcement, the final answer and a row of cache usage per request go to stdout."""
    exchange = loopback(scripted(provider))
    assert chat(provider, "--isolation", "inline", *(() if stream else ("--no-stream",))) == 0
    out = capsys.readouterr().out
    assert [bool(body.get("stream")) for body in exchange.bodies] == [stream, stream]
    assert "[code #1]\n  | print(await tools.search(" in out
    assert "[announced: 2 seen: weather.get_forecast, " in out
    assert ANSWER in out
    assert_cache_report(provider, out)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_reads_a_streaming_request_answered_with_one_json_body_as_the_whole_response(
    provider: str, loopback: Callable[[Answer], Exchange], capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that ignores `stream` and answers whole: the steps, the answer and the usage, as without streaming."""
    reply = SERVERS[provider][0]

    def whole(index: int, body: dict[str, Any]) -> tuple[int, str, bytes]:
        response = reply(index, CHAT_STEPS[index], False)
        return response.status_code, response.headers["content-type"], response.content

    exchange = loopback(whole)
    status = chat(provider, "--isolation", "inline")
    out = capsys.readouterr().out
    assert status == 0
    assert [bool(body.get("stream")) for body in exchange.bodies] == [True, True]
    assert ANSWER in out
    assert_cache_report(provider, out)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_exits_1_when_a_streaming_request_gets_json_that_is_no_response(
    provider: str, loopback: Callable[[Answer], Exchange], capsys: pytest.CaptureFixture[str]
) -> None:
    """A gateway's own JSON in place of a stream is one error line and exit 1, never an empty answer and exit 0."""
    loopback(lambda index, body: (200, "application/json", b'{"status": "ok"}'))
    status = chat(provider, "--isolation", "inline")
    out, err = capsys.readouterr()
    assert status == 1
    assert err.startswith("codemode: model API error")
    assert "answered a streaming request with JSON that is not a" in err
    assert "request  cache read" not in out


ERRORS: dict[str, dict[str, Any]] = {
    "anthropic": {"type": "error", "error": {"type": "invalid_request_error", "message": "model: unknown model m"}},
    "openai-chat": {"error": {"message": "The model `m` does not exist.", "type": "invalid_request_error"}},
    "openai-responses": {"error": {"message": "The model `m` does not exist.", "type": "invalid_request_error"}},
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_reports_a_refused_request_on_one_line_and_exits_1(
    provider: str, loopback: Callable[[Answer], Exchange], capsys: pytest.CaptureFixture[str]
) -> None:
    """A 400 from the API is one `codemode: model API error 400 ...` line on stderr, with no traceback."""
    content = json.dumps(ERRORS[provider]).encode()
    exchange = loopback(lambda index, body: (400, "application/json", content))
    status = chat(provider, "--isolation", "inline", "--no-stream")
    out, err = capsys.readouterr()
    assert status == 1
    assert len(exchange.bodies) == 1
    assert err.startswith("codemode: model API error 400 (BadRequestError): ")
    assert err.endswith(" - the request was refused; check the model name and options\n")
    assert err.count("\n") == 1
    assert "Traceback" not in out + err


def test_chat_log_and_persist_variables_write_each_run_with_the_names_kept(
    tmp_path: Path, loopback: Callable[[Answer], Exchange], capsys: pytest.CaptureFixture[str]
) -> None:
    """`chat --log FILE --persist-variables`: one JSON line per `code` run, naming the variables it kept."""
    loopback(scripted("anthropic"))
    log = tmp_path / "runs.jsonl"
    assert chat("anthropic", "--isolation", "inline", "--no-stream", "--log", str(log), "--persist-variables") == 0
    capsys.readouterr()
    (line,) = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert (line["ok"], line["code"], line["variables"]) == (True, CHAT_STEPS[0].codes[0], [])
