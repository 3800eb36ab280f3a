"""Tool results to JSON data: the types a handler may return, converted strictly.

Anything else (a file, a generator, an arbitrary object) is refused rather than guessed at: iterating or
`str()`-ing an unknown host object could hand host data to the model.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import uuid
from decimal import Decimal
from pathlib import PurePath
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from codemode._json import JsonValue

_MAX_DEPTH = 100


class NotJsonResultError(TypeError):
    """A tool returned something that is not JSON data."""


def to_json(value: object, depth: int = _MAX_DEPTH) -> JsonValue:
    """`value` as JSON data: models, dataclasses, enums, dates and the like converted; anything else refused."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJsonResultError(f"{value!r} is not a JSON number")
        return float(value)
    if depth <= 0:
        raise NotJsonResultError(f"it is nested more than {_MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        return {_key(key): to_json(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_json(item, depth - 1) for item in items]
    return _convert(value, depth)


def _convert(value: object, depth: int) -> JsonValue:
    if isinstance(value, BaseModel):
        return to_json(value.model_dump(mode="json"), depth - 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json({field.name: getattr(value, field.name) for field in dataclasses.fields(value)}, depth - 1)
    if isinstance(value, enum.Enum):
        return to_json(value.value, depth - 1)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (uuid.UUID, Decimal, PurePath)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        raise NotJsonResultError("bytes are not JSON data (decode them, or base64-encode them)")
    raise NotJsonResultError(f"a value of type {type(value).__name__!r} is not JSON data")


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float, bool, enum.Enum)) or key is None:
        return str(key.value if isinstance(key, enum.Enum) else key)
    raise NotJsonResultError(f"a {type(key).__name__!r} dictionary key is not JSON data")
