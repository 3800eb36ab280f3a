"""Lone surrogates the code makes (`print("\\udcff")`) never reach the model's text; the run log keeps them escaped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

import pytest
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode

if TYPE_CHECKING:
    from pathlib import Path


def echo_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    def echo(text: str) -> str:
        """Give the text back."""
        return text

    @catalog.tool
    def refuse(text: str) -> str:
        """Fail with the text."""
        raise ValueError(text)

    return catalog


CODE = r"""
row = await tools.echo(text="\udcff")
print("rows:", row, "\ud83d" + "\ude00")
try:
    await tools.refuse(text="bad \ud800")
except ToolError as e:
    print(e)
raise ValueError("\udfff")
"""


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_lone_surrogates_become_replacement_characters_in_the_text_and_escapes_in_the_log(
    isolation: Literal["inline", "process"], tmp_path: Path
) -> None:
    """Printed, returned, raised and passed as arguments: U+FFFD for the model (a split pair joined), escapes logged."""
    log = tmp_path / "runs.jsonl"
    async with CodeMode(echo_catalog(), isolation=isolation, log=log) as cm:
        failed = await cm.execute(CODE, cm.new_state())
        returned = await cm.execute(r'return "\ud800"', cm.new_state())

    assert failed.text == snapshot("""\
rows: \ufffd \U0001f600
ValueError: bad \ufffd
Traceback (most recent call last):
  line 8, in <module>
    raise ValueError("\\udfff")
ValueError: \ufffd (line 8)
Tool calls before the run stopped: 2 completed (1 ok, 1 failed):
  ok     echo(text="\ufffd")
  failed refuse(text="bad \ufffd"): ValueError: bad \ufffd\
""")
    assert returned.text == 'Returned: "\ufffd"'
    first, second = (json.loads(line) for line in log.read_text(encoding="utf-8").splitlines())
    assert first["code"] == CODE
    assert [call["arguments"] for call in first["calls"]] == [{"text": "\udcff"}, {"text": "bad \ud800"}]
    assert first["error"]["message"] == "ValueError: \udfff (line 8)"
    assert second["output"]["value_bytes"] == 5
    assert returned.log_line().isascii()
