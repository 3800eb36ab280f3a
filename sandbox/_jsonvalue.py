"""JSON values: the only data that crosses the sandbox boundary, and the checks that keep it so.

`check_json` copies a value made of exact `dict`/`list`/`str`/`int`/`float`/`bool`/`None` (tuples become lists),
refusing anything else, subclasses included, so no object with behaviour crosses in either direction.
"""

from __future__ import annotations

import math
from typing import TypeAlias

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"

MAX_DEPTH = 100


class NotJsonError(ValueError):
    """A value is not plain JSON data; the message says where and what it is."""


def check_json(value: object, *, max_depth: int = MAX_DEPTH, max_int_bits: int = 10_000) -> JsonValue:
    """Return a fresh copy of `value` made only of JSON types, or raise `NotJsonError`."""
    return _copy(value, "value", max_depth, max_int_bits)


def _copy(value: object, path: str, depth: int, max_int_bits: int) -> JsonValue:
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value  # type: ignore[return-value]  # exact immutable JSON scalars
    if kind is int:
        if value.bit_length() > max_int_bits:  # type: ignore[attr-defined]
            raise NotJsonError(f"{path} is an int too large to send ({value.bit_length()} bits)")  # type: ignore[attr-defined]
        return value  # type: ignore[return-value]
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            raise NotJsonError(f"{path} is {value!r}, which JSON cannot carry")
        return value  # type: ignore[return-value]
    if depth <= 0:
        raise NotJsonError(f"{path} is nested more than {MAX_DEPTH} levels deep")
    if kind is dict:
        out: dict[str, JsonValue] = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise NotJsonError(f"{path} has a key {_describe(key)}; JSON object keys must be str")
            out[key] = _copy(item, f"{path}[{key!r}]", depth - 1, max_int_bits)
        return out
    if kind is list or kind is tuple:
        items: list[object] = list(value)  # type: ignore[call-overload]  # exact list or tuple, checked above
        return [_copy(item, f"{path}[{i}]", depth - 1, max_int_bits) for i, item in enumerate(items)]
    raise NotJsonError(f"{path} is {_describe(value)}, not JSON data (use dict, list, str, int, float, bool, None)")


def _describe(value: object) -> str:
    name = type(value).__name__
    return f"a {name}" if name[0] not in "aeiou" else f"an {name}"
