"""The `search=` option bound to a catalog: one subscription, released by `aclose`, caught up on re-entry."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from codemode import Catalog, CodeMode
from codemode.search import CatalogSearch, SearchIndex, build_index

if TYPE_CHECKING:
    from codemode import Tool

EMPTY = {"type": "object", "properties": {}}


def make_catalog(*names: str) -> Catalog:
    catalog = Catalog()
    for name in names:
        catalog.add(name=name, description=f"{name.replace('_', ' ')}.", parameters=EMPTY)
    return catalog


class RecordingIndex:
    """A `ToolIndex` that records what it is told and ranks tools whose name starts with the query."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.told: list[str] = []

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def add(self, tool: Tool) -> None:
        self.told.append(f"add {tool.name}")
        self.tools[tool.name] = tool

    def remove(self, name: str) -> None:
        self.told.append(f"remove {name}")
        del self.tools[name]

    def search(self, query: str, k: int = 5) -> list[tuple[Tool, float]]:
        return [(tool, 1.0) for name, tool in self.tools.items() if name.startswith(query)][:k]


async def test_closed_code_modes_leave_no_subscriber_on_their_catalog() -> None:
    """Three `CodeMode`s over one catalog, each closed, leave it with no subscriber and their indexes untold."""
    catalog = make_catalog("send_email")
    indexes = [RecordingIndex(), RecordingIndex()]
    for search in [*indexes, None]:
        async with CodeMode(catalog, search=search, isolation="inline"):
            pass
    catalog.add(name="send_sms", description="Send a text message.", parameters=EMPTY)

    assert catalog._subscribers == []  # the catalog's only record of who follows it
    assert [index.told for index in indexes] == [["add send_email"], ["add send_email"]]


async def test_a_reentered_code_mode_catches_up_with_changes_made_while_it_was_closed() -> None:
    """After `aclose`, `async with` again indexes what was added or replaced and drops what was removed."""
    catalog = make_catalog("send_email", "delete_file", "delete_folder")
    index = RecordingIndex()
    code_mode = CodeMode(catalog, search=index, isolation="inline")
    async with code_mode:
        pass
    catalog.remove("delete_file")
    catalog.add(name="delete_user", description="Delete a user.", parameters=EMPTY)
    index.told.clear()
    async with code_mode as cm:
        result = await cm.execute('return [t["name"] for t in await tools.search("delete")]', cm.new_state())

    assert index.told == ["remove delete_file", "add delete_user"]
    assert result.run.value == ["delete_folder", "delete_user"]


def test_a_ranker_does_not_subscribe_to_the_catalog() -> None:
    """A ranker is handed the catalog's tools on each search, so nothing follows the catalog for it."""
    catalog = make_catalog("send_email")
    CatalogSearch(catalog, lambda query, tools: [tool.name for tool in tools])
    assert catalog._subscribers == []


async def test_the_default_search_follows_the_catalog_until_closed() -> None:
    """The default BM25F search finds a tool added after it was made, and not one added after `close`."""
    catalog = make_catalog("send_email")
    search = CatalogSearch(catalog)
    catalog.add(name="send_sms", description="Send a text message.", parameters=EMPTY)
    found = [tool.name for tool in await search("send", 5)]
    search.close()
    catalog.add(name="send_fax", description="Send a fax.", parameters=EMPTY)

    assert found == ["send_email", "send_sms"]
    assert [tool.name for tool in await search("send", 5)] == ["send_email", "send_sms"]


def test_build_index_makes_the_named_index_and_refuses_other_names() -> None:
    """`build_index("bm25", tools)` is a filled `SearchIndex`; an unknown name is a `ValueError` naming the choices."""
    tools = list(make_catalog("send_email"))
    index = build_index("bm25", tools)
    assert isinstance(index, SearchIndex)
    assert [tool.name for tool, _ in index.search("email")] == ["send_email"]
    with pytest.raises(ValueError, match='expected "bm25", "hybrid", an index or a ranker function'):
        build_index("bm52", tools)  # type: ignore[arg-type]  # the mistake under test
