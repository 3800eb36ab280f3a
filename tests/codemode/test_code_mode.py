# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import json
import re
import sys
from typing import TYPE_CHECKING, Annotated, Literal

import anyio
import pydantic
import pytest
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode, DiscoveryState, ToolCall
from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from codemode import ExecuteResult, Tool


class Units(enum.Enum):
    METRIC = "metric"
    IMPERIAL = "imperial"


class Forecast(pydantic.BaseModel):
    city: str
    units: Units
    issued: datetime.datetime


@dataclasses.dataclass
class Reading:
    station: str
    day: datetime.date
    celsius: float


def make_catalog() -> Catalog:
    """A small catalog: a few decorated tools, a raw definition with a dotted name, and a failing tool."""
    catalog = Catalog()

    @catalog.tool
    async def get_weather(
        city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric"
    ) -> dict[str, object]:
        """Get the weather forecast for a city.

        Args:
            city: The city name, e.g. "Paris".
            days: How many days to forecast.
            units: The unit system.
        """
        return {"city": city, "days": days, "units": units}

    @catalog.tool
    def send_email(to: str, subject: str, body: Annotated[str, pydantic.Field(description="Plain text.")] = "") -> str:
        """Send an email message to one recipient."""
        return f"sent to {to}"

    @catalog.tool
    def list_calendar_events(day: str) -> list[str]:
        """List the calendar events of a day."""
        return [f"{day} standup", f"{day} review"]

    @catalog.tool
    def delete_file(path: str) -> None:
        """Delete a file from the shared drive."""
        raise PermissionError(f"{path} is read-only")

    catalog.add(
        name="math.factorial",
        description="Compute the factorial of a non-negative integer. Exact for any size.",
        parameters={
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0, "description": "The number."}},
            "required": ["n"],
            "additionalProperties": False,
        },
        handler=lambda n: 1 if n < 2 else n * 2,
    )
    return catalog


async def execute(code: str, catalog: Catalog | None = None, **options: object) -> ExecuteResult:
    """Run `code` once in a fresh inline `CodeMode` over `catalog` (the small one by default)."""
    catalog = make_catalog() if catalog is None else catalog
    async with CodeMode(catalog, isolation="inline", **options) as cm:  # type: ignore[arg-type]  # options as the test passes them
        return await cm.execute(code, cm.new_state())


async def returned(code: str, catalog: Catalog | None = None, **options: object) -> object:
    """The value `code` returns; the run must succeed."""
    result = await execute(code, catalog, **options)
    assert result.ok, result.text
    return result.run.value


# search and describe


async def test_search_returns_name_description_and_signature_best_first() -> None:
    """`tools.search` gives plain data, the best match first, with the description cut to its first sentence."""
    found = await returned('return await tools.search("weather forecast events of the day", max_results=3)')

    assert found == snapshot(
        [
            {
                "name": "get_weather",
                "description": "Get the weather forecast for a city.",
                "signature": 'get_weather(*, city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict[str, Any]',
            },
            {
                "name": "list_calendar_events",
                "description": "List the calendar events of a day.",
                "signature": "list_calendar_events(*, day: str) -> list[str]",
            },
        ]
    )


async def test_search_and_list_give_a_tools_first_sentence_cut_with_the_marker() -> None:
    """`e.g. dollars` does not end a sentence; a first sentence past 200 characters ends with the cut marker."""
    catalog = Catalog()
    empty = {"type": "object", "properties": {}}
    catalog.add(
        name="convert", description="Convert currency, e.g. dollars to euros. Rates are daily.", parameters=empty
    )
    catalog.add(name="convert_all", description="Convert " + "money " * 40 + "now. Then more.", parameters=empty)
    search = 'return [t["description"] for t in await tools.search("convert")]'
    listing = 'return [t["description"] for t in (await tools.list("convert"))["tools"]]'

    found, listed = await returned(search, catalog), await returned(listing, catalog)

    assert (
        found
        == listed
        == [
            "Convert currency, e.g. dollars to euros.",
            snapshot(
                "Convert money money money money money money money money money money money money money money money money money money money money money money money money money money money [... 83 characters cut ...]"
            ),
        ]
    )


async def test_search_honours_max_results_and_refuses_bad_arguments() -> None:
    """`max_results` caps the list; an empty query or a bad count is a ToolError saying what to pass."""
    assert await returned('return len(await tools.search("weather", max_results=1))') == 1
    empty = await execute('return await tools.search("  ")')
    many = await execute('return await tools.search("mail", max_results=500)')

    assert empty.run.error is not None
    assert empty.run.error.message == snapshot(
        'ToolError: tools.search() needs a query string, e.g. `await tools.search("send an email")` (line 1)'
    )
    assert many.run.error is not None
    assert many.run.error.message == snapshot(
        "ToolError: tools.search(max_results=...) must be an int from 1 to 50 (line 1)"
    )


async def test_a_sync_custom_ranker_replaces_search_and_drops_unknown_and_repeated_names() -> None:
    """The ranker gets the query and the tools; its names (original or alias) come back in its order, cleaned."""
    queries: list[str] = []

    def ranker(query: str, tools: Sequence[Tool]) -> list[str]:
        queries.append(query)
        assert {tool.name for tool in tools} >= {"send_email", "math.factorial"}
        return ["no_such_tool", "send_email", "math.factorial", "send_email", "math_factorial", "get_weather"]

    found = await returned('return [t["name"] for t in await tools.search("anything", max_results=5)]', search=ranker)
    cut = await returned('return [t["name"] for t in await tools.search("anything", max_results=1)]', search=ranker)

    assert found == ["send_email", "math_factorial", "get_weather"]
    assert cut == ["send_email"]
    assert queries == ["anything", "anything"]


async def test_an_async_custom_ranker_is_awaited() -> None:
    """An async ranker works like a sync one, and the tools it finds are announced."""

    async def ranker(query: str, tools: Sequence[Tool]) -> list[str]:
        await anyio.lowlevel.checkpoint()
        return [*[tool.alias for tool in tools if query in tool.description.lower()][::-1], "ghost", "ghost"]

    result = await execute('return [t["name"] for t in await tools.search("the ")]', search=ranker)

    assert result.run.value == ["math_factorial", "delete_file", "list_calendar_events", "get_weather"]
    assert [name for name, _, _ in result.announced.seen] == [
        "math.factorial",
        "delete_file",
        "list_calendar_events",
        "get_weather",
    ]


async def test_an_index_object_is_filled_with_the_catalog_and_follows_its_changes() -> None:
    """`search=` may be an index (`add`, `remove`, `search`, `in`): it gets every tool and every change."""

    class PrefixIndex:
        """Ranks tools whose name starts with the query, in the order they were added."""

        def __init__(self) -> None:
            self.tools: dict[str, Tool] = {}

        def __contains__(self, name: object) -> bool:
            return name in self.tools

        def add(self, tool: Tool) -> None:
            self.tools[tool.name] = tool

        def remove(self, name: str) -> None:
            del self.tools[name]

        def search(self, query: str, k: int = 5) -> list[tuple[Tool, float]]:
            return [(tool, 1.0) for name, tool in self.tools.items() if name.startswith(query)][:k]

    catalog = make_catalog()
    index = PrefixIndex()
    async with CodeMode(catalog, search=index, isolation="inline") as cm:
        assert set(index.tools) == {tool.name for tool in catalog}
        catalog.remove("delete_file")
        catalog.add(name="delete_folder", description="Delete a folder.", parameters={"type": "object"})
        result = await cm.execute('return [t["name"] for t in await tools.search("delete")]', cm.new_state())
    assert result.run.value == ["delete_folder"]


def test_a_search_that_is_neither_an_index_nor_a_ranker_is_refused() -> None:
    """An object with no `search`/`add`/`remove` that cannot be called is a developer error, raised at once."""
    with pytest.raises(TypeError, match=r"an index .* or a ranker function"):
        CodeMode(Catalog(), search=42, isolation="inline")  # type: ignore[arg-type]  # the mistake under test


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"limits": Limits(timeout=1.0)}, "limits=..."),
        ({"isolation": "inline"}, "isolation=..."),
        ({"limits": Limits(timeout=1.0), "isolation": "process"}, "limits=..., isolation=..."),
        ({"max_runs": 4}, "max_runs=..."),
    ],
)
def test_limits_or_isolation_beside_a_given_sandbox_are_refused(settings: dict[str, object], named: str) -> None:
    """`CodeMode(sandbox=..., limits=...)` or `isolation=...` raises, since the sandbox's own settings would win."""
    sandbox = Sandbox(isolation="inline", limits=Limits(timeout=9.0))
    with pytest.raises(ValueError) as refused:
        CodeMode(Catalog(), sandbox=sandbox, **settings)  # type: ignore[arg-type]  # the mistake under test
    assert str(refused.value) == (
        f"CodeMode(sandbox=..., {named}): a given sandbox runs with its own limits, isolation and cap on runs; "
        "pass them to `Sandbox(...)` instead, or leave out `sandbox=`"
    )
    assert CodeMode(Catalog(), sandbox=sandbox).limits.timeout == 9.0


@pytest.mark.parametrize(("max_runs", "patience", "expected"), [(None, 30.0, {"met"}), (2, 0.5, {"alone", "met"})])
async def test_max_runs_is_how_many_runs_wait_on_their_tools_at_once(
    max_runs: int | None, patience: float, expected: set[str]
) -> None:
    """Three conversations whose runs each wait for the other two: by default all meet; with `max_runs=2` the third
    run waits for its turn while the first two wait for it, so at least one gives up after `patience` seconds."""
    arrived = 0
    everyone = anyio.Event()
    catalog = Catalog()

    @catalog.tool
    async def meet() -> str:
        """Wait until three callers have arrived."""
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            everyone.set()
        with anyio.move_on_after(patience):
            await everyone.wait()
            return "met"
        return "alone"

    async with CodeMode(catalog, max_runs=max_runs) as cm:
        results: list[str] = []

        async def conversation() -> None:
            result = await cm.execute("return await tools.meet()", cm.new_state())
            results.append(str(result.run.value))

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(conversation)
    assert len(results) == 3
    assert set(results) == expected


def test_search_hybrid_without_the_semantic_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the extra's packages, `search="hybrid"` fails at once with the install command."""
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now raises ImportError, as if not installed
    for module in ("codemode.search.hybrid", "codemode.search._embeddings"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ImportError, match=re.escape('pip install "codemode[semantic]"')):
        CodeMode(Catalog(), search="hybrid", isolation="inline")


async def test_describe_accepts_the_alias_and_the_original_name() -> None:
    """`tools.describe` returns the full stub, whichever spelling of the name it is given."""
    stubs = await returned('return [await tools.describe("math_factorial"), await tools.describe("math.factorial")]')

    assert isinstance(stubs, list)
    assert stubs[0] == stubs[1]
    assert stubs[0] == snapshot('''\
async def math_factorial(*, n: int) -> Any:
    """Compute the factorial of a non-negative integer. Exact for any size.

    (original name: math.factorial)

    Args:
        n: The number. (>= 0)
    """
    ...
''')


async def test_tools_found_by_search_can_be_called_with_getattr_and_subscripts() -> None:
    """`getattr(tools, name)` and `tools[name]` work with a name search returned, and with the original name."""
    code = """
found = await tools.search("factorial")
name = found[0]["name"]
return [name, await getattr(tools, name)(n=3), await tools[name](n=4), await tools["math.factorial"](n=5)]
"""
    assert await returned(code) == ["math_factorial", 6, 8, 10]


async def test_a_tool_called_by_exact_name_without_a_search_works_and_is_announced() -> None:
    """Knowing the name is enough to call a catalog tool; the call is a discovery like any other."""
    result = await execute('return await tools.get_weather(city="Paris", days=2)')

    assert result.run.value == {"city": "Paris", "days": 2, "units": "metric"}
    assert [name for name, _ in result.announced.new] == ["get_weather"]


# errors the model reads


async def test_validation_errors_name_the_parameter_what_was_expected_and_what_was_given() -> None:
    """Wrong types, missing and unexpected arguments are ToolErrors with the signature to follow."""
    codes = [
        "await tools.get_weather(city=3)",
        'await tools.get_weather(city="Paris", units="kelvin")',
        "await tools.get_weather(days=2)",
        'await tools.get_weather(city="Paris", country="FR")',
        "await tools.math_factorial(n=-1)",
        "await tools.math_factorial(n=2, m=3)",
    ]
    messages = []
    for code in codes:
        result = await execute(code)
        assert result.run.error is not None
        assert result.run.error.type_name == "ToolError"
        messages.append(result.run.error.message)

    assert messages == snapshot(
        [
            'ToolError: tools.get_weather(): argument `city`: 3 is not of type \'string\' (given 3). Signature: get_weather(*, city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict[str, Any] (line 1)',
            'ToolError: tools.get_weather(): argument `units`: \'kelvin\' is not one of [\'metric\', \'imperial\'] (given "kelvin"). Signature: get_weather(*, city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict[str, Any] (line 1)',
            'ToolError: tools.get_weather(): missing required argument `city`. Signature: get_weather(*, city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict[str, Any] (line 1)',
            'ToolError: tools.get_weather(): unexpected argument `country`. Signature: get_weather(*, city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict[str, Any] (line 1)',
            "ToolError: tools.math_factorial(): argument `n`: -1 is less than the minimum of 0 (given -1). Signature: math_factorial(*, n: int) -> Any (line 1)",
            "ToolError: tools.math_factorial(): unexpected argument `m`. Signature: math_factorial(*, n: int) -> Any (line 1)",
        ]
    )


async def test_an_argument_the_stub_does_not_offer_is_refused_before_the_handler_runs() -> None:
    """What the stub shows is what is accepted: an extra argument is an `unexpected argument` ToolError."""
    calls: list[object] = []
    catalog = Catalog()
    catalog.add(
        name="get_time",
        description="Get the local time.",
        parameters={"type": "object", "properties": {"tz": {"type": "string"}}},
        handler=lambda **kwargs: calls.append(kwargs),
    )

    stub = await returned('return await tools.describe("get_time")', catalog)
    result = await execute('await tools.get_time(tz="UTC", city="Oslo")', catalog, hide_errors=True)

    assert "**kwargs" not in str(stub)
    assert calls == []
    assert result.run.error is not None
    assert "unexpected argument" in result.run.error.message
    assert "city" in result.run.error.message
    assert "get_time(*, tz: str | None = None)" in result.run.error.message


async def test_the_model_can_catch_a_tool_error_and_read_its_message() -> None:
    """`ToolError` is a name in the sandbox; catching it gives the same message as an uncaught one."""
    code = "try:\n    await tools.math_factorial(n='3')\nexcept ToolError as e:\n    return str(e)"

    assert await returned(code) == snapshot(
        """tools.math_factorial(): argument `n`: '3' is not of type 'integer' (given "3"). Signature: math_factorial(*, n: int) -> Any"""
    )


async def test_an_unknown_tool_name_lists_close_matches_and_suggests_search() -> None:
    """A misspelt name, by attribute, subscript or describe, says which tools were meant and how to search."""
    messages = []
    for code in (
        'await tools.get_wether(city="Paris")',
        'await tools["send-email"](to="a@b.c", subject="hi")',
        'await tools.describe("math_factorail")',
        "await tools.book_flight(to='LIS')",
    ):
        result = await execute(code)
        assert result.run.error is not None
        messages.append(result.run.error.message)

    assert messages == snapshot(
        [
            "ToolError: there is no tool named 'get_wether'. Did you mean: get_weather? Find tools with `await tools.search(\"what you need\")`. (line 1)",
            "ToolError: there is no tool named 'send-email'. Did you mean: send_email? Find tools with `await tools.search(\"what you need\")`. (line 1)",
            "ToolError: there is no tool named 'math_factorail'. Did you mean: math_factorial? Find tools with `await tools.search(\"what you need\")`. (line 1)",
            "ToolError: there is no tool named 'book_flight'. Find tools with `await tools.search(\"what you need\")`. (line 1)",
        ]
    )


async def test_a_tool_or_argument_name_past_the_bound_is_refused_with_its_start_and_no_suggestions() -> None:
    """A 100,000-character name to describe, or as an argument of a tool or a helper: refused, quoted short."""
    messages = []
    for call in (
        "tools.describe(name)",
        'tools.get_weather(city="Paris", **{name: 1})',
        'tools.search("weather", **{name: 1})',
    ):
        result = await execute(f'name = "ab" * 50_000\nawait {call}')
        assert result.run.error is not None
        messages.append(result.run.error.message)

    assert messages == snapshot(
        [
            "ToolError: a tool name 'abababababababababababababababababababab'... is 100,000 characters long; one is at most 256. Find tools with `await tools.search(\"what you need\")`. (line 2)",
            'ToolError: tools.get_weather(): an argument name \'abababababababababababababababababababab\'... is 100,000 characters long; one is at most 256. Signature: get_weather(*, city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict[str, Any] (line 2)',
            "ToolError: tools.search(query, max_results=5): an argument name 'abababababababababababababababababababab'... is 100,000 characters long; one is at most 256 (line 2)",
        ]
    )


async def test_positional_arguments_are_refused_with_the_signature() -> None:
    """Tools take keyword arguments only, and the error shows how to call this one."""
    result = await execute('await tools.send_email("a@b.c", "hi")')

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        'ToolError: tools.send_email() takes keyword arguments only: send_email(*, to: str, subject: str, body: str = "") -> str (line 1)'
    )


async def test_a_handler_exception_reaches_the_model_as_tool_error_with_its_type_and_message() -> None:
    """`ToolError: <Type>: <message>` by default; with `hide_errors=True` only the type is shown."""
    shown = await execute('await tools.delete_file(path="/etc/passwd")')
    hidden = await execute('await tools.delete_file(path="/etc/passwd")', hide_errors=True)

    assert shown.text == snapshot("""\
Traceback (most recent call last):
  line 1, in <module>
    await tools.delete_file(path="/etc/passwd")
ToolError: PermissionError: /etc/passwd is read-only (line 1)\
""")
    assert hidden.run.error is not None
    assert hidden.run.error.message == snapshot("ToolError: PermissionError (line 1)")
    assert "read-only" not in hidden.text


async def test_a_tool_loaded_from_jsonl_is_searchable_and_says_it_has_no_handler(tmp_path: Path) -> None:
    """Definitions without handlers are found, described and validated; a call says why it cannot run."""
    path = tmp_path / "tools.jsonl"
    definition = {
        "name": "create_issue",
        "description": "Create a new issue in a GitHub repository.",
        "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    }
    path.write_text(json.dumps(definition) + "\n", encoding="utf-8")
    catalog = Catalog()
    catalog.load_jsonl(path)

    found = await returned('return [t["name"] for t in await tools.search("open an issue")]', catalog)
    bad = await execute("await tools.create_issue(title=1)", catalog)
    result = await execute('await tools.create_issue(title="Bug")', catalog)

    assert found == ["create_issue"]
    assert bad.run.error is not None
    assert "argument `title`" in bad.run.error.message
    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.create_issue() has no handler here (its definition was loaded without one) (line 1)"
    )


# results


async def test_pydantic_models_dataclasses_enums_and_datetimes_arrive_as_json() -> None:
    """Whatever a handler returns that pydantic can serialise reaches the code as plain JSON data."""
    catalog = Catalog()

    @catalog.tool
    def forecast() -> Forecast:
        """Get a forecast."""
        return Forecast(city="Oslo", units=Units.METRIC, issued=datetime.datetime(2026, 1, 2, 3, 4, 5))

    @catalog.tool
    def readings() -> list[Reading]:
        """Get the readings."""
        return [Reading(station="A1", day=datetime.date(2026, 1, 2), celsius=-3.5)]

    @catalog.tool
    def mixed() -> dict[str, object]:
        """Get mixed data."""
        return {"units": Units.IMPERIAL, "tags": frozenset({"x"}), "pair": (1, 2), "at": datetime.time(12, 30)}

    code = "return [await tools.forecast(), await tools.readings(), await tools.mixed()]"

    assert await returned(code, catalog) == snapshot(
        [
            {"city": "Oslo", "units": "metric", "issued": "2026-01-02T03:04:05"},
            [{"station": "A1", "day": "2026-01-02", "celsius": -3.5}],
            {"units": "imperial", "tags": ["x"], "pair": [1, 2], "at": "12:30:00"},
        ]
    )


async def test_a_result_that_is_not_json_is_a_tool_error_that_blames_the_tool() -> None:
    """A set of plain objects cannot reach the code; the model is told it is the tool's fault."""
    catalog = Catalog()
    catalog.add(name="objects", description="Objects.", parameters={"type": "object"}, handler=lambda: {object()})

    objects = await execute("await tools.objects()", catalog)

    assert objects.run.error is not None
    assert objects.run.error.message == snapshot(
        "ToolError: tools.objects() returned data that is not JSON (a value of type 'object' is not JSON data); this is a bug in the tool, not in your code (line 1)"
    )


async def test_an_open_file_returned_by_a_handler_is_a_tool_error(tmp_path: Path) -> None:
    """A file object is not JSON data: the model gets a ToolError, never the file's contents."""
    path = tmp_path / "secret.txt"
    path.write_text("host-only line\n", encoding="utf-8")
    catalog = Catalog()
    with path.open(encoding="utf-8") as opened, io.StringIO("buffered line\n") as buffer:
        catalog.add(name="open_file", description="File.", parameters={"type": "object"}, handler=lambda: opened)
        catalog.add(name="buffer", description="Buffer.", parameters={"type": "object"}, handler=lambda: buffer)
        results = [await execute(f"return await tools.{name}()", catalog) for name in ("open_file", "buffer")]

    assert [result.run.error and result.run.error.message for result in results] == snapshot(
        [
            "ToolError: tools.open_file() returned data that is not JSON (a value of type 'TextIOWrapper' is not JSON data); this is a bug in the tool, not in your code (line 1)",
            "ToolError: tools.buffer() returned data that is not JSON (a value of type 'StringIO' is not JSON data); this is a bug in the tool, not in your code (line 1)",
        ]
    )
    assert [result.run.value for result in results] == [None, None]


async def test_a_result_over_max_tool_result_is_an_error_the_model_can_act_on() -> None:
    """The size, the limit and what to do about it, rather than a crash or a flood of data."""
    catalog = Catalog()

    @catalog.tool
    def export_rows(count: int) -> list[dict[str, object]]:
        """Export table rows."""
        return [{"id": i, "name": f"row {i}"} for i in range(count)]

    small = await returned("return len(await tools.export_rows(count=3))", catalog, max_tool_result=1000)
    big = await execute("return await tools.export_rows(count=100)", catalog, max_tool_result=1000)

    assert small == 3
    assert big.run.error is not None
    assert big.run.error.message == snapshot(
        "ToolError: tools.export_rows() returned 2,980 bytes, over the 1,000 byte limit; ask for less (filters, pagination, fewer fields) (line 1)"
    )


async def test_result_calls_records_each_call_with_name_arguments_and_outcome() -> None:
    """`result.calls` lists every tool call in order, failed ones with the message the model saw."""
    code = """
await tools.math_factorial(n=3)
try:
    await tools.delete_file(path="a.txt")
except ToolError:
    pass
await tools["get_weather"](city="Rome", units="imperial")
"""
    result = await execute(code)

    assert [dataclasses.replace(call, duration=0.0) for call in result.calls] == snapshot(
        [
            ToolCall(name="math.factorial", arguments={"n": 3}, duration=0.0, ok=True, result=6),
            ToolCall(
                name="delete_file",
                arguments={"path": "a.txt"},
                duration=0.0,
                ok=False,
                error="PermissionError: a.txt is read-only",
            ),
            ToolCall(
                name="get_weather",
                arguments={"city": "Rome", "units": "imperial"},
                duration=0.0,
                ok=True,
                result={"city": "Rome", "days": 1, "units": "imperial"},
            ),
        ]
    )
    assert all(call.duration >= 0 for call in result.calls)


# the text the model reads


async def test_result_text_shows_output_then_the_returned_json() -> None:
    """Printed output comes first, then `Returned:` and the value as indented JSON."""
    result = await execute('print("looking up Paris")\nprint("done")\nreturn {"city": "Paris", "temps": [12, 14]}')

    assert result.text == snapshot("""\
looking up Paris
done
Returned: {
 "city": "Paris",
 "temps": [
  12,
  14
 ]
}\
""")


async def test_result_text_shows_output_then_the_error_traceback() -> None:
    """A failing run shows what it printed, then the traceback of the model's own frames."""
    result = await execute('rows = [1, 2]\nprint("got", len(rows))\nreturn rows[5]')

    assert not result.ok
    assert result.text == snapshot("""\
got 2
Traceback (most recent call last):
  line 3, in <module>
    return rows[5]
IndexError: list index out of range (line 3)\
""")


async def test_printing_a_thousand_rows_cuts_the_output_and_the_run_goes_on_to_its_return() -> None:
    """`print(rows)` of a large result is cut in its middle with a count; the `return` after it still runs."""
    result = await execute("rows = [{'id': i, 'name': 'x' * 50} for i in range(1_000)]\nprint(rows)\nreturn len(rows)")

    assert result.ok
    assert result.run.value == 1000
    assert result.run.stdout == str([{"id": i, "name": "x" * 50} for i in range(1_000)]) + "\n"
    assert len(result.text) <= 20_100
    assert result.text.startswith("[{'id': 0, 'name': ")
    assert result.text.endswith("{'id': 999, 'name': '" + "x" * 50 + "'}]\nReturned: 1000")
    assert re.search(r"\n\[\.\.\. [\d,]+ characters cut \.\.\.\]\n", result.text)


async def test_a_flood_of_output_stops_the_run_and_the_model_still_reads_its_start_and_the_calls_made() -> None:
    """Past `Limits.flood` the run stops with `output_limit`; the text keeps the first lines and the calls listing."""
    code = 'await tools.get_weather(city="Oslo")\nprint("first line")\nwhile True:\n    print("x" * 1000)'
    result = await execute(code, limits=Limits(timeout=5.0, flood=200_000))

    assert result.run.error is not None
    assert result.run.error.kind == "output_limit"
    assert result.text.startswith("first line\n")
    assert len(result.text) <= 20_100
    assert result.text.splitlines()[-2:] == snapshot(
        ["Tool calls before the run stopped: 1 completed (1 ok, 0 failed):", '  ok     get_weather(city="Oslo")']
    )


async def test_a_long_returned_value_keeps_its_json_shape_with_a_count_of_the_items_cut() -> None:
    """A long list shows its first items and a count of the rest; `run.value` stays whole."""
    result = await execute('return ["x" * 100 for _ in range(300)]')

    assert result.run.value == ["x" * 100] * 300
    assert result.value_truncated
    assert len(result.text) < 20_100
    shown = json.loads(result.text.removeprefix("Returned: ").rsplit("\n", 1)[0])
    assert shown == ["x" * 100] * 100 + ["[... 200 items cut ...]"]
    keyed = await execute('return {f"k{i}": "v" * 40 for i in range(1_000)}', display_budget=1_000)
    shown = json.loads(keyed.text.removeprefix("Returned: ").rsplit("\n", 1)[0])
    assert list(shown)[-1] == "..."
    assert shown["..."] == f"[... {1_000 - len(shown) + 1} keys cut ...]"
    assert all(shown[f"k{i}"] == "v" * 40 for i in range(len(shown) - 1))
    assert result.text.splitlines()[-1] == snapshot(
        "[the value is cut to fit what you read of a run: `return` only what you need]"
    )


async def test_the_display_budget_is_shared_and_configurable() -> None:
    """With `display_budget=`, output and value together stay within it; a small value leaves the rest to the output."""
    code = 'print("y" * 5_000)\nreturn {"rows": list(range(2_000)), "note": "n" * 3_000}'
    small = await execute(code, display_budget=2_000)
    whole = await execute('print("y" * 1_500)\nreturn 7', display_budget=2_000)

    assert len(small.text) <= 2_200
    assert small.value_truncated
    assert small.text.count("characters cut") >= 1
    assert whole.text == "y" * 1_500 + "\nReturned: 7"


async def test_result_text_says_how_to_see_something_when_there_is_nothing() -> None:
    """A run that neither prints nor returns tells the model how to get output."""
    assert (await execute("x = 1")).text == snapshot("(no output: `print` what you need to see, or `return` a value)")


# the code tool


async def test_the_code_tool_is_byte_identical_after_the_catalog_grows_and_after_many_runs() -> None:
    """Adding 1,000 tools and running searches and calls never changes `cm.tool`."""
    catalog = make_catalog()
    async with CodeMode(catalog, isolation="inline") as cm:
        before = json.dumps(cm.tool.to_json())
        base = catalog.get("math.factorial")
        assert base is not None
        catalog.extend(
            dataclasses.replace(
                base,
                name=f"extra.tool_{i}",
                alias=f"extra_tool_{i}",
                description=f"Extra tool number {i} for ledger {i % 7}.",
                deferred=i % 10 != 0,
            )
            for i in range(1000)
        )
        grown = json.dumps(cm.tool.to_json())
        state = cm.new_state()
        for i in range(20):
            await cm.execute(f'await tools.search("ledger {i}")\nawait tools.extra_tool_{i}(n=1)', state)
        after = json.dumps(cm.tool.to_json())

    assert len(catalog) == 1005
    assert len(state.announced) > 20
    assert before == grown == after


async def test_the_code_tool_describes_the_api_and_the_limits() -> None:
    """`cm.tool` is `code` taking one string, with a description that teaches search, describe and calls."""
    async with CodeMode(Catalog(), isolation="inline") as cm:
        tool = cm.tool.to_json()

    assert tool["name"] == "code"
    assert tool["input_schema"] == snapshot(
        {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python source to run."}},
            "required": ["code"],
            "additionalProperties": False,
        }
    )
    assert tool["description"] == snapshot("""\
Run Python to find and use tools. The code is the body of an async function: use top-level `await`,
and `return` a value or `print` what you need to see. Only printed output and the returned value come
back, so filter, join and summarise data in code rather than returning it all.

- `await tools.search("what you need", max_results=5)` -> [{"name", "description", "signature"}].
  Pass a list of queries to look for several things at once. Tools you find are shown to you after the
  run, one line each; a tool you call or describe is shown in full.
- `await tools.describe(name)` -> one tool's full definition as a Python stub.
- `await tools.list(prefix="", page=1)` -> {"tools": [{"name", "description"}], "page", "pages", "total"}:
  browse the catalog by name, without fetching definitions.
- `await tools.<name>(arg=value, ...)` calls a tool with keyword arguments; results are JSON data.
  A failed call raises `ToolError` with a message saying what to fix.
- Run independent calls together: `a, b = await asyncio.gather(tools.x(...), tools.y(...))`.
- Modules: asyncio, json, math, re, datetime, collections, itertools, functools, statistics, random, string, textwrap, decimal, fractions, base64, hashlib, uuid, heapq, bisect, typing, dataclasses, copy, enum, operator, time, unicodedata, html, urllib.parse, calendar, difflib, abc, logging, traceback, sys. No files, network or processes.
- Per run: 30 s, 1,000 tool calls. You read about 20,000 characters
  of what it prints and returns; more is cut (a long list shows its first items), but the run goes on.\
""")


async def test_always_loaded_tools_are_in_the_code_tool_and_never_announced() -> None:
    """`deferred=False` puts the stub in the tool description; searching, describing or calling it announces nothing."""
    catalog = make_catalog()

    @catalog.tool(deferred=False)
    def ping() -> str:
        """Check that the service answers."""
        return "pong"

    async with CodeMode(catalog, isolation="inline") as cm:
        state = cm.new_state()
        result = await cm.execute(
            'await tools.search("check that the service answers")\nawait tools.describe("ping")\n'
            "return await tools.ping()",
            state,
        )

    assert cm.tool.description.partition("\n\nTools you can call without searching:\n\n")[2] == (
        snapshot('''\
async def ping() -> str:
    """Check that the service answers."""
    ...\
''')
    )
    assert result.run.value == "pong"
    assert "ping" not in state.announced
    assert all(name != "ping" for name, _ in result.announced.new)


# concurrency and the process boundary


def gate_catalog(expected: int) -> Catalog:
    """A catalog whose `wait_for_all` handler returns only once `expected` calls are in flight together."""
    catalog = Catalog()
    started: list[int] = []
    all_started = anyio.Event()

    @catalog.tool
    async def wait_for_all(i: int) -> int:
        """Wait until every call has started."""
        started.append(i)
        if len(started) == expected:
            all_started.set()
        with anyio.fail_after(5):
            await all_started.wait()
        return i * i

    return catalog


GATHER = "import asyncio\nreturn await asyncio.gather(*[tools.wait_for_all(i=i) for i in range(6)])"


async def test_concurrent_tool_calls_with_asyncio_gather_really_run_concurrently() -> None:
    """Six gathered calls are all in flight at once (a serial runtime would time out in the first call)."""
    with anyio.fail_after(10):
        result = await execute(GATHER, gate_catalog(6))

    assert result.ok, result.text
    assert result.run.value == [0, 1, 4, 9, 16, 25]
    assert len(result.calls) == 6


async def test_process_isolation_runs_search_calls_errors_and_concurrency_across_the_boundary() -> None:
    """With the default process sandbox, searches, gathered calls, ToolErrors and announcements all work."""
    catalog = make_catalog()
    catalog.extend(gate_catalog(6))
    with anyio.fail_after(20):
        async with CodeMode(catalog) as cm:
            state = cm.new_state()
            found = await cm.execute('return [t["name"] for t in await tools.search("send an email")][:1]', state)
            gathered = await cm.execute(GATHER, state)
            failed = await cm.execute("await tools.get_weather(city=1)", state)

    assert found.run.value == ["send_email"]
    assert gathered.run.value == [0, 1, 4, 9, 16, 25]
    assert failed.run.error is not None
    assert failed.run.error.message.startswith("ToolError: tools.get_weather(): argument `city`")
    assert sorted(state.announced) == ["get_weather", "send_email", "wait_for_all"]


async def test_process_isolation_returns_the_same_text_and_announcement_as_inline() -> None:
    """The process boundary changes nothing the model sees."""
    code = 'print(await tools.search("weather", max_results=1))\nreturn await tools.math_factorial(n=4)'
    results = []
    for isolation in ("inline", "process"):
        async with CodeMode(make_catalog(), isolation=isolation) as cm:
            state = cm.new_state()
            results.append(await cm.execute(code, state))

    inline, process = results
    assert process.ok
    assert (process.text, process.announcement, process.calls[0].name) == (
        inline.text,
        inline.announcement,
        inline.calls[0].name,
    )
    assert DiscoveryState.from_history([process.announcement or ""]) == DiscoveryState.from_history(
        [inline.announcement or ""]
    )


def test_the_code_tool_names_every_module_the_sandbox_lets_code_import() -> None:
    """The model learns what it may import from the tool's description; it must match what imports succeed."""
    from codemode.code_tool import MODULES
    from sandbox._runtime.stdlib.modules import ALLOWED_MODULES

    umbrellas = {"urllib", "collections.abc"}  # reached as `urllib.parse` and `collections.abc` of `collections`
    assert sorted(MODULES) == sorted(ALLOWED_MODULES - umbrellas)
