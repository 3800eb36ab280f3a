"""Stubs: every tool definition renders as Python the model reads like code, and always parses."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from codemode import Catalog
from codemode._naming import portable_alias
from codemode.schema.stubs import parameter_names, render_line, render_signature, render_stub
from codemode.tools import Tool

if TYPE_CHECKING:
    from sandbox import JsonObject, JsonValue

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def make_tool(
    parameters: JsonObject,
    *,
    name: str = "get_weather",
    alias: str | None = None,
    description: str = "Get the weather forecast for a city.",
    returns: JsonObject | None = None,
) -> Tool:
    return Tool(name=name, alias=alias or name, description=description, parameters=parameters, returns=returns)


def obj(properties: JsonObject, required: list[str] | None = None, **extra: JsonValue) -> JsonObject:
    schema: JsonObject = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


def test_scalars_with_defaults_render_as_python_literals() -> None:
    """Scalars map to Python types; JSON defaults become Python literals; required parameters come first."""
    tool = make_tool(
        obj(
            {
                "days": {"type": "integer", "default": 1, "description": "Days ahead.", "minimum": 1, "maximum": 14},
                "metric": {"type": "boolean", "default": True},
                "label": {"type": "string", "default": None},
                "ratio": {"type": "number", "default": 0.5},
                "city": {"type": "string", "description": "City name."},
            },
            ["city"],
        )
    )
    assert render_stub(tool) == snapshot('''\
async def get_weather(
    *,
    city: str,
    days: int = 1,
    metric: bool = True,
    label: str | None = None,
    ratio: float = 0.5,
) -> Any:
    """Get the weather forecast for a city.

    Args:
        city: City name.
        days: Days ahead. (>= 1; <= 14)
    """
    ...
''')


def test_optional_and_nullable_parameters_take_none() -> None:
    """Optional parameters without a default get `X | None = None`; every nullable spelling renders `| None`."""
    tool = make_tool(
        obj(
            {
                "a": {"type": ["string", "null"]},
                "b": {"type": "integer", "nullable": True},
                "c": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Pass null to clear."},
                "d": {"type": "string"},
            },
            ["a", "b", "c"],
        )
    )
    assert render_stub(tool) == snapshot('''\
async def get_weather(*, a: str | None, b: int | None, c: str | None, d: str | None = None) -> Any:
    """Get the weather forecast for a city.

    Args:
        c: Pass null to clear.
    """
    ...
''')


def test_enums_and_const_render_as_literal() -> None:
    """Enums become `Literal[...]` with escaped values; float enums fall back to the base type, listed in the docs."""
    tool = make_tool(
        obj(
            {
                "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
                "quote": {"enum": ['say "hi"', "it's", "back\\slash", None]},
                "version": {"const": 2},
                "scale": {"type": "number", "enum": [0.5, 1.5]},
            },
            ["quote", "version"],
        )
    )
    assert render_stub(tool) == snapshot('''\
async def get_weather(
    *,
    quote: Literal['say "hi"', "it's", "back\\\\slash"] | None,
    version: Literal[2],
    units: Literal["metric", "imperial"] = "metric",
    scale: float | None = None,
) -> Any:
    """Get the weather forecast for a city.

    Args:
        scale: (one of: 0.5, 1.5)
    """
    ...
''')


def test_arrays_and_tuples() -> None:
    """Arrays render as `list[X]`, `prefixItems` (and draft-4 item lists) as `tuple[...]`, no items as `list[Any]`."""
    tool = make_tool(
        obj(
            {
                "tags": {"type": "array", "items": {"type": "string"}},
                "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                "anything": {"type": "array"},
                "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            },
            ["tags", "point", "pair", "anything", "matrix"],
        )
    )
    assert render_stub(tool) == snapshot('''\
async def get_weather(
    *,
    tags: list[str],
    point: tuple[float, float],
    pair: tuple[str, int],
    anything: list[Any],
    matrix: list[list[int]],
) -> Any:
    """Get the weather forecast for a city."""
    ...
''')


def test_nested_objects_become_typeddicts_named_from_the_path() -> None:
    """Objects with properties become TypedDicts named from alias + path; optional keys get `NotRequired`."""
    day = obj(
        {
            "date": {"type": "string", "format": "date"},
            "temperature": {"type": "number", "description": "Celsius."},
            "wind": obj({"speed": {"type": "number"}, "direction": {"type": "string"}}),
        },
        ["date"],
        description="One day of the forecast.",
    )
    tool = make_tool(
        obj({"days": {"type": "array", "items": day}, "location": obj({"lat": {"type": "number"}}, ["lat"])}),
        name="get_weather_forecast",
    )
    assert render_stub(tool) == snapshot('''\
class GetWeatherForecastDayWind(TypedDict, total=False):
    speed: float
    direction: str


class GetWeatherForecastDay(TypedDict):
    """One day of the forecast."""
    date: str  # (format: date)
    temperature: NotRequired[float]  # Celsius.
    wind: NotRequired[GetWeatherForecastDayWind]


class GetWeatherForecastLocation(TypedDict):
    lat: float


async def get_weather_forecast(
    *,
    days: list[GetWeatherForecastDay] | None = None,
    location: GetWeatherForecastLocation | None = None,
) -> Any:
    """Get the weather forecast for a city."""
    ...
''')


def test_refs_and_defs_use_the_definition_names() -> None:
    """`$ref` into `$defs` or `definitions` renders the definition's name; clashing names are deduplicated."""
    tool = make_tool(
        {
            "type": "object",
            "properties": {
                "user": {"$ref": "#/$defs/User", "description": "Who asks."},
                "color": {"$ref": "#/definitions/Color"},
                "owner": {"allOf": [{"$ref": "#/$defs/User"}], "description": "Lifted from allOf."},
                "Any": {"$ref": "#/$defs/Any"},
                "missing": {"$ref": "#/$defs/Missing"},
                "remote": {"$ref": "https://example.com/schema.json"},
            },
            "required": ["user"],
            "$defs": {
                "User": obj({"name": {"type": "string"}}, ["name"]),
                "Any": obj({"x": {"type": "integer"}}),
            },
            "definitions": {"Color": {"type": "string", "enum": ["red", "green"]}},
        }
    )
    assert render_stub(tool) == snapshot('''\
class User(TypedDict):
    name: str


class Any2(TypedDict, total=False):
    x: int


async def get_weather(
    *,
    user: User,
    color: Literal["red", "green"] | None = None,
    owner: User | None = None,
    Any: Any2 | None = None,
    missing: Any = None,
    remote: Any = None,
) -> Any:
    """Get the weather forecast for a city.

    Args:
        user: Who asks.
        owner: Lifted from allOf.
    """
    ...
''')


def test_recursive_refs_terminate() -> None:
    """A self-referencing definition renders its class name inside itself; a ref cycle without objects is `Any`."""
    tool = make_tool(
        {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}, "loop": {"$ref": "#/$defs/A"}},
            "required": ["tree", "loop"],
            "$defs": {
                "Node": obj(
                    {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}
                ),
                "A": {"$ref": "#/$defs/B"},
                "B": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/A"}]},
            },
        }
    )
    assert render_stub(tool) == snapshot('''\
class Node(TypedDict, total=False):
    value: int
    children: list[Node]


async def get_weather(*, tree: Node, loop: Any) -> Any:
    """Get the weather forecast for a city."""
    ...
''')


def test_anyof_and_oneof_render_as_unions() -> None:
    """anyOf/oneOf render as unions; members that only constrain `required` are ignored."""
    tool = make_tool(
        obj(
            {
                "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "target": {"oneOf": [{"type": "string"}, obj({"url": {"type": "string"}}, ["url"])]},
                "both": {"type": ["string", "integer", "null"]},
                "ranged": {
                    **obj({"a": {"type": "string"}, "b": {"type": "string"}}),
                    "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
                },
            },
            ["id", "target", "both", "ranged"],
        )
    )
    assert render_stub(tool) == snapshot('''\
class GetWeatherTarget(TypedDict):
    url: str


class GetWeatherRanged(TypedDict, total=False):
    a: str
    b: str


async def get_weather(
    *,
    id: str | int,
    target: str | GetWeatherTarget,
    both: str | int | None,
    ranged: GetWeatherRanged,
) -> Any:
    """Get the weather forecast for a city."""
    ...
''')


def test_additional_properties_render_as_dicts() -> None:
    """`additionalProperties` renders `dict[str, X]`; a root that allows extra keys gets `**kwargs`."""
    tool = make_tool(
        obj(
            {
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "meta": {"type": "object"},
                "scores": {"type": "object", "patternProperties": {"^s": {"type": "number"}}},
            },
            ["headers", "meta", "scores"],
            additionalProperties={"type": "integer"},
        )
    )
    assert render_signature(tool) == snapshot(
        "get_weather(*, headers: dict[str, str], meta: dict[str, Any], scores: dict[str, float], **kwargs: int) -> Any"
    )
    clash = make_tool(obj({"kwargs": {"type": "string"}}, ["kwargs"], additionalProperties=True))
    assert render_signature(clash) == snapshot("get_weather(*, kwargs: str, **kwargs_2: Any) -> Any")


def test_required_parameters_come_first_and_everything_is_keyword_only() -> None:
    """Schema order puts a required parameter after optional ones; the stub moves it first, keyword-only."""
    tool = make_tool(
        obj(
            {
                "limit": {"type": "integer", "default": 10},
                "query": {"type": "string"},
                "offset": {"type": "integer"},
                "key": {"type": "string", "default": "demo", "description": "API key."},
            },
            ["query", "key"],
        )
    )
    assert render_stub(tool) == snapshot('''\
async def get_weather(*, query: str, key: str, limit: int = 10, offset: int | None = None) -> Any:
    """Get the weather forecast for a city.

    Args:
        key: API key. (default: "demo")
    """
    ...
''')


def test_bad_parameter_names_are_sanitised_and_mapped_back() -> None:
    """Keywords and non-identifiers get Python names; the docstring and `parameter_names` keep the originals."""
    parameters = obj(
        {
            "from": {"type": "string"},
            "first-name": {"type": "string", "description": "Given name."},
            "first_name": {"type": "string"},
            "2fa": {"type": "boolean"},
            "query[]": {"type": "array", "items": {"type": "string"}},
            "x": {"type": "object", "properties": {"content-type": {"type": "string"}, "class": {"type": "integer"}}},
        },
        ["from"],
    )
    assert render_stub(make_tool(parameters)) == snapshot('''\
GetWeatherX = TypedDict("GetWeatherX", {
    "content-type": str,
    "class": int,
}, total=False)


async def get_weather(
    *,
    from_: str,
    first_name_2: str | None = None,
    first_name: str | None = None,
    arg_2fa: bool | None = None,
    query: list[str] | None = None,
    x: GetWeatherX | None = None,
) -> Any:
    """Get the weather forecast for a city.

    Args:
        from_: (original name: "from")
        first_name_2: Given name. (original name: "first-name")
        arg_2fa: (original name: "2fa")
        query: (original name: "query[]")
    """
    ...
''')
    assert parameter_names(parameters) == snapshot(
        {
            "from_": "from",
            "first_name_2": "first-name",
            "first_name": "first_name",
            "arg_2fa": "2fa",
            "query": "query[]",
            "x": "x",
        }
    )


def test_unrenderable_schemas_fall_back_to_any() -> None:
    """Schemas the renderer cannot express become `Any`, and root constraints are shown as JSON in the docstring."""
    parameters: JsonObject = {
        "type": "object",
        "properties": {"odd": {"type": "frobnicate"}, "untyped": {"description": "Anything."}, "never": False},
        "oneOf": [{"required": ["odd"]}, {"required": ["untyped"]}],
    }
    assert render_stub(make_tool(parameters)) == snapshot('''\
async def get_weather(*, odd: Any = None, untyped: Any = None) -> Any:
    """Get the weather forecast for a city.

    Arguments must also satisfy (JSON Schema): {"oneOf":[{"required":["odd"]},{"required":["untyped"]}]}

    Args:
        untyped: Anything.
    """
    ...
''')
    assert render_signature(make_tool({"type": "string"})) == snapshot("get_weather(**kwargs: Any) -> Any")
    assert render_signature(make_tool({"anyOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "string"}})]})) == (
        snapshot("get_weather(**kwargs: Any) -> Any")
    )


def test_output_schema_becomes_the_return_type() -> None:
    """An output schema renders as the return type, its description as `Returns:`; a title names the class."""
    returns = obj(
        {"summary": {"type": "string"}, "days": {"type": "array", "items": obj({"high": {"type": "number"}})}},
        ["summary"],
        title="Forecast",
        description="The forecast, one entry a day.",
    )
    tool = make_tool(obj({"city": {"type": "string"}}, ["city"]), returns=returns)
    assert render_stub(tool) == snapshot('''\
class GetWeatherResultDay(TypedDict, total=False):
    high: float


class Forecast(TypedDict):
    """The forecast, one entry a day."""
    summary: str
    days: NotRequired[list[GetWeatherResultDay]]


async def get_weather(*, city: str) -> Forecast:
    """Get the weather forecast for a city.

    Returns:
        The forecast, one entry a day.
    """
    ...
''')
    assert render_signature(tool) == snapshot("get_weather(*, city: str) -> Forecast")
    assert render_signature(make_tool({}, returns={"type": "array", "items": {"type": "string"}})) == snapshot(
        "get_weather() -> list[str]"
    )


def test_output_schema_repeating_the_parameter_defs_reuses_their_classes() -> None:
    """pydantic repeats `$defs` in the output schema; identical definitions render one class, not two."""
    defs: JsonObject = {"User": obj({"name": {"type": "string"}, "boss": {"$ref": "#/$defs/User"}}, ["name"])}
    tool = make_tool(
        {"type": "object", "properties": {"user": {"$ref": "#/$defs/User"}}, "required": ["user"], "$defs": defs},
        returns={"$ref": "#/$defs/User", "$defs": defs},
    )
    assert render_stub(tool) == snapshot('''\
class User(TypedDict):
    name: str
    boss: NotRequired[User]


async def get_weather(*, user: User) -> User:
    """Get the weather forecast for a city."""
    ...
''')


def test_a_model_taken_and_returned_is_one_class_and_a_different_one_of_the_same_name_is_numbered() -> None:
    """`def update_user(user: User) -> User` shows `User` and `Addr` once; another `User` shape gets `User2`."""
    catalog = Catalog()

    @catalog.tool
    def update_user(user: User) -> User:
        """Update a user and return it."""
        return user

    @catalog.tool
    def rename(user: User, name: str) -> OtherUser:
        """Rename a user."""
        return OtherUser(id=1)

    assert "\n\n\n".join(render_stub(tool) for tool in catalog) == snapshot('''\
class Addr(TypedDict):
    street: str


class User(TypedDict):
    """A user."""
    name: str
    addr: Addr


async def update_user(*, user: User) -> User:
    """Update a user and return it.

    Returns:
        A user.
    """
    ...



class Addr(TypedDict):
    street: str


class User(TypedDict):
    """A user."""
    name: str
    addr: Addr


class User2(TypedDict):
    """A user, as another service spells it."""
    id: int


async def rename(*, user: User, name: str) -> User2:
    """Rename a user.

    Returns:
        A user, as another service spells it.
    """
    ...
''')


class Addr(BaseModel):
    street: str


class User(BaseModel):
    """A user."""

    name: str
    addr: Addr


class OtherUser(BaseModel):
    """A user, as another service spells it."""

    model_config = {"title": "User"}
    id: int


def test_descriptions_with_quotes_backslashes_and_control_characters_parse() -> None:
    """Triple quotes, backslashes, control characters and a trailing quote are escaped; the stub parses."""
    description = 'Use """triple""" quotes, C:\\path\\, a tab\there, a NUL \x00, a \u2028 and a "quote"'
    tool = make_tool(
        obj({"q": {"type": "string", "description": 'Ends with a backslash \\ and """'}}, ["q"]),
        name="math.factorial",
        alias="math_factorial",
        description=description,
    )
    stub = render_stub(tool)
    assert stub == snapshot('''\
async def math_factorial(*, q: str) -> Any:
    """Use \\"\\"\\"triple\\"\\"\\" quotes, C:\\\\path\\\\, a tab    here, a NUL \\x00, a \\u2028 and a "quote"

    (original name: math.factorial)

    Args:
        q: Ends with a backslash \\\\ and \\"\\"\\"
    """
    ...
''')
    docstring = docstring_of(stub)
    assert docstring.startswith(description.replace("\t", "    "))
    assert docstring.endswith('q: Ends with a backslash \\ and """')
    assert docstring_of(render_stub(make_tool({}, description='a "quote"'))) == 'a "quote"'


def docstring_of(stub: str) -> str:
    function = ast.parse(stub).body[-1]
    assert isinstance(function, ast.AsyncFunctionDef)
    docstring = ast.get_docstring(function)
    assert docstring is not None
    return docstring


def test_long_descriptions_are_trimmed_with_a_marker() -> None:
    """Descriptions over the limit are cut at a word boundary and marked, so the reader knows text is missing."""
    tool = make_tool({}, description="word " * 300)
    stub = render_stub(tool, max_description=60)
    assert stub == snapshot('''\
async def get_weather() -> Any:
    """word word word word word [... 1,475 characters cut ...]"""
    ...
''')


def test_a_description_of_a_few_thousand_characters_keeps_its_last_sentence() -> None:
    """A 1,500-character description is whole in the stub `describe` gives: its closing instruction is not cut."""
    description = "Background. " * 125 + "IMPORTANT: always pass dry_run=True first."
    assert docstring_of(render_stub(make_tool({}, description=description))) == description


@pytest.mark.slow
def test_every_dataset_definition_renders_a_parsable_deterministic_stub() -> None:
    """Each of the 4,000+ real definitions renders a stub and a signature that parse, byte-identical twice."""
    files = sorted(DATA.glob("*/tools.jsonl"))
    if not files:
        pytest.skip(f"no datasets under {DATA}")
    count = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            definition = json.loads(line)
            tool = Tool(
                name=definition["name"],
                alias=portable_alias(definition["name"]),
                description=definition["description"],
                parameters=definition["parameters"],
            )
            stub = render_stub(tool)
            ast.parse(stub)
            assert render_stub(tool) == stub
            ast.parse(f"async def {render_signature(tool)}: ...")
            line = render_line(tool)
            assert "\n" not in line
            ast.parse(line)
            count += 1
    assert count > 4000


def test_a_one_line_stub_has_every_parameter_its_return_type_and_the_first_sentence() -> None:
    """The line a search hit is announced as: names, types, defaults of optional parameters, the first sentence."""
    tool = make_tool(
        obj(
            {"city": {"type": "string"}, "days": {"type": "integer", "default": 3}, "units": {"enum": ["C", "F"]}},
            ["city"],
        ),
        description="Get the forecast, e.g. for tomorrow. Costs one credit.\n\nMore details.",
        returns={"type": "array", "items": {"type": "number"}},
    )
    assert render_line(tool) == snapshot(
        'async def get_weather(*, city: str, days: int = 3, units: Literal["C", "F"] | None = None) -> list[float]: '
        '"""Get the forecast, e.g. for tomorrow."""'
    )
    assert render_line(make_tool({}, description="")) == snapshot("async def get_weather() -> Any: ...")
    assert render_line(make_tool({}, description='Say """hi""" \\ now')) == snapshot(
        'async def get_weather() -> Any: """Say \\"\\"\\"hi\\"\\"\\" \\\\ now"""'
    )
    for text in (render_line(tool), render_line(make_tool({}, description='Say """hi""" \\ now'))):
        ast.parse(text)
