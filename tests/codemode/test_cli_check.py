"""`codemode check`: every tool's schemas read as a first call reads them, through the command line."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from inline_snapshot import snapshot

from codemode.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

GOOD = {"type": "object", "properties": {"a": {"type": "string"}}}
DRAFT4 = {  # draft-04's boolean `exclusiveMaximum`, as older SDKs and zod-to-json-schema publish it
    "type": "object",
    "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100, "exclusiveMaximum": True}},
}
NO_DRAFT = {"type": "object", "properties": {"text": {"type": "string"}, "mode": {"type": "strng"}}}
BAD_RESULT = {"type": "lst"}


def cli(argv: list[str]) -> int:
    """`codemode.cli.main(argv)` on a thread of its own, where no event loop runs (as `test_cli.cli`)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(main, argv).result()


def write_jsonl(folder: Path, *rows: dict[str, Any]) -> Path:
    path = folder / "tools.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_check_of_clean_tools_prints_the_counts_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Tools under the newest draft and draft-04 are clean: the older draft gets a line, the exit status is 0."""
    path = write_jsonl(
        tmp_path,
        {"name": "good", "description": "", "parameters": GOOD},
        {"name": "old", "description": "", "parameters": DRAFT4},
    )
    assert cli(["check", "--tools", str(path)]) == 0
    assert capsys.readouterr().out == snapshot(
        """\
old  parameters  draft-04
2 tools, 2 schemas: 1 draft-04, 1 draft-2020-12
"""
    )


def test_check_names_each_relaxed_and_invalid_schema_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schema valid under no draft is one line with the reason: `relaxed` for arguments, `invalid` for a result."""
    path = write_jsonl(
        tmp_path,
        {"name": "good", "description": "", "parameters": GOOD},
        {"name": "broken", "description": "", "parameters": NO_DRAFT},
        {"name": "odd", "description": "", "parameters": GOOD, "returns": BAD_RESULT},
    )
    assert cli(["check", "--tools", str(path)]) == 1
    assert capsys.readouterr().out == snapshot(
        """\
broken  parameters  relaxed: 'strng' is not valid under any of the given schemas (at `properties/mode/type`)
odd  returns  invalid: 'lst' is not valid under any of the given schemas (at `type`)
3 tools, 4 schemas: 2 draft-2020-12, 1 invalid, 1 relaxed
"""
    )


def test_check_json_lists_every_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--json` is one object: the counts and every schema's status, problems included."""
    path = write_jsonl(
        tmp_path,
        {"name": "old", "description": "", "parameters": DRAFT4},
        {"name": "broken", "description": "", "parameters": NO_DRAFT},
    )
    assert cli(["check", "--tools", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == snapshot(
        {
            "tools": 2,
            "schemas": 2,
            "counts": {"draft-04": 1, "relaxed": 1},
            "checks": [
                {"tool": "old", "field": "parameters", "status": "draft-04", "problem": None},
                {
                    "tool": "broken",
                    "field": "parameters",
                    "status": "relaxed",
                    "problem": "'strng' is not valid under any of the given schemas (at `properties/mode/type`)",
                },
            ],
        }
    )


def test_check_reads_the_sources_of_a_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--config` reads the sources as `search` and `exec` do, prefixes included."""
    write_jsonl(tmp_path, {"name": "broken", "description": "", "parameters": NO_DRAFT})
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\njsonl = "tools.jsonl"\nprefix = "x."\n', encoding="utf-8")
    assert cli(["check", "--config", str(config)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == snapshot(
        "x.broken  parameters  relaxed: 'strng' is not valid under any of the given schemas (at `properties/mode/type`)"
    )


def test_check_without_a_source_or_with_an_unreadable_one_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No source, or a file that is not a catalog, is exit status 2 with the reason on stderr."""
    assert cli(["check"]) == 2
    assert capsys.readouterr().err == "codemode check: give either `--config FILE` or `--tools FILE.jsonl`\n"
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a", "parameters": {"type": "string"}}\n', encoding="utf-8")
    assert cli(["check", "--tools", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"codemode: {path}:1: Tool 'a': `parameters` must be")
