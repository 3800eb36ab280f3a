"""The JSON value type shared by the codemode layer."""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
