"""Values that cross the boundary convert as `json.dumps` and pydantic's JSON mode write them, reading plain data only.

The oracles are real: each script also runs in plain CPython, and its value goes through `json.dumps` (for what
JSON has) or `pydantic_core.to_jsonable_python` (pydantic's JSON mode, for what JSON lacks); the sandbox must give
the same data, for a returned value and for a host function's arguments alike. What cannot convert names its path
and the fix; objects of the code's own classes are converted without one of their methods being called.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import pydantic_core
import pytest
from redteam_kit import run
from test_language import wrap_like_the_sandbox

if TYPE_CHECKING:
    from sandbox import Sandbox

ISOLATIONS = ["inline", "process"]


@dataclass(frozen=True)
class Case:
    """A script whose value the sandbox must convert like the oracle does."""

    name: str
    code: str


def case(name: str, code: str) -> Case:
    """A case with its code dedented."""
    return Case(name, textwrap.dedent(code).strip("\n") + "\n")


def cpython_value(code: str) -> object:
    """The script's value in plain CPython, wrapped as the sandbox wraps it."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(wrap_like_the_sandbox(code), "<script>", "exec"), namespace)  # the test's own script
    return asyncio.run(namespace["__main__"]())


AS_JSON_DUMPS = [
    case("int_keys", "return {2024: 3, 2025: 4}"),
    case("float_bool_none_keys", "return {1.5: 'a', 1e100: 'b', -0.0: 'c', True: 'd', False: 'e', None: 'f'}"),
    case("tuples_nested", "return {'pair': (1, (2, 3)), 'rows': [(1, 'a'), (2, 'b')]}"),
    case("counter_most_common", "import collections\nreturn collections.Counter('abracadabra').most_common(2)"),
    case(
        "dict_subclasses",
        """
        import collections
        d = collections.defaultdict(list)
        d["a"].append(1)
        return {"dd": d, "od": collections.OrderedDict(b=2, a=1), "c": collections.Counter("aab")}
        """,
    ),
    case("namedtuple", "import collections\nP = collections.namedtuple('P', 'x y')\nreturn [P(1, 2), {'p': P(3, 4)}]"),
    case(
        "str_and_int_subclass_values",
        "class S(str):\n    pass\nclass I(int):\n    pass\nreturn [S('s'), I(5), {S('k'): I(1)}]",
    ),
    case(
        "summary_by_year",
        "rows = [(2023, 5), (2024, 7), (2023, 1)]\nout = {}\nfor y, n in rows:\n    out[y] = out.get(y, 0) + n\nout",
    ),
]


AS_PYDANTIC = [
    case(
        "datetimes",
        """
        from datetime import date, datetime, time, timedelta, timezone
        utc, east = timezone.utc, timezone(timedelta(hours=5, minutes=30))
        return [datetime(2024, 1, 2, 3, 4, 5), datetime(2024, 1, 2, 3, 4, 5, 123, tzinfo=utc),
                datetime(2024, 1, 2, tzinfo=east), date(2024, 2, 29), time(3, 4), time(3, 4, 5, 6, tzinfo=utc)]
        """,
    ),
    case(
        "durations",
        """
        from datetime import timedelta
        return [timedelta(days=1, hours=2), timedelta(seconds=-1), timedelta(microseconds=5), timedelta(0),
                timedelta(days=-3, seconds=5), timedelta(minutes=90), timedelta(seconds=3661.25), timedelta(weeks=2)]
        """,
    ),
    case(
        "decimal_uuid_fraction",
        """
        import decimal, fractions, uuid
        return [decimal.Decimal("1.50"), decimal.Decimal("1E+3"), decimal.Decimal("-0"), decimal.Decimal("NaN"),
                uuid.UUID(int=7), uuid.uuid5(uuid.NAMESPACE_DNS, "example.com"), fractions.Fraction(1, 3)]
        """,
    ),
    case("sets_of_numbers", "return {'s': {3, 1, 2}, 'f': frozenset([10, 2.5])}"),
    case(
        "dataclasses_nested",
        """
        from dataclasses import dataclass, field
        from datetime import date

        @dataclass
        class Item:
            sku: str
            qty: int = 1

        @dataclass(frozen=True, slots=True)
        class Point:
            x: int
            y: int

        @dataclass
        class Order:
            id: int
            when: date
            items: list = field(default_factory=list)
            _note: str = "private fields too"
            at: Point = Point(0, 0)

        return {"orders": [Order(1, date(2024, 5, 1), [Item("a", 2), Item("b")])]}
        """,
    ),
    case(
        "enum_members",
        """
        import enum

        class Color(enum.Enum):
            RED = "red"
            PAIR = (1, 2)

        class Level(enum.IntEnum):
            LOW = 1

        class Flag(enum.StrEnum):
            ON = "on"

        return {"c": [Color.RED, Color.PAIR], "l": Level.LOW, "f": Flag.ON, "by_enum": {Color.RED: 1, Level.LOW: 2}}
        """,
    ),
    case("bytes_and_date_keys", "import datetime\nreturn {'b': b'hi', 'k': {datetime.date(2024, 1, 1): 1}}"),
]


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("case", AS_JSON_DUMPS, ids=[c.name for c in AS_JSON_DUMPS])
async def test_returned_values_convert_as_json_dumps_writes_them(sb: Sandbox, case: Case) -> None:
    """Non-string keys become the strings `json.dumps` spells, tuples and namedtuples lists, dict subclasses dicts."""
    expected = json.loads(json.dumps(await anyio.to_thread.run_sync(cpython_value, case.code)))
    result = await run(sb, case.code)
    assert result.error is None, result.error
    assert result.value == expected


def pydantic_json(value: object) -> object:
    """pydantic's JSON mode, with the sandbox's one difference: a set of all-str or all-number items is sorted."""
    if isinstance(value, (set, frozenset)):
        items = [pydantic_json(item) for item in value]
        return sorted(items) if all(isinstance(i, (int, float)) for i in items) else items  # type: ignore[type-var]
    if isinstance(value, dict):
        return {key: pydantic_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [pydantic_json(item) for item in value]
    return pydantic_core.to_jsonable_python(value)


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("case", AS_PYDANTIC, ids=[c.name for c in AS_PYDANTIC])
async def test_returned_values_convert_as_pydantic_json_mode_writes_them(sb: Sandbox, case: Case) -> None:
    """Datetimes, durations, Decimal, UUID, Fraction, sets, dataclasses, Enums, bytes: as pydantic writes them."""
    value = await anyio.to_thread.run_sync(cpython_value, case.code)
    expected = pydantic_core.to_jsonable_python(value)
    if case.name == "sets_of_numbers":
        expected = pydantic_json(value)
    result = await run(sb, case.code)
    assert result.error is None, result.error
    assert result.value == json.loads(json.dumps(expected))


@pytest.mark.parametrize("isolation", ["inline"])
async def test_a_set_of_strings_comes_back_sorted_so_every_run_gives_the_same_list(sb: Sandbox) -> None:
    """pydantic keeps a set's iteration order, which for strings changes with each process: the sandbox sorts."""
    result = await run(sb, "return {'tags': {'b', 'c', 'a'}, 'mixed': {1}}")
    assert (result.error, result.value) == (None, {"tags": ["a", "b", "c"], "mixed": [1]})


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_host_function_arguments_convert_the_same_way(sb: Sandbox) -> None:
    """A tool's arguments go through the same conversion: the host receives only plain JSON data."""
    received: list[object] = []

    def echo(*args: object, **kwargs: object) -> object:
        received.append((args, kwargs))
        return None

    code = """
    import dataclasses, datetime, decimal, enum

    class Seat(enum.Enum):
        WINDOW = "window"

    @dataclasses.dataclass
    class Passenger:
        name: str
        born: datetime.date

    await echo((1, 2), {2024: "x"}, when=datetime.date(2024, 5, 1), seat=Seat.WINDOW,
               who=Passenger("Ann", datetime.date(1990, 1, 2)), ids={3, 1, 2}, price=decimal.Decimal("9.90"))
    """
    result = await run(sb, textwrap.dedent(code), functions={"echo": echo})
    assert result.error is None, result.error
    assert received == [
        (
            ([1, 2], {"2024": "x"}),
            {
                "when": "2024-05-01",
                "seat": "window",
                "who": {"name": "Ann", "born": "1990-01-02"},
                "ids": [1, 2, 3],
                "price": "9.90",
            },
        )
    ]


FAILURES = {
    "return {'rows': [1, 2, 3, lambda: 0]}": (
        "the returned value['rows'][3] is a 'function' object: a function is not data: call it and return its "
        "result, or return its name (`f.__name__`)"
    ),
    "class C:\n    pass\nreturn {'kind': C}": (
        "the returned value['kind'] is a 'type' object: a class is not data: return its name (`C.__name__`) or an "
        "instance's fields"
    ),
    "return [(x for x in range(3))]": "the returned value[0] is a 'generator' object: return `list(...)` of it",
    "return {'m': map(str, [1])}": "the returned value['m'] is a 'map' object: return `list(...)` of it",
    "return {'r': reversed([1, 2])}": (
        "the returned value['r'] is a 'list_reverseiterator' object: return `list(...)` of it"
    ),
    "return iter([1, 2])": "the returned value is a 'list_iterator' object: return `list(...)` of it",
    "class C:\n    pass\nreturn [C()]": (
        "the returned value[0] is a 'C' object: return plain data (dict, list, str, int, float, bool, None); for "
        "a class of your own, make it a `@dataclass` or return a dict of its fields"
    ),
    "return {'z': 1j}": "the returned value['z'] is a 'complex' object: return `[z.real, z.imag]` or `str(z)`",
    "return {'x': float('nan')}": (
        "the returned value['x'] is nan, which JSON cannot carry: use None or a string instead"
    ),
    "return {1: 'a', '1': 'b'}": "the returned value has two keys that both become '1' in JSON; keep one of them",
    "return {(1, 2): 'a'}": (
        "the returned value has a key that is a 'tuple' object; JSON object keys are strings: use a str key"
    ),
    "return {'b': b'\\xff'}": (
        "the returned value['b'] is bytes that are not UTF-8 text: return `base64.b64encode(b).decode()`"
    ),
    "a = []\na.append(a)\nreturn a": "the returned value" + "[0]" * 100 + " is nested more than 100 levels deep",
    "a = []\nfor _ in range(60):\n    a = [a, a]\nreturn a": (
        "the returned value holds more than 1,000,000 values in all; return less"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["inline"])
@pytest.mark.parametrize("code", list(FAILURES), ids=range(len(FAILURES)))
async def test_what_cannot_convert_names_its_path_and_the_fix(sb: Sandbox, code: str) -> None:
    """A function, a class, a generator, an own object, NaN, clashing keys: each says where it is and what to do."""
    result = await run(sb, code)
    assert result.error is not None
    assert (result.error.kind, result.error.type_name, result.error.message) == ("runtime", "TypeError", FAILURES[code])


@pytest.mark.parametrize("isolation", ["inline"])
async def test_an_argument_that_cannot_convert_raises_in_the_code_with_its_path(sb: Sandbox) -> None:
    """The code gets a TypeError it can catch, naming the argument's path; the host function is not called."""
    code = "try:\n    await echo(rows=[1, len])\nexcept TypeError as e:\n    return str(e)"
    calls: list[object] = []
    result = await run(sb, code, functions={"echo": lambda **kwargs: calls.append(kwargs)})
    assert calls == []
    assert result.value == (
        "`echo(...)` takes JSON data: kwargs['rows'][1] is a 'builtin_function_or_method' object: a function is not "
        "data: call it and return its result, or return its name (`f.__name__`)"
    )


HOSTILE = """
import collections, dataclasses, datetime, decimal, enum, uuid

def called(name):
    print("CALLED", name)
    raise RuntimeError(name)

class Key(str):
    def __eq__(self, other):
        called("Key.__eq__")
    def __str__(self):
        called("Key.__str__")
    def __repr__(self):
        called("Key.__repr__")
    def __hash__(self):
        return 7  # honest enough to build the dict; the conversion must not ask it again

class Number(int):
    def __index__(self):
        called("Number.__index__")
    def __int__(self):
        called("Number.__int__")
    def __repr__(self):
        called("Number.__repr__")

class Ratio(float):
    def __float__(self):
        called("Ratio.__float__")
    def __repr__(self):
        called("Ratio.__repr__")

class Lying(dict):
    def items(self):
        called("Lying.items")
    def keys(self):
        called("Lying.keys")
    def __iter__(self):
        called("Lying.__iter__")
    def __getitem__(self, key):
        called("Lying.__getitem__")
    def __len__(self):
        called("Lying.__len__")

class Rows(list):
    def __iter__(self):
        called("Rows.__iter__")
    def __len__(self):
        called("Rows.__len__")
    def __getitem__(self, index):
        called("Rows.__getitem__")

class Tags(set):
    def __iter__(self):
        called("Tags.__iter__")

class When(datetime.datetime):
    def isoformat(self, *args):
        called("When.isoformat")
    def __str__(self):
        called("When.__str__")

class Money(decimal.Decimal):
    def __str__(self):
        called("Money.__str__")

class Odd(enum.Enum):
    A = (1, {"k": 2})

    @property
    def value(self):
        called("Odd.value")

@dataclasses.dataclass
class Record:
    name: Key
    n: Number
    def __eq__(self, other):
        called("Record.__eq__")
    def __hash__(self):
        called("Record.__hash__")
    def __repr__(self):
        called("Record.__repr__")
    def __getattr__(self, name):
        called("Record.__getattr__")

lying = Lying(real=1)
return {
    "keys": {Key("k"): Number(7), 2024: Ratio(0.5)},
    "lying": lying,
    "rows": Rows([1, 2]),
    "tags": Tags([3, 1]),
    "when": When(2024, 1, 2, 3, 4, 5),
    "money": Money("1.50"),
    "odd": Odd.A,
    "record": Record(Key("ann"), Number(3)),
    "records": [Record(Key("bob"), Number(4))],
}
"""


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_converting_objects_of_the_codes_own_classes_calls_none_of_their_methods(sb: Sandbox) -> None:
    """Lying `items()`, `__iter__`, `__str__`, `__index__`, `__eq__`, `__hash__`, `.value`: the plain data is read."""
    result = await run(sb, HOSTILE)
    assert result.error is None, result.error
    assert result.stdout == ""
    assert result.value == {
        "keys": {"k": 7, "2024": 0.5},
        "lying": {"real": 1},
        "rows": [1, 2],
        "tags": [1, 3],
        "when": "2024-01-02T03:04:05",
        "money": "1.50",
        "odd": [1, {"k": 2}],
        "record": {"name": "ann", "n": 3},
        "records": [{"name": "bob", "n": 4}],
    }


@pytest.mark.parametrize("isolation", ["inline"])
async def test_a_tzinfo_or_property_of_the_codes_own_is_refused_not_called(sb: Sandbox) -> None:
    """A datetime with a tzinfo the code wrote, or a dataclass field shadowed by a property, is an error, not a call."""
    code = """
    import dataclasses, datetime

    class Zone(datetime.tzinfo):
        def utcoffset(self, dt):
            print("CALLED")
            return datetime.timedelta(0)

    return {"at": [datetime.datetime(2024, 1, 1, tzinfo=Zone())]}
    """
    result = await run(sb, textwrap.dedent(code))
    assert (result.stdout, result.error and result.error.message) == (
        "",
        "the returned value['at'][0] has a tzinfo that is not a `datetime.timezone`: use `datetime.timezone(offset)`",
    )
