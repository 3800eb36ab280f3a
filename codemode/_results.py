"""Tool results to JSON data: the types a handler may return, converted strictly, and measured on the way.

Anything else (a file, a generator, an arbitrary object) is refused rather than guessed at: iterating or
`str()`-ing an unknown host object could hand host data to the model. The walk that converts also counts a lower
bound of the JSON's length, so a result far over its limit (one big string listed many times) is refused before
it is ever written out, and holds it to the sandbox's own shape limits (values in all, bits of an int), which the
sandbox does not check again on a result it gets already encoded.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import sys
import uuid
from decimal import Decimal
from pathlib import PurePath
from typing import TYPE_CHECKING

from pydantic import BaseModel

from sandbox.limits import MAX_INT_BITS, MAX_JSON_VALUES, int_too_large_message, too_many_values_message

if TYPE_CHECKING:
    from codemode._json import JsonValue

_MAX_DEPTH = 100
_INT_CAP = 1 << MAX_INT_BITS
"""An int is sent if `-_INT_CAP < n < _INT_CAP`: at most `MAX_INT_BITS` bits."""


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
    return walk.value(value, _MAX_DEPTH)


class _Walk:
    """One conversion; `left` is what the JSON may still take before the walk stops."""

    def __init__(self, stop: int) -> None:
        self.left = stop
        self.values_left = MAX_JSON_VALUES

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
        if value is None or isinstance(value, (bool, str)):
            self.spend(len(value) + 2 if isinstance(value, str) else 4)
            return value
        if isinstance(value, int):
            return _whole(int(value))
        if isinstance(value, float):
            return _finite(float(value))
        if depth <= 0:
            raise NotJsonResultError(f"it is nested more than {_MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return self.mapping(value, depth)
        if isinstance(value, (list, tuple, set, frozenset)):
            return self.items(sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value, depth)
        return self.convert(value, depth)

    def mapping(self, value: dict[object, object], depth: int) -> dict[str, JsonValue]:
        if depth <= 0:
            raise NotJsonResultError(f"it is nested more than {_MAX_DEPTH} levels deep")
        self.spend(2 + 4 * len(value))  # braces, and per item a key's quotes, a colon and a comma at least
        self.count(len(value))  # after the size: a result too large says so, however many values it holds
        out: dict[str, JsonValue] = {}
        size = 0
        for key, item in value.items():
            name = key if type(key) is str else _key(key)
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
        return out

    def items(self, value: list[object] | tuple[object, ...], depth: int) -> list[JsonValue]:
        if depth <= 0:
            raise NotJsonResultError(f"it is nested more than {_MAX_DEPTH} levels deep")
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
            return self.value(value.model_dump(mode="json"), depth - 1)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
            return self.value(fields, depth - 1)
        if isinstance(value, enum.Enum):
            return self.value(value.value, depth - 1)
        if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
            return value.isoformat()
        if isinstance(value, datetime.timedelta):
            return value.total_seconds()
        if isinstance(value, (uuid.UUID, Decimal, PurePath)):
            return str(value)
        if isinstance(value, (bytes, bytearray)):
            raise NotJsonResultError("bytes are not JSON data (decode them, or base64-encode them)")
        raise NotJsonResultError(f"a value of type {type(value).__name__!r} is not JSON data")


def _whole(number: int) -> int:
    if not -_INT_CAP < number < _INT_CAP:
        raise NotJsonResultError(int_too_large_message("a value", number.bit_length()))
    return number


def _finite(number: float) -> float:
    if not math.isfinite(number):
        raise NotJsonResultError(f"{number!r} is not a JSON number")
    return number


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float, bool, enum.Enum)) or key is None:
        return str(key.value if isinstance(key, enum.Enum) else key)
    raise NotJsonResultError(f"a {type(key).__name__!r} dictionary key is not JSON data")
