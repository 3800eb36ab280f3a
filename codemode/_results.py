"""Tool results to JSON data: the types a handler may return, converted strictly, and measured on the way.

The rules are the sandbox's (`sandbox/jsonvalue.py`), so a value reads the same from a tool as from the code's own
`return`: keys as `json.dumps` writes them (`true`, `null`, `1.5`), sets sorted when all strings or all numbers
(the sandbox's own `sorted_values`), and the values JSON lacks as pydantic's JSON mode writes them (its own
`to_jsonable_python`: `"PT3H"`, `"2024-01-02T03:04:05Z"`), which is also what the stubs, made from pydantic's
schemas, promise. A pydantic model is dumped in Python mode (by its aliases, as its schema names the keys) and walked
here like any other value, so its sets are sorted too; a value only pydantic knows (a URL, a secret, an IP address)
is written by pydantic, inside a model only. A NaN or an infinity (a statistic of an empty column) is `null`, as
JavaScript and pandas write it, rather than the whole result refused. Bytes, which a host cannot always make text,
are their UTF-8 text where they decode (the sandbox's rule) and base64 where they do not, everywhere (`bytes_text`).
A model whose config chooses its own JSON (`ser_json_timedelta="float"`), as its schema then says, is dumped in JSON
mode instead; `when_used="json"` serializers of the other models are not run (their schemas rarely differ).
Anything else (a file, a generator, an arbitrary object) is refused rather than guessed at: iterating or
`str()`-ing an unknown host object could hand host data to the model. The walk that converts also counts a lower
bound of the JSON's length, so a result far over its limit (one big string listed many times) is refused before
it is ever written out, and holds it to the sandbox's own shape limits (values in all, bits of an int), which the
sandbox does not check again on a result it gets already encoded.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import datetime
import enum
import fractions
import functools
import math
import sys
import uuid
from decimal import Decimal
from pathlib import PurePath
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from sandbox.jsonvalue import MAX_DEPTH, float_key, sorted_values  # the sandbox's own rules: one owner
from sandbox.limits import MAX_INT_BITS, MAX_JSON_VALUES, int_too_large_message, too_many_values_message

if TYPE_CHECKING:
    from sandbox import JsonValue

_INT_CAP = 1 << MAX_INT_BITS
"""An int is sent if `-_INT_CAP < n < _INT_CAP`: at most `MAX_INT_BITS` bits."""
_PYDANTIC_TEXT: Final = (datetime.date, datetime.time, datetime.timedelta, Decimal, uuid.UUID, fractions.Fraction)
"""Written as pydantic's JSON mode writes them (`datetime` is a `date`): ISO 8601, the digits, `1/3`."""
_EXACT_TEXT: Final = frozenset(_PYDANTIC_TEXT) | {datetime.datetime}
BYTES_NOTE: Final = "bytes: their UTF-8 text, or base64 (`base64.b64decode(...)`) when they are not UTF-8"
"""What a stub says of a result that is bytes, as `bytes_text` converts them."""


class NotJsonResultError(TypeError):
    """A tool returned something that is not JSON data."""


class ResultTooLargeError(Exception):
    """A result's JSON is longer than the walk's stop: found before the walk ended, so its exact size is unknown."""


def to_json(value: object, *, stop: int = sys.maxsize) -> JsonValue:
    """`value` as JSON data: models, dataclasses, enums, dates and the like converted; anything else refused.

    Args:
        value: What the handler returned.
        stop: `ResultTooLargeError` as soon as the JSON is known to be longer than this many characters.
    """
    walk = _Walk(stop)
    walk.count(1)
    return walk.value(value, MAX_DEPTH)


class _Walk:
    """One conversion; `left` is what the JSON may still take before the walk stops."""

    def __init__(self, stop: int) -> None:
        self.left = stop
        self.values_left = MAX_JSON_VALUES
        self.models = 0
        """How many pydantic models the walk is inside: there, a value only pydantic knows is left to pydantic."""

    def count(self, values: int) -> None:
        self.values_left -= values
        if self.values_left < 0:
            raise NotJsonResultError(too_many_values_message("the result"))

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise ResultTooLargeError

    def value(self, value: object, depth: int) -> JsonValue:
        kind = type(value)
        if kind is dict:
            return self.mapping(value, depth)  # type: ignore[arg-type]  # an exact dict
        if kind is list or kind is tuple:
            return self.items(value, depth)  # type: ignore[arg-type]  # an exact list or tuple
        if kind in _EXACT_TEXT:  # a model's dump is full of them: before the checks that cannot match
            return self.text(to_jsonable_python(value))
        if isinstance(value, str):
            self.spend(len(value) + 2)
            return value if type(value) is str else str.__str__(value)  # a str Enum's value, as plain text
        if value is None or isinstance(value, bool):
            self.spend(4)
            return value
        if isinstance(value, int):
            return _whole(int(value))
        if isinstance(value, float):
            return _finite(float(value))
        if depth <= 0:
            raise NotJsonResultError(f"it is nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return self.mapping(value, depth)
        if isinstance(value, (list, tuple)):
            return self.items(value, depth)
        if isinstance(value, (set, frozenset)):
            return sorted_values(self.items(list(value), depth))  # in an order that is the same in every process
        if isinstance(value, collections.deque):
            return self.items(list(value), depth)
        return self.convert(value, depth)

    def text(self, text: str) -> str:
        self.spend(len(text) + 2)
        return text

    def mapping(self, value: dict[object, object], depth: int) -> dict[str, JsonValue]:
        if depth <= 0:
            raise NotJsonResultError(f"it is nested more than {MAX_DEPTH} levels deep")
        self.spend(2 + 4 * len(value))  # braces, and per item a key's quotes, a colon and a comma at least
        self.count(len(value))  # after the size: a result too large says so, however many values it holds
        out: dict[str, JsonValue] = {}
        size = 0
        converted = False
        for key, item in value.items():
            if type(key) is str:
                name = key
            else:
                name = _key(key)
                converted = True
            size += len(name)
            kind = type(item)
            if kind is str:  # plain scalars stay in this loop: most of a result is made of them
                size += len(item)  # type: ignore[arg-type]  # an exact str
                out[name] = item  # type: ignore[assignment]  # an exact str
            elif (
                (kind is int and -_INT_CAP < item < _INT_CAP)  # type: ignore[operator]  # an exact int
                or kind is bool
                or item is None
                or (kind is float and math.isfinite(item))  # type: ignore[arg-type]  # an exact float
            ):
                out[name] = item  # type: ignore[assignment]  # an exact int, bool, None or finite float
            else:
                self.spend(size)
                size = 0
                out[name] = self.value(item, depth - 1)
        self.spend(size)
        if converted and len(out) < len(value):  # `{1: .., "1": ..}`: one would be lost
            raise NotJsonResultError(_clash(value))
        return out

    def items(self, value: list[object] | tuple[object, ...], depth: int) -> list[JsonValue]:
        if depth <= 0:
            raise NotJsonResultError(f"it is nested more than {MAX_DEPTH} levels deep")
        self.spend(1 + 2 * len(value))  # brackets, and per item a character and a comma, at least
        self.count(len(value))
        out: list[JsonValue] = []
        size = 0
        for item in value:
            kind = type(item)
            if kind is str:
                size += len(item)  # type: ignore[arg-type]  # an exact str
                out.append(item)  # type: ignore[arg-type]  # an exact str
            elif (
                (kind is int and -_INT_CAP < item < _INT_CAP)  # type: ignore[operator]  # an exact int
                or kind is bool
                or item is None
                or (kind is float and math.isfinite(item))  # type: ignore[arg-type]  # an exact float
            ):
                out.append(item)  # type: ignore[arg-type]  # an exact int, bool, None or finite float
            else:
                self.spend(size)
                size = 0
                out.append(self.value(item, depth - 1))
        self.spend(size)
        return out

    def convert(self, value: object, depth: int) -> JsonValue:
        if isinstance(value, BaseModel):
            if _own_json_rules(type(value)):  # `ser_json_timedelta="float"` and the like: its schema says so too
                return self.value(value.model_dump(mode="json", by_alias=True), depth - 1)
            self.models += 1  # no `finally`: an error ends the whole walk
            data = self.value(value.model_dump(mode="python", by_alias=True), depth - 1)  # sets stay sets, sorted here
            self.models -= 1
            return data
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
            return self.value(fields, depth - 1)
        if isinstance(value, enum.Enum):
            return self.value(value.value, depth - 1)
        text = _text(value)
        if text is not None:
            return self.text(text)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self.text(bytes_text(bytes(value)))
        if self.models:  # a field's value of a type pydantic declared (a URL, a secret): its JSON mode writes it
            return self.value(to_jsonable_python(value), depth - 1)
        raise NotJsonResultError(f"a value of type {type(value).__name__!r} is not JSON data")


def bytes_text(data: bytes) -> str:
    """Bytes as the code gets them: their UTF-8 text (the sandbox's own rule), else base64 (`BYTES_NOTE` says so)."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii")


def _whole(number: int) -> int:
    if not -_INT_CAP < number < _INT_CAP:
        raise NotJsonResultError(int_too_large_message("a value", number.bit_length()))
    return number


def _finite(number: float) -> float | None:
    """NaN and infinities as `null`, as JavaScript and pandas write them: only the host could fix them, not the code."""
    return number if math.isfinite(number) else None


@functools.cache
def _own_json_rules(model: type[BaseModel]) -> bool:
    """Whether a model's config chooses how its JSON is written (`ser_json_timedelta`, `ser_json_bytes`...)."""
    return any(key.startswith("ser_json") for key in model.model_config)


def _text(value: object) -> str | None:
    """Dates, times, durations, Decimal, UUID and Fraction as pydantic's JSON mode writes them; a path as its text."""
    if isinstance(value, _PYDANTIC_TEXT):
        text: str = to_jsonable_python(value)
        return text
    return str(value) if isinstance(value, PurePath) else None


def _key(key: object) -> str:
    """A key as `json.dumps` writes it (`True` -> `"true"`, `None` -> `"null"`), as the sandbox writes the code's."""
    if isinstance(key, str):
        return key if type(key) is str else str.__str__(key)
    if key is None or isinstance(key, bool):
        return "null" if key is None else ("true" if key else "false")
    if isinstance(key, enum.Enum):
        return _key(key.value)
    if isinstance(key, int):
        return int.__repr__(_whole(int(key)))
    if isinstance(key, float):
        return float_key(float(key))
    text = _text(key)
    if text is None:
        raise NotJsonResultError(f"a {type(key).__name__!r} dictionary key is not JSON data")
    return text


def _clash(value: dict[object, object]) -> str:
    seen: set[str] = set()
    for key in value:
        name = _key(key)
        if name in seen:
            return f"two of its keys both become {name!r} in JSON; keep one of them"
        seen.add(name)
    return "two of its keys become one in JSON"
