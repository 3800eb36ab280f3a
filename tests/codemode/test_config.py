from __future__ import annotations

import json
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from codemode.config import (
    Config,
    JsonlSource,
    McpHttpSource,
    McpStdioSource,
    ModuleSource,
    PythonSource,
    build_catalog,
    load_config,
)
from codemode.errors import ConfigError

WEATHER_PY = '''
from __future__ import annotations

from pydantic import BaseModel

from codemode.catalog import Catalog

catalog = Catalog()


class Forecast(BaseModel):
    city: str
    celsius: float


@catalog.tool
async def get_weather(city: str) -> Forecast:
    """Get the weather forecast for a city."""
    return Forecast(city=city, celsius=21.5)
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: Path, tmp_path: Path) -> str:
    """The message of the `ConfigError` that reading and building the config at `path` raises."""
    with pytest.raises(ConfigError) as error:
        build_catalog(load_config(path))
    return str(error.value).replace(str(tmp_path), "<tmp>")


def test_every_kind_of_table_is_read_into_a_typed_source(tmp_path: Path) -> None:
    """Paths are resolved against the config's folder; optional keys get their defaults."""
    config = load_config(
        write(
            tmp_path / "conf" / "codemode.toml",
            """
            [[tools]]
            python = "tools/weather.py"
            [[tools]]
            module = "myapp.tools"
            prefix = "app."
            [[tools]]
            jsonl = "/data/tools.jsonl"
            aliases = { "car.rental" = "car_rental_dotted" }
            [[tools]]
            mcp = ["uvx", "mcp-server-time"]
            env = { TZ = "UTC" }
            cwd = "servers"
            [[tools]]
            mcp_url = "http://127.0.0.1:8000/mcp"
            name = "local"
            headers = { Authorization = "Bearer x" }
            """,
        )
    )
    base = tmp_path / "conf"
    assert config == Config(
        path=base / "codemode.toml",
        sources=(
            PythonSource(table="tools[0]", path=base / "tools" / "weather.py"),
            ModuleSource(table="tools[1]", module="myapp.tools", prefix="app."),
            JsonlSource(table="tools[2]", path=Path("/data/tools.jsonl"), aliases={"car.rental": "car_rental_dotted"}),
            McpStdioSource(
                table="tools[3]", command=("uvx", "mcp-server-time"), env={"TZ": "UTC"}, cwd=base / "servers"
            ),
            McpHttpSource(
                table="tools[4]", url="http://127.0.0.1:8000/mcp", name="local", headers={"Authorization": "Bearer x"}
            ),
        ),
    )


async def test_python_and_jsonl_sources_build_one_catalog_in_file_order(tmp_path: Path) -> None:
    """A Python file's `catalog` keeps its handlers; JSONL definitions come without; `prefix` applies."""
    write(tmp_path / "tools" / "weather.py", WEATHER_PY)
    row = {"name": "math.factorial", "description": "n!", "parameters": {"type": "object", "properties": {}}}
    write(tmp_path / "data" / "tools.jsonl", json.dumps(row) + "\n")
    path = write(
        tmp_path / "codemode.toml",
        '[[tools]]\npython = "tools/weather.py"\n[[tools]]\njsonl = "data/tools.jsonl"\nprefix = "bfcl."\n',
    )
    catalog = build_catalog(load_config(path))
    assert [(tool.name, tool.alias, tool.handler is None) for tool in catalog] == [
        ("get_weather", "get_weather", False),
        ("bfcl.math.factorial", "bfcl_math_factorial", True),
    ]
    weather = catalog.get("get_weather")
    assert weather is not None
    assert weather.handler is not None
    assert (await weather.handler(city="Paris")).celsius == 21.5
    assert weather.returns == snapshot(
        {
            "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
            "required": ["city", "celsius"],
            "title": "Forecast",
            "type": "object",
        }
    )


def test_a_module_source_is_imported_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`module = "pkg.mod"` imports the module from `sys.path` and takes its `catalog`."""
    write(tmp_path / "site" / "weatherpkg" / "__init__.py", "")
    write(tmp_path / "site" / "weatherpkg" / "tools.py", WEATHER_PY)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    path = write(tmp_path / "codemode.toml", '[[tools]]\nmodule = "weatherpkg.tools"\nprefix = "w."\n')
    assert [tool.alias for tool in build_catalog(load_config(path))] == ["w_get_weather"]


def test_mcp_sources_need_connections_to_be_built(tmp_path: Path) -> None:
    """The parsed entry is kept for the MCP client; a plain build says how to connect the servers."""
    path = write(tmp_path / "codemode.toml", '[[tools]]\nmcp = ["uvx", "mcp-server-time"]\n')
    assert load_config(path).sources == (McpStdioSource(table="tools[0]", command=("uvx", "mcp-server-time")),)
    assert config_error(path, tmp_path) == snapshot(
        "<tmp>/codemode.toml: tools[0]: MCP sources need connections: build this config's catalog with "
        "`async with codemode.mcp.sources_from_config(config) as sources` (the `mcp` extra)."
    )


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            "[[tools]]\npython = 'a.py'\nnmae = 'x'\n",
            snapshot(
                "<tmp>/codemode.toml: tools[0]: unknown keys ['nmae']; a `python` source takes ['aliases', "
                "'approval', 'prefix']."
            ),
        ),
        (
            "[[tools]]\npython = 'a.py'\njsonl = 'b.jsonl'\n",
            snapshot(
                "<tmp>/codemode.toml: tools[0]: a tools table has exactly one of the keys ['python', 'module', "
                "'jsonl', 'mcp', 'mcp_url', 'openapi'], got ['jsonl', 'python']."
            ),
        ),
        (
            "[[tools]]\njsonl = 'a.jsonl'\n[[tools]]\nmcp = 'uvx server'\n",
            snapshot("<tmp>/codemode.toml: tools[1]: `mcp` must be a non-empty array of strings, got 'uvx server'."),
        ),
        (
            "[[tools]]\nmcp_url = 'http://x'\nheaders = { A = 1 }\n",
            snapshot("<tmp>/codemode.toml: tools[0]: `headers` must be a table of strings, got {'A': 1}."),
        ),
        (
            "[server]\nport = 1\n",
            snapshot("<tmp>/codemode.toml: unknown top-level keys ['server']; a config has `[[tools]]` and `[serve]`."),
        ),
        (
            "tools = 'x'\n",
            snapshot("<tmp>/codemode.toml: `tools` must be an array of tables, written `[[tools]]`."),
        ),
        (
            "[[tools]]\npython = 'a.py'\n\n[[tools]\n",
            snapshot(
                "<tmp>/codemode.toml: not valid TOML: Expected ']]' at the end of an array declaration (at line 4, "
                "column 8)"
            ),
        ),
    ],
)
def test_an_invalid_config_names_the_file_and_the_table(tmp_path: Path, toml: str, expected: str) -> None:
    """Unknown keys, wrong types and TOML syntax errors raise `ConfigError` pointing at the mistake."""
    assert config_error(write(tmp_path / "codemode.toml", toml), tmp_path) == expected


def test_a_python_file_without_a_catalog_says_what_to_add(tmp_path: Path) -> None:
    """A file that defines no `catalog` is an error that explains the convention."""
    write(tmp_path / "tools.py", "def helper() -> None:\n    pass\n")
    path = write(tmp_path / "codemode.toml", "[[tools]]\npython = 'tools.py'\n")
    assert config_error(path, tmp_path) == snapshot(
        "<tmp>/codemode.toml: tools[0]: file '<tmp>/tools.py' defines no `catalog`; add "
        "`catalog = codemode.Catalog()` and register its tools with `@catalog.tool`."
    )


def test_a_python_file_that_fails_to_run_is_reported_with_its_table(tmp_path: Path) -> None:
    """An exception raised while the file runs becomes a `ConfigError` naming the source."""
    write(tmp_path / "tools.py", "raise RuntimeError('no API key')\n")
    path = write(tmp_path / "codemode.toml", "[[tools]]\npython = 'missing.py'\n[[tools]]\npython = 'tools.py'\n")
    assert config_error(path, tmp_path) == snapshot("<tmp>/codemode.toml: tools[0]: no Python file '<tmp>/missing.py'.")
    write(path, "[[tools]]\npython = 'tools.py'\n")
    assert config_error(path, tmp_path) == snapshot(
        "<tmp>/codemode.toml: tools[0]: importing file '<tmp>/tools.py' failed: RuntimeError: no API key"
    )


def test_tools_that_clash_across_sources_name_the_later_table(tmp_path: Path) -> None:
    """A second source defining a tool again is refused, and the message says which table added it."""
    row = {"name": "get-weather", "description": "", "parameters": {"type": "object"}}
    write(tmp_path / "tools.py", WEATHER_PY)
    write(tmp_path / "tools.jsonl", json.dumps(row) + "\n")
    path = write(tmp_path / "codemode.toml", "[[tools]]\npython = 'tools.py'\n[[tools]]\njsonl = 'tools.jsonl'\n")
    assert config_error(path, tmp_path) == snapshot(
        "<tmp>/codemode.toml: tools[1]: <tmp>/tools.jsonl:1: Tool 'get-weather' and tool 'get_weather' would both "
        "be called `tools.get_weather`. Rename one of them, give one a hand-made alias (`aliases={...}` when "
        "loading, or `Tool(alias=...)`), or load each source with its own `prefix`."
    )


def test_a_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    """Reading a config that does not exist raises `ConfigError`, not `FileNotFoundError`."""
    with pytest.raises(ConfigError):
        load_config(tmp_path / "nope.toml")


def test_an_approval_key_marks_the_tools_of_a_source_whose_names_match(tmp_path: Path) -> None:
    """`approval = true` marks every tool of a source, a list of patterns those it matches (before the prefix)."""
    write(tmp_path / "tools" / "weather.py", WEATHER_PY)
    rows = [
        {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}}
        for name in ("delete_user", "delete_group", "list_users")
    ]
    write(tmp_path / "data" / "tools.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    path = write(
        tmp_path / "codemode.toml",
        '[[tools]]\npython = "tools/weather.py"\napproval = true\n'
        '[[tools]]\njsonl = "data/tools.jsonl"\nprefix = "admin."\napproval = ["delete_*"]\n',
    )
    catalog = build_catalog(load_config(path))
    assert [(tool.name, tool.approval) for tool in catalog] == [
        ("get_weather", True),
        ("admin.delete_user", True),
        ("admin.delete_group", True),
        ("admin.list_users", False),
    ]


def test_an_approval_key_that_is_not_a_bool_or_patterns_is_refused(tmp_path: Path) -> None:
    """`approval = "yes"` names the table and says what the key takes."""
    path = write(tmp_path / "codemode.toml", '[[tools]]\nmcp = ["server"]\napproval = "yes"\n')
    assert config_error(path, tmp_path) == snapshot(
        "<tmp>/codemode.toml: tools[0]: `approval` must be true, false or an array of tool name patterns, got 'yes'."
    )


def test_an_approval_pattern_matches_the_names_shown_and_one_that_matches_nothing_is_refused(tmp_path: Path) -> None:
    """`admin_delete_*` (as `tools.` shows it) marks the tools; `delet_user` protects nothing, so the config fails."""
    rows = [
        {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}}
        for name in ("delete-user", "list-users")
    ]
    write(tmp_path / "data" / "tools.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    table = '[[tools]]\njsonl = "data/tools.jsonl"\nprefix = "admin."\napproval = '
    path = write(tmp_path / "codemode.toml", table + '["admin_delete_*"]\n')
    catalog = build_catalog(load_config(path))
    assert [(tool.name, tool.approval) for tool in catalog] == [
        ("admin.delete-user", True),
        ("admin.list-users", False),
    ]

    path = write(tmp_path / "codemode.toml", table + '["delet_user"]\n')
    assert config_error(path, tmp_path) == snapshot(
        "<tmp>/codemode.toml: tools[0]: the approval pattern 'delet_user' matches none of its 2 tools, so it would protect nothing; did you mean 'admin_delete_user' (its own name 'delete-user'), 'admin_list_users' (its own name 'list-users')? (a pattern matches a tool's own name, its name with the source's prefix, or its name as `tools.` shows it)"  # noqa: E501  # the message verbatim
    )
