# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""A tool's result on the host: converted, measured and encoded once, checked again only where a hook touched it."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import ipaddress
from typing import TYPE_CHECKING, Any

import pytest
from inline_snapshot import snapshot
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, SecretStr

from codemode import Catalog, CodeMode
from codemode.policy import CallOutcome, Policy, ReplaceResult
from sandbox import Sandbox

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode import ExecuteResult

ISOLATIONS = pytest.mark.parametrize("isolation", ["inline", "process"])


class Color(enum.StrEnum):
    """A str Enum, as tools return them: its JSON is its value."""

    RED = "red"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The module's sandboxes live on one event loop."""
    return "asyncio"


@pytest.fixture(scope="module")
async def sandboxes() -> AsyncIterator[dict[str, Sandbox]]:
    """One open sandbox per isolation, shared by the module's tests."""
    async with Sandbox(isolation="inline") as inline, Sandbox(isolation="process") as process:
        yield {"inline": inline, "process": process}


def rows_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    def export_rows(count: int) -> list[dict[str, Any]]:
        """Export table rows."""
        return [{"id": i, "name": f"row {i}"} for i in range(count)]

    @catalog.tool
    def paint() -> dict[str, Any]:
        """The colour of a thing."""
        return {"color": Color.RED, "shades": (1, 2)}

    @catalog.tool
    def flood() -> list[str]:
        """A list of one big string, listed many times: a few objects, far too much JSON."""
        return ["x" * 1000] * 1_000_000

    return catalog


async def execute(sb: Sandbox, code: str, **options: Any) -> ExecuteResult:
    async with CodeMode(rows_catalog(), sandbox=sb, **options) as cm:
        return await cm.execute(code, cm.new_state())


@ISOLATIONS
async def test_a_converted_result_reaches_the_code_with_no_second_check(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """The sandbox takes the text codemode encoded: a str Enum arrives as its value (a check would refuse it)."""
    result = await execute(sandboxes[isolation], "r = await tools.paint()\nreturn [r, type(r['color']).__name__]")

    assert result.run.value == [{"color": "red", "shades": [1, 2]}, "str"]
    assert result.calls[0].result == {"color": Color.RED, "shades": [1, 2]}


@ISOLATIONS
async def test_a_result_an_after_hook_replaced_is_checked_in_full(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """What a hook hands back is not taken on trust: the sandbox's check names the place that is not JSON."""

    def replace(outcome: CallOutcome) -> ReplaceResult:
        return ReplaceResult({"rows": [1, {2, 3}]})  # type: ignore[dict-item]  # a hook's bug, as the test means it

    result = await execute(sandboxes[isolation], "return await tools.paint()", policy=Policy(after=[replace]))

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "TypeError: `tools.paint` returned data that is not JSON: value['rows'][1] is a set, not JSON data (use dict, list, str, int, float, bool, None) (line 1)"
    )


@ISOLATIONS
async def test_a_result_an_after_hook_changed_in_place_is_checked_in_full(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """A hook that edits the result it was shown, rather than replace it, is checked too: the edit is what goes on."""

    def edit(outcome: CallOutcome) -> None:
        assert isinstance(outcome.result, list)
        outcome.result[1]["seen"] = {"audit"}  # type: ignore[index]  # a hook's bug, as the test means it

    result = await execute(sandboxes[isolation], "return await tools.export_rows(count=2)", policy=Policy(after=[edit]))

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "TypeError: `tools.export_rows` returned data that is not JSON: value[1]['seen'] is a set, not JSON data (use dict, list, str, int, float, bool, None) (line 1)"
    )


@ISOLATIONS
async def test_a_result_over_max_tool_result_is_refused_once_with_the_same_message(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """Over the limit: the size and what to do, from codemode alone; far over it, refused before it is written out."""
    code = """
out = []
for call in ("tools.export_rows(count=100)", "tools.flood()"):
    try:
        await (tools.export_rows(count=100) if "rows" in call else tools.flood())
    except ToolError as error:
        out.append(str(error))
return out
"""
    result = await execute(sandboxes[isolation], code, max_tool_result=1000)

    assert result.run.value == snapshot(
        [
            "tools.export_rows() returned 2,980 bytes, over the 1,000 byte limit; ask for less (filters, pagination, fewer fields)",
            "tools.flood() returned more than 16,000 bytes, over the 1,000 byte limit; ask for less (filters, pagination, fewer fields)",
        ]
    )
    assert [call.error for call in result.calls] == result.run.value


@ISOLATIONS
async def test_the_code_changing_a_result_leaves_the_recorded_result_as_it_was(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """The code gets its own copy: what the host recorded (and would replay after an approval) stays as returned."""
    code = """
rows = await tools.export_rows(count=2)
rows[0]["name"] = "changed"
rows.append("extra")
return rows
"""
    result = await execute(sandboxes[isolation], code)

    assert result.run.value == [{"id": 0, "name": "changed"}, {"id": 1, "name": "row 1"}, "extra"]
    assert result.calls[0].result == [{"id": 0, "name": "row 0"}, {"id": 1, "name": "row 1"}]


def shapes_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    def many_values() -> list[int]:
        """More values than the sandbox takes in one value, each small."""
        return [0] * 1_000_001

    @catalog.tool
    def huge_int() -> dict[str, Any]:
        """An int past the sandbox's int limit, yet one `json.dumps` writes (under 4,300 digits)."""
        return {"id": [2**10_000]}

    return catalog


async def test_a_result_past_the_sandboxs_shape_limits_is_refused_with_its_wording() -> None:
    """The conversion holds a result to the sandbox's limits on values in all and bits of an int, as its check does."""
    code = """
out = []
for name in ("many_values", "huge_int"):
    try:
        await getattr(tools, name)()
    except ToolError as error:
        out.append(str(error))
return out
"""
    async with Sandbox(isolation="inline") as sb, CodeMode(shapes_catalog(), sandbox=sb, max_tool_result=10**8) as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.run.value == snapshot(
        [
            "tools.many_values() returned data that is not JSON (the result holds more than 1,000,000 values in all; return less); this is a bug in the tool, not in your code",
            "tools.huge_int() returned data that is not JSON (a value is an int too large to send (10001 bits); send it as a str); this is a bug in the tool, not in your code",
        ]
    )


class Shift(BaseModel):
    """A model with the values JSON lacks: a duration, a time, a set."""

    length: datetime.timedelta
    starts: datetime.datetime
    crew: set[str]
    zones: frozenset[int]


@dataclasses.dataclass
class ShiftRecord:
    """The same fields as a dataclass."""

    length: datetime.timedelta
    starts: datetime.datetime
    crew: set[str]
    zones: frozenset[int]


CREW = {f"member {n}" for n in range(40)}
"""Enough strings that their set's own order (it changes with hash randomisation) is never sorted by chance."""
SHIFT = {
    "length": datetime.timedelta(hours=3),
    "starts": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
    "crew": CREW,
    "zones": frozenset({10, 9, 100, 2}),
}


def shapes_of_one_value_catalog(saved: list[Shift]) -> Catalog:
    catalog = Catalog()

    @catalog.tool
    def as_model() -> Shift:
        """The shift as a pydantic model."""
        return Shift(**SHIFT)

    @catalog.tool
    def as_dataclass() -> ShiftRecord:
        """The shift as a dataclass."""
        return ShiftRecord(**SHIFT)

    @catalog.tool
    def as_dict() -> dict[str, Any]:
        """The shift as a plain dict."""
        return dict(SHIFT)

    @catalog.tool
    def keyed() -> dict[Any, str]:
        """Keys that are not strings."""
        return {True: "t", False: "f", None: "n", 1.5: "x", 2: "i", Color.RED: "c"}

    @catalog.tool
    def double(length: datetime.timedelta) -> datetime.timedelta:
        """Double a duration."""
        return length * 2

    @catalog.tool
    def save(shift: Shift) -> Shift:
        """Save a shift and return it."""
        saved.append(shift)
        return shift

    return catalog


@ISOLATIONS
async def test_a_model_a_dataclass_a_dict_and_the_codes_own_return_read_alike(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """One set of rules: durations as the stub's ISO string, `Z` datetimes, sorted sets, keys as `json.dumps` spells them."""
    code = """
import datetime
shift = {"length": datetime.timedelta(hours=3), "starts": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
         "crew": {f"member {n}" for n in range(40)}, "zones": frozenset({10, 9, 100, 2})}
keys = {True: "t", False: "f", None: "n", 1.5: "x", 2: "i", "red": "c"}
return [await tools.as_model(), await tools.as_dataclass(), await tools.as_dict(), shift, await tools.keyed(), keys]
"""
    async with CodeMode(shapes_of_one_value_catalog([]), sandbox=sandboxes[isolation]) as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.run.error is None
    model, record, plain, own, keyed, own_keys = result.run.value  # type: ignore[misc]  # a list of six, as returned
    expected = {"length": "PT3H", "starts": "2024-01-02T03:04:05Z", "crew": sorted(CREW), "zones": [2, 9, 10, 100]}
    assert model == record == plain == own == expected
    assert keyed == own_keys == {"true": "t", "false": "f", "null": "n", "1.5": "x", "2": "i", "red": "c"}


async def test_what_a_tool_returned_is_taken_back_by_a_tools_parameters(sandboxes: dict[str, Sandbox]) -> None:
    """A duration or a model's JSON from one tool, passed to another tool's parameter, arrives as the value it was."""
    saved: list[Shift] = []
    code = """
shift = await tools.as_model()
again = await tools.save(shift=shift)
return [again == shift, await tools.double(length=await tools.double(length=shift["length"]))]
"""
    async with CodeMode(shapes_of_one_value_catalog(saved), sandbox=sandboxes["inline"]) as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.run.value == [True, "PT12H"]
    assert saved == [Shift(**SHIFT)]


async def test_two_keys_that_become_one_in_json_are_refused(sandboxes: dict[str, Sandbox]) -> None:
    """`{1: ..., "1": ...}` would lose a value: the tool is blamed, as the sandbox refuses the same dict from the code."""
    catalog = Catalog()
    catalog.add(name="clash", description="Clash.", parameters={"type": "object"}, handler=lambda: {1: "a", "1": "b"})
    async with CodeMode(catalog, sandbox=sandboxes["inline"]) as cm:
        result = await cm.execute("await tools.clash()", cm.new_state())

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.clash() returned data that is not JSON (two of its keys both become '1' in JSON; keep one of them); this is a bug in the tool, not in your code (line 1)"
    )


class Account(BaseModel):
    """Fields only pydantic knows how to write."""

    site: AnyUrl
    password: SecretStr
    address: ipaddress.IPv4Address
    raw: bytes


class Profile(BaseModel):
    """A model whose JSON names a field by its alias, as its schema and the stub do."""

    user_name: str = Field(alias="userName")


class Timer(BaseModel):
    """A model that chose how its JSON is written: its schema says `number` for the duration."""

    model_config = ConfigDict(ser_json_timedelta="float")
    length: datetime.timedelta


async def test_a_models_fields_only_pydantic_knows_and_its_own_json_settings_are_pydantics(
    sandboxes: dict[str, Sandbox],
) -> None:
    """A URL, a secret, an IP address and bytes read as pydantic writes them, `ser_json_*` is kept, keys are the stub's aliases."""
    catalog = Catalog()

    @catalog.tool
    def account() -> Account:
        """An account."""
        return Account(
            site=AnyUrl("https://example.com/a"),
            password=SecretStr("s3cret"),
            address=ipaddress.IPv4Address("10.0.0.1"),
            raw=b"hi",
        )

    @catalog.tool
    def profile() -> Profile:
        """A profile."""
        return Profile(userName="ada")

    @catalog.tool
    def timer() -> Timer:
        """A timer."""
        return Timer(length=datetime.timedelta(minutes=90))

    async with CodeMode(catalog, sandbox=sandboxes["inline"]) as cm:
        code = 'print(await tools.describe("profile"))\nreturn [await tools.account(), await tools.timer(), await tools.profile()]'
        result = await cm.execute(code, cm.new_state())

    assert result.run.value == [
        {"site": "https://example.com/a", "password": "**********", "address": "10.0.0.1", "raw": "hi"},
        {"length": 5400.0},
        {"userName": "ada"},
    ]
    assert "    userName: str\n" in result.run.stdout


@dataclasses.dataclass
class Blob:
    """A dataclass holding bytes, as a file-reading tool returns them."""

    name: str
    data: bytes


class Photo(BaseModel):
    """A model holding bytes that are not UTF-8."""

    thumbnail: bytes


@ISOLATIONS
async def test_bytes_are_their_utf8_text_or_else_base64_everywhere_and_the_stub_says_so(
    isolation: str, sandboxes: dict[str, Sandbox]
) -> None:
    """Bare bytes, bytes in a dataclass and in a model: UTF-8 text where they decode, base64 where not; never a failure."""
    catalog = Catalog()

    @catalog.tool
    def read_file(path: str) -> bytes:
        """Read a file's raw contents."""
        return b"hello, w\xc3\xb6rld\n" if path == "a.txt" else b"\x89PNG\r\n\x1a\n"

    @catalog.tool
    def blob() -> Blob:
        """A named blob."""
        return Blob(name="b", data=b"\xff\x00")

    @catalog.tool
    def photo() -> Photo:
        """A photo."""
        return Photo(thumbnail=b"\x89PNG")

    async with CodeMode(catalog, sandbox=sandboxes[isolation]) as cm:
        code = (
            'return [await tools.read_file(path="a.txt"), await tools.read_file(path="a.png"), await tools.blob(),\n'
            '        await tools.photo(), await tools.describe("read_file"), await tools.describe("photo")]'
        )
        result = await cm.execute(code, cm.new_state())

    assert result.ok, result.text
    assert result.run.value == [
        "hello, wörld\n",
        "iVBORw0KGgo=",
        {"name": "b", "data": "/wA="},
        {"thumbnail": "iVBORw=="},
        snapshot('''\
async def read_file(*, path: str) -> str:
    """Read a file's raw contents.

    Returns:
        bytes: their UTF-8 text, or base64 (`base64.b64decode(...)`) when they are not UTF-8
    """
    ...
'''),
        snapshot('''\
class Photo(TypedDict):
    """A model holding bytes that are not UTF-8."""
    thumbnail: str  # bytes: their UTF-8 text, or base64 (`base64.b64decode(...)`) when they are not UTF-8


async def photo() -> Photo:
    """A photo.

    Returns:
        A model holding bytes that are not UTF-8.
    """
    ...
'''),
    ]


@dataclasses.dataclass
class Stats:
    """Statistics of a column, as `statistics` or pandas give them for an empty one."""

    mean: float
    spread: list[float]


@ISOLATIONS
async def test_nan_and_infinities_in_a_result_are_null_and_the_rest_of_the_result_arrives(
    isolation: str, sandboxes: dict[str, Sandbox]
) -> None:
    """One NaN no longer loses the whole result: NaN, inf and -inf become `None` wherever they are."""
    catalog = Catalog()

    @catalog.tool
    def column_stats(table: str) -> dict[str, Any]:
        """Statistics of each column of a table."""
        nan, inf = float("nan"), float("inf")
        return {"rows": 3, "price": {"mean": 12.5}, "discount": Stats(mean=nan, spread=[inf, -inf, 1.5]), "top": nan}

    async with CodeMode(catalog, sandbox=sandboxes[isolation]) as cm:
        result = await cm.execute('return await tools.column_stats(table="orders")', cm.new_state())

    assert result.ok, result.text
    assert result.run.value == {
        "rows": 3,
        "price": {"mean": 12.5},
        "discount": {"mean": None, "spread": [None, None, 1.5]},
        "top": None,
    }
    assert result.calls[0].result == result.run.value
