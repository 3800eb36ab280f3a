from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel, Field

from codemode._docstrings import parse_docstring
from codemode.errors import CatalogError
from codemode.tools import tool_from_function


class Opaque:
    """A type pydantic knows nothing about."""


class Location(BaseModel):
    """A point on the map."""

    lat: float
    lon: float


async def get_weather(
    city: str,
    days: Annotated[int, Field(description="Days ahead, 1 to 7.", ge=1, le=7)] = 1,
    units: Literal["celsius", "fahrenheit"] = "celsius",
) -> dict[str, float]:
    """Get the weather forecast for a city.

    Uses the national weather service.

    Args:
        city: The city name, e.g.
            `Paris`.
        days: This text loses to the `Field` description.
        units (str): Temperature units.

    Returns:
        Temperatures by day.

    Raises:
        ValueError: The city is unknown.
    """
    return {}


def nearest_station(location: Location, *, radius_km: float = 10.0) -> Location:
    """Find the weather station nearest to a point.

    Parameters
    ----------
    location : Location
        Where to search from.
    radius_km : float, optional
        How far to search,
        in kilometres.

    Returns
    -------
    Location
        The station's position.
    """
    return location


def test_a_google_docstring_documents_the_tool_and_its_parameters() -> None:
    """Summary and body become the description; `Args:` fill parameter descriptions; `Returns:` the output's."""
    tool = tool_from_function(get_weather)
    assert (tool.name, tool.alias, tool.deferred, tool.handler) == ("get_weather", "get_weather", True, get_weather)
    assert tool.description == snapshot("""\
Get the weather forecast for a city.

Uses the national weather service.\
""")
    assert tool.parameters == snapshot(
        {
            "additionalProperties": False,
            "properties": {
                "city": {"description": "The city name, e.g. `Paris`.", "type": "string"},
                "days": {
                    "default": 1,
                    "description": "Days ahead, 1 to 7.",
                    "maximum": 7,
                    "minimum": 1,
                    "type": "integer",
                },
                "units": {
                    "default": "celsius",
                    "description": "Temperature units.",
                    "enum": ["celsius", "fahrenheit"],
                    "type": "string",
                },
            },
            "required": ["city"],
            "type": "object",
        }
    )
    assert tool.returns == snapshot(
        {"additionalProperties": {"type": "number"}, "description": "Temperatures by day.", "type": "object"}
    )


def test_a_numpy_docstring_and_a_nested_model_give_defs_and_descriptions() -> None:
    """NumPy `Parameters` sections are read, and pydantic models become `$defs` with their own docstring."""
    tool = tool_from_function(nearest_station)
    assert tool.description == snapshot("Find the weather station nearest to a point.")
    assert tool.parameters == snapshot(
        {
            "$defs": {
                "Location": {
                    "additionalProperties": False,
                    "description": "A point on the map.",
                    "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                    "required": ["lat", "lon"],
                    "title": "Location",
                    "type": "object",
                }
            },
            "additionalProperties": False,
            "properties": {
                "location": {"$ref": "#/$defs/Location", "description": "Where to search from."},
                "radius_km": {"default": 10.0, "description": "How far to search, in kilometres.", "type": "number"},
            },
            "required": ["location"],
            "type": "object",
        }
    )
    assert tool.returns == snapshot(
        {
            "description": "The station's position.",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
            "title": "Location",
            "type": "object",
        }
    )


def test_schemas_are_plain_json_and_the_same_on_every_call() -> None:
    """Two builds of one function give equal schemas that survive a JSON round trip unchanged."""
    first, second = tool_from_function(nearest_station), tool_from_function(nearest_station)
    assert json.loads(json.dumps(first.parameters)) == first.parameters == second.parameters
    assert json.dumps(first.returns) == json.dumps(second.returns)


def test_options_override_the_name_description_and_deferral() -> None:
    """`name` sets the original name (and so the alias), `description` replaces the docstring's."""
    tool = tool_from_function(get_weather, name="weather.get", description="Forecast.", deferred=False)
    assert (tool.name, tool.alias, tool.description, tool.deferred) == (
        "weather.get",
        "weather_get",
        "Forecast.",
        False,
    )


def test_functions_without_a_useful_return_annotation_have_no_output_schema() -> None:
    """No return annotation, `-> None` and `-> Any` all mean the result's shape is unknown."""

    def unannotated(host: str):  # type: ignore[no-untyped-def]  # the missing annotation is the point
        """Ping a host."""

    def returns_none(host: str) -> None:
        """Ping a host."""

    def returns_any(host: str) -> Any:
        """Ping a host."""

    assert [tool_from_function(fn).returns for fn in (unannotated, returns_none, returns_any)] == [None, None, None]


def test_a_returns_section_without_an_output_schema_stays_in_the_description() -> None:
    """What the docstring says about the result is kept when no schema can carry it."""

    def count(text: str):  # type: ignore[no-untyped-def]  # the missing return annotation is the point
        """Count the words in a text.

        Returns:
            The number of words.
        """

    tool = tool_from_function(count)
    assert tool.returns is None
    assert tool.description == snapshot("""\
Count the words in a text.

Returns: The number of words.\
""")


def test_untyped_parameters_and_var_keywords_are_accepted() -> None:
    """An unannotated parameter takes any JSON value; `**kwargs` becomes `additionalProperties`."""

    def tag(item, **labels: str) -> None:  # type: ignore[no-untyped-def]  # untyped on purpose
        """Tag an item."""

    assert tool_from_function(tag).parameters == snapshot(
        {"additionalProperties": {"type": "string"}, "properties": {"item": {}}, "required": ["item"], "type": "object"}
    )


def test_parameters_that_cannot_be_passed_by_keyword_are_refused() -> None:
    """Tools are called with keyword arguments, so positional-only and `*args` parameters raise."""

    def positional(a: int, /) -> None:
        """Take a positional argument."""

    def variadic(*values: int) -> None:
        """Take many."""

    with pytest.raises(CatalogError) as positional_error:
        tool_from_function(positional)
    with pytest.raises(CatalogError) as variadic_error:
        tool_from_function(variadic)
    assert str(positional_error.value) == snapshot(
        "Tool 'positional' has the parameter `a`, which cannot be passed by keyword; tools are called with "
        "keyword arguments only, so make every parameter a keyword parameter."
    )
    assert "`*values`" in str(variadic_error.value)


def test_a_type_hint_without_a_schema_raises_a_catalog_error() -> None:
    """A hint pydantic cannot turn into JSON Schema names the tool instead of leaking a pydantic error."""

    def use(thing: Opaque) -> None:
        """Use a thing."""

    with pytest.raises(CatalogError) as error:
        tool_from_function(use)
    assert str(error.value).startswith("Cannot make a JSON Schema for tool 'use': ")


def test_unknown_docstring_sections_stay_in_the_description() -> None:
    """Only parameter, returns and raises sections are taken out; an `Example:` stays word for word."""
    doc = parse_docstring(
        """Add two numbers.

        Example:
            add(a=1, b=2)

        Args:
            a: First.
            b: Second.
        """
    )
    assert doc.description == snapshot("""\
Add two numbers.

Example:
    add(a=1, b=2)\
""")
    assert doc.params == snapshot({"a": "First.", "b": "Second."})
    assert doc.returns is None
