from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

pytest.importorskip("wordllama", reason="needs the `semantic` extra")

from codemode import Catalog, CodeMode, Tool
from codemode.search.evaluation import evaluate, load_queries, load_tools
from codemode.search.hybrid import FusionParams, HybridSearch, embedding_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

    from codemode.search._embeddings import Embedder

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


class CountingEmbedder:
    """Wraps an embedder and counts the texts it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def __call__(self, texts: Sequence[str], /) -> NDArray[np.float32]:
        self.texts.extend(texts)
        return self.inner(texts)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    from codemode.search._embeddings import StaticEmbedder

    return StaticEmbedder()


def tool(name: str, description: str, **properties: str) -> Tool:
    schema = {
        "type": "object",
        "properties": {key: {"type": "string", "description": d} for key, d in properties.items()},
    }
    return Tool(name=name, alias=name, description=description, parameters=schema)


TOOLS = [
    tool("get_weather", "Current conditions and forecast for a city.", city="The city name."),
    tool("send_email", "Send a message to one recipient by email.", to="Address.", body="Text."),
    tool("create_event", "Put a meeting on the calendar.", title="Title.", day="Day."),
    tool("convert_currency", "Exchange rate between two currencies.", source="From.", target="To."),
]


@pytest.mark.parametrize(
    ("dataset", "floor"),
    [("bfcl", 0.86), ("stabletoolbench", 0.90), ("metatool", 0.74)],
)
def test_hybrid_recall_at_5_beats_bm25_and_a_floor_on_held_out_queries(
    dataset: str, floor: float, tmp_path: Path
) -> None:
    """On 200 fixed held-out queries per real set, hybrid recall@5 and nDCG@10 beat BM25's, recall a floor.

    Measured when written: recall@5 BM25 -> hybrid 0.865 -> 0.885, 0.915 -> 0.935, 0.640 -> 0.770.
    """
    folder = DATA / dataset
    if not (folder / "tools.jsonl").exists():
        pytest.skip(f"shared data set {dataset!r} is not available")
    held_out = [q for q in load_queries(folder / "queries.jsonl") if zlib.crc32(q.query.encode()) % 2 == 1]
    queries = held_out[:: len(held_out) // 200][:200]
    tools = load_tools(folder / "tools.jsonl")
    hybrid = HybridSearch(tools, cache_dir=tmp_path)

    bm25 = evaluate(tools, queries, k=5)
    fused = evaluate(tools, queries, k=5, search=lambda q, limit: [t.name for t, _ in hybrid.search(q, limit)])

    assert fused.recall_at_k >= bm25.recall_at_k
    assert fused.ndcg_at_10 >= bm25.ndcg_at_10
    assert fused.recall_at_k >= floor


def test_a_second_index_reads_every_definition_from_the_disk_cache(embedder: Embedder, tmp_path: Path) -> None:
    """Definitions embedded once are not embedded again by a later index over the same cache folder."""
    first = CountingEmbedder(embedder)
    assert HybridSearch(TOOLS, embedder=first, cache_dir=tmp_path).prepare() == 4
    assert sorted(first.texts) == sorted(embedding_text(t) for t in TOOLS)
    assert list(tmp_path.iterdir()) == [tmp_path / "embeddings-wordllama-l2_supercat-256.npz"]

    second = CountingEmbedder(embedder)
    index = HybridSearch([*TOOLS, tool("delete_file", "Delete a file.")], embedder=second, cache_dir=tmp_path)
    assert index.prepare() == 1
    assert second.texts == ["delete file: Delete a file."]
    assert [t.name for t, _ in index.search("weather in Paris", k=1)] == ["get_weather"]


def test_without_a_cache_folder_nothing_is_written(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cache_dir=False` keeps vectors in memory; the default folder honours `CODEMODE_CACHE_DIR`."""
    monkeypatch.setenv("CODEMODE_CACHE_DIR", str(tmp_path / "default"))
    HybridSearch(TOOLS, embedder=embedder, cache_dir=False).prepare()
    assert not (tmp_path / "default").exists()
    HybridSearch(TOOLS, embedder=embedder).prepare()
    assert [p.name for p in (tmp_path / "default").iterdir()] == ["embeddings-wordllama-l2_supercat-256.npz"]


def test_a_damaged_cache_file_is_ignored_and_rewritten(embedder: Embedder, tmp_path: Path) -> None:
    """A cache file that is not a valid archive costs a re-embedding, not an error."""
    (tmp_path / "embeddings-wordllama-l2_supercat-256.npz").write_bytes(b"not a numpy archive")
    counting = CountingEmbedder(embedder)
    assert HybridSearch(TOOLS, embedder=counting, cache_dir=tmp_path).prepare() == 4
    assert HybridSearch(TOOLS, embedder=counting, cache_dir=tmp_path).prepare() == 0


def test_the_cache_file_drops_stale_and_least_recently_used_vectors(tmp_path: Path) -> None:
    """Vectors unused for `max_age_days` go, then the least recently used beyond `max_entries`."""
    import numpy as np

    from codemode.search._embeddings import EmbeddingCache

    today = [100]

    def cache() -> EmbeddingCache:
        return EmbeddingCache("model", tmp_path, max_entries=3, max_age_days=10, clock=lambda: today[0] * 86_400.0)

    def write(cache: EmbeddingCache, *texts: str) -> None:
        for text in texts:
            cache.put(text, np.ones(4, dtype=np.float32))
        cache.save()

    write(cache(), "a", "b")
    today[0] = 101
    write(cache(), "c")
    today[0] = 108
    current = cache()
    assert current.get("a") is not None  # used again: its date moves to day 108
    write(current, "d")  # four vectors, room for three: "b" (day 100) goes
    assert [text for text in "abcd" if cache().get(text) is not None] == ["a", "c", "d"]
    today[0] = 115
    write(cache(), "e")  # "c" was last used on day 101, more than 10 days ago
    assert [text for text in "abcde" if cache().get(text) is not None] == ["a", "d", "e"]


def test_following_a_catalog_adds_replaces_and_removes_tools(embedder: Embedder) -> None:
    """Tools added, replaced or removed in a followed catalog are found, updated or gone at the next search."""
    catalog = Catalog()
    catalog.extend(TOOLS[:2])
    counting = CountingEmbedder(embedder)
    index = HybridSearch(embedder=counting, cache_dir=False)
    stop = index.follow(catalog)

    def names(query: str) -> list[str]:
        return [t.name for t, _ in index.search(query, k=2)]

    assert names("weather forecast")[0] == "get_weather"
    catalog.extend([TOOLS[3]])
    assert names("exchange rate for euros")[0] == "convert_currency"
    catalog.replace(tool("get_weather", "Delete all the photos in an album."))
    assert names("remove pictures")[0] == "get_weather"
    catalog.remove("convert_currency")
    assert "convert_currency" not in index
    assert "convert_currency" not in names("exchange rate for euros")
    definitions = [text for text in counting.texts if ": " in text]  # the queries have no colon
    assert len(definitions) == 4  # two at the start, one added, one replaced: each definition embedded once
    stop()
    catalog.extend([TOOLS[2]])
    assert "create_event" not in index


def test_an_exact_name_ranks_first_and_eligible_filters(embedder: Embedder) -> None:
    """A query equal to a tool's name puts it first; `eligible` keeps other tools out of the ranking."""
    index = HybridSearch(TOOLS, embedder=embedder, cache_dir=False, fusion=FusionParams(weight=1.0))
    assert index.search("send_email", k=1)[0][0].name == "send_email"
    index = HybridSearch(TOOLS, embedder=embedder, cache_dir=False)
    found = index.search("weather forecast or an email", k=4, eligible=lambda t: t.name != "get_weather")
    assert [t.name for t, _ in found][:1] == ["send_email"]
    assert "get_weather" not in [t.name for t, _ in found]


def test_embeddings_find_what_keywords_miss(embedder: Embedder) -> None:
    """A paraphrase with no shared word still finds the tool through its embedding."""
    index = HybridSearch(TOOLS, embedder=embedder, cache_dir=False)
    assert index.search("is it going to rain tomorrow", k=1)[0][0].name == "get_weather"


async def test_code_mode_search_hybrid_ranks_with_the_hybrid_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`CodeMode(search="hybrid")` answers `tools.search`, also with a list of queries, and follows the catalog."""
    monkeypatch.setenv("CODEMODE_CACHE_DIR", str(tmp_path))
    catalog = Catalog()
    catalog.extend(TOOLS)
    async with CodeMode(catalog, search="hybrid", isolation="inline") as cm:
        code = 'return [t["name"] for t in await tools.search(["will it rain", "mail my boss"], max_results=2)]'
        result = await cm.execute(code, cm.new_state())
        assert result.run.value == snapshot(["get_weather", "send_email"])
        catalog.remove("get_weather")
        result = await cm.execute('return [t["name"] for t in await tools.search("will it rain")]', cm.new_state())
        assert isinstance(result.run.value, list)
        assert "get_weather" not in result.run.value


async def test_a_hybrid_search_object_is_filled_and_kept_in_step_with_the_catalog(embedder: Embedder) -> None:
    """`CodeMode(search=HybridSearch(...))` uses the object as its index: it gets the catalog and its changes."""
    catalog = Catalog()
    catalog.extend(TOOLS)
    index = HybridSearch(embedder=CountingEmbedder(embedder), cache_dir=False)
    async with CodeMode(catalog, search=index, isolation="inline") as cm:
        result = await cm.execute('return await tools.search("exchange rate", max_results=1)', cm.new_state())
        assert result.run.value == snapshot(
            [
                {
                    "name": "convert_currency",
                    "description": "Exchange rate between two currencies.",
                    "signature": "convert_currency(*, source: str | None = None, target: str | None = None) -> Any",
                }
            ]
        )
        assert len(index) == 4
        catalog.remove("convert_currency")
        catalog.extend([tool("fx_rates", "Foreign exchange quotes.", pair="Currency pair.")])
        assert "convert_currency" not in index
        result = await cm.execute('return (await tools.search("exchange rate"))[0]["name"]', cm.new_state())
        assert result.run.value == "fx_rates"
    assert isinstance(index.embedder, CountingEmbedder)
    definitions = [text for text in index.embedder.texts if text != "exchange rate"]
    assert len(definitions) == 5  # each definition embedded once: re-adding an indexed tool is free


def test_a_hybrid_search_object_is_also_a_ranker(embedder: Embedder) -> None:
    """Called as a `Ranker`, it indexes the tools it is handed and ranks among them only."""
    ranker = HybridSearch(embedder=embedder, cache_dir=False)
    assert ranker("exchange rate", TOOLS)[0] == "convert_currency"
    assert "convert_currency" not in ranker("exchange rate", TOOLS[:3])
    assert len(ranker) == 4


def test_an_unknown_search_name_is_refused() -> None:
    """`search=` takes "bm25", "hybrid", an index or a ranker; another string is a developer error."""
    with pytest.raises(ValueError):
        CodeMode(Catalog(), search="semantic", isolation="inline")  # type: ignore[arg-type]  # the mistake under test
