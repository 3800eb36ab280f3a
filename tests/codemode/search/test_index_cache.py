"""The BM25F index kept on disk: the same answers as an index built afresh, and a bad file is only a slower start."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from codemode import Catalog, Tool
from codemode._cachedir import default_cache_dir
from codemode.cli import main
from codemode.search import SearchIndex
from codemode.search._index_cache import KEEP_FILES, cached_index
from codemode.search.evaluation import load_queries, load_tools

if TYPE_CHECKING:
    from codemode.search import ToolIndex

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
QUERIES = ["send an email", "weather in paris", "create a github issue", "factorial", "list files", "math_factorial"]


def make_tool(name: str, description: str, **parameters: str) -> Tool:
    properties = {key: {"type": "string", "description": text} for key, text in parameters.items()}
    return Tool(name=name, description=description, parameters={"type": "object", "properties": properties})


TOOLS = [
    make_tool("get_weather", "Current weather forecast for a city.", city="City name"),
    make_tool("github.create_issue", "Open a new issue in a repository.", repo="Repository", title="Issue title"),
    make_tool("sendEmail", "Send an email message to a recipient.", to="Recipient address", body="Message text"),
    make_tool("math.factorial", "Compute the factorial of a number.", n="The number"),
    make_tool("list_files", "List the files in a directory.", path="Directory path"),
    make_tool("send_sms", "Send a text message to a phone.", to="Phone number", body="Message text"),
]


def ranked(index: ToolIndex | SearchIndex, queries: list[str], k: int = 10) -> list[list[tuple[str, float]]]:
    return [[(tool.name, score) for tool, score in index.search(query, k)] for query in queries]


def index_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("bm25-*.json"))


def test_a_saved_index_answers_exactly_as_one_built_afresh(tmp_path: Path) -> None:
    """The first build writes the file, the second reads it: both rank and score every query as `SearchIndex` does."""
    fresh = ranked(SearchIndex(TOOLS), QUERIES)
    built = cached_index(TOOLS, folder=tmp_path, min_tools=1)
    [saved] = index_files(tmp_path)
    read = cached_index(TOOLS, folder=tmp_path, min_tools=1)

    assert built._fields is not None  # built by `add`
    assert read._fields is None  # restored from the file's postings
    assert ranked(built, QUERIES) == ranked(read, QUERIES) == fresh
    assert fresh[0][:2] == [("sendEmail", pytest.approx(fresh[0][0][1])), ("send_sms", pytest.approx(fresh[0][1][1]))]
    assert saved.stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(not (DATA / "bfcl").exists(), reason="needs the shared data sets")
def test_a_saved_index_of_real_catalogs_answers_every_labelled_query_as_a_fresh_one(tmp_path: Path) -> None:
    """StableToolBench and BFCL together (3,916 tools): each sampled query's top 10, scores included, is the same."""
    tools = load_tools(DATA / "stabletoolbench" / "tools.jsonl") + load_tools(DATA / "bfcl" / "tools.jsonl")
    queries = [q.query for name in ("stabletoolbench", "bfcl") for q in load_queries(DATA / name / "queries.jsonl")]
    queries = queries[::8]  # about 400 queries of each kind keep the test to a second or two
    cached_index(tools, folder=tmp_path)
    read = cached_index(tools, folder=tmp_path)

    assert read._fields is None
    assert ranked(read, queries) == ranked(SearchIndex(tools), queries)


def test_a_catalog_read_from_jsonl_files_is_keyed_by_the_files(tmp_path: Path) -> None:
    """Equal files give equal fingerprints and the saved index; a prefix or any other change is another key."""
    path = tmp_path / "tools.jsonl"
    rows = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in TOOLS]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    first, second, prefixed = Catalog(), Catalog(), Catalog()
    first.load_jsonl(path)
    second.load_jsonl(path)
    prefixed.load_jsonl(path, prefix="x.")
    cached_index(first, folder=tmp_path / "cache", min_tools=1)
    read = cached_index(second, folder=tmp_path / "cache", min_tools=1)

    assert first.fingerprint == second.fingerprint
    assert first.fingerprint is not None
    assert prefixed.fingerprint not in (None, first.fingerprint)
    assert read._fields is None
    assert ranked(read, QUERIES) == ranked(SearchIndex(list(second)), QUERIES)
    second.add(name="send_fax", description="Send a fax.", parameters={"type": "object", "properties": {}})
    assert second.fingerprint is None
    assert cached_index(second, folder=tmp_path / "cache", min_tools=1)._fields is not None


def test_a_restored_index_follows_removals_replacements_and_additions_as_a_fresh_one(tmp_path: Path) -> None:
    """After reading the file, removing, replacing and adding tools leaves the index a fresh build would be."""
    cached_index(TOOLS, folder=tmp_path, min_tools=1)
    read = cached_index(TOOLS, folder=tmp_path, min_tools=1)
    fresh = SearchIndex(TOOLS)
    replacement = dataclasses.replace(TOOLS[0], description="Weather and rain radar for a city.")
    extra = make_tool("send_fax", "Send a fax to a number.", number="Fax number")
    for index in (read, fresh):
        index.remove("sendEmail")
        index.add(replacement)
        index.add(extra)

    assert ranked(read, [*QUERIES, "rain radar", "send a fax"]) == ranked(fresh, [*QUERIES, "rain radar", "send a fax"])


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"not json at all", id="garbage"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data.replace(b'"0 1', b'"0 9', 1), id="payload changed, digest not"),
        pytest.param(lambda data: data.split(b"\n", 1)[0], id="header only"),
        pytest.param(lambda data: b"", id="empty"),
    ],
)
def test_a_damaged_file_is_ignored_and_written_again(damage: object, tmp_path: Path) -> None:
    """Whatever happened to the file, the index is the fresh one and the file is good again afterwards."""
    assert callable(damage)
    cached_index(TOOLS, folder=tmp_path, min_tools=1)
    [saved] = index_files(tmp_path)
    good = saved.read_bytes()
    saved.write_bytes(damage(good))

    index = cached_index(TOOLS, folder=tmp_path, min_tools=1)

    assert index._fields is not None  # rebuilt, not read
    assert ranked(index, QUERIES) == ranked(SearchIndex(TOOLS), QUERIES)
    assert saved.read_bytes() == good


@pytest.mark.parametrize("payload", [b'[1, "x"]', b'[[{}, {}, {}], "1 2 3 4"]', b'[[{}, {}, {}, {}], "1 2 x"]', b"{}"])
def test_a_file_of_another_shape_with_a_good_digest_is_ignored(payload: bytes, tmp_path: Path) -> None:
    """A payload that is not what this version writes (wrong fields, lengths, types) is rebuilt, not trusted."""
    cached_index(TOOLS, folder=tmp_path, min_tools=1)
    [saved] = index_files(tmp_path)
    header = json.loads(saved.read_bytes().split(b"\n", 1)[0])
    header["digest"] = hashlib.blake2b(payload, digest_size=16).hexdigest()
    saved.write_bytes(json.dumps(header).encode() + b"\n" + payload)

    index = cached_index(TOOLS, folder=tmp_path, min_tools=1)

    assert index._fields is not None
    assert ranked(index, QUERIES) == ranked(SearchIndex(TOOLS), QUERIES)


def test_a_file_others_could_have_written_is_not_read(tmp_path: Path) -> None:
    """A file writable by the group or others is ignored (rebuilt), even when its contents are right."""
    cached_index(TOOLS, folder=tmp_path, min_tools=1)
    [saved] = index_files(tmp_path)
    saved.chmod(0o666)

    assert cached_index(TOOLS, folder=tmp_path, min_tools=1)._fields is not None
    assert saved.stat().st_mode & 0o777 == 0o600  # written again, as the user's own


def test_a_changed_tool_finds_no_file_and_gets_its_own(tmp_path: Path) -> None:
    """One changed description is another key: the old file is not used for the new tools."""
    cached_index(TOOLS, folder=tmp_path, min_tools=1)
    changed = [dataclasses.replace(TOOLS[0], description="Rain radar."), *TOOLS[1:]]
    index = cached_index(changed, folder=tmp_path, min_tools=1)

    assert index._fields is not None
    assert len(index_files(tmp_path)) == 2
    assert ranked(index, ["rain radar"]) == ranked(SearchIndex(changed), ["rain radar"])


def test_a_folder_that_cannot_be_written_costs_nothing_but_time(tmp_path: Path) -> None:
    """A cache folder under a regular file cannot exist: the index is built, and nothing raises."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    index = cached_index(TOOLS, folder=blocker / "cache", min_tools=1)
    assert ranked(index, QUERIES) == ranked(SearchIndex(TOOLS), QUERIES)


def test_the_folder_keeps_only_the_most_recently_used_files(tmp_path: Path) -> None:
    """Past `KEEP_FILES` catalogs, the least recently used files are dropped when another is written."""
    written: list[Path] = []
    for number in range(KEEP_FILES + 2):
        cached_index([make_tool(f"tool_{number}", f"Tool number {number}.")], folder=tmp_path, min_tools=1)
        [new] = set(index_files(tmp_path)) - set(written)
        os.utime(new, ns=(number * 10**9, number * 10**9))  # a distinct time each, oldest first
        written.append(new)
    assert index_files(tmp_path) == sorted(written[2:])


def test_small_catalogs_and_a_cache_turned_off_write_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below `min_tools` no file is written; `CODEMODE_CACHE=off` turns the default folder off entirely."""
    cached_index(TOOLS, folder=tmp_path)
    assert index_files(tmp_path) == []
    monkeypatch.setenv("CODEMODE_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.setenv("CODEMODE_CACHE", "off")
    assert default_cache_dir() is None
    monkeypatch.delenv("CODEMODE_CACHE")
    monkeypatch.delenv("CODEMODE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "codemode"


def test_the_search_command_reads_the_index_it_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`codemode search` on 1,200 tools writes the index once; the next run reads it and prints the same ranking."""
    monkeypatch.setenv("CODEMODE_CACHE_DIR", str(tmp_path / "cache"))
    rows = [
        {
            "name": f"svc{n % 7}.get_{word}_{n}",
            "description": f"Get the {word} number {n}.",
            "parameters": {
                "type": "object",
                "properties": {f"{word}_id": {"type": "string", "description": f"The {word}."}},
            },
        }
        for n, word in enumerate(["invoice", "order", "ticket", "user"] * 300)
    ]
    tools = tmp_path / "tools.jsonl"
    tools.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\njsonl = "tools.jsonl"\n', encoding="utf-8")
    argv = ["search", "order number 41", "--config", str(config), "-k", "3"]

    outputs = []
    for _ in range(2):
        capture = tmp_path / "out.txt"
        with capture.open("w") as out:
            monkeypatch.setattr("sys.stdout", out)
            assert main(argv) == 0
        outputs.append(capture.read_text())

    assert len(index_files(tmp_path / "cache")) == 1
    assert outputs[0] == outputs[1]
    assert outputs[0].startswith("1. svc6_get_order_41(*, order_id: str | None = None) -> Any")
