"""A host function's result that the host has converted, measured and encoded once: handed on with no second check.

Apart from `sandbox.jsonvalue` (which checks and converts values that are not trusted to be JSON) because nothing here
checks: the text is what `json.dumps` wrote, so it is JSON whatever the value was. Inline the code gets a copy, so
it cannot change the host's value; across a process boundary the text is put into the frame as it is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, final

from sandbox.limits import cut_end

if TYPE_CHECKING:
    from sandbox.jsonvalue import JsonValue


@final
class JsonText:
    """A host function's result, encoded once as JSON: the sandbox hands it to the code with no second check.

    A host function that has converted and measured its result already (codemode does) returns one instead of the
    data; any other return value is checked and copied in full. Change nothing in `value` once it is made.

    Raises:
        TypeError: `value` holds something `json.dumps` cannot write (a set, a key that is not a str or number).
        ValueError: `value` holds NaN or an infinity, or holds itself.
        RecursionError: `value` is nested too deep to write.

    Example:
        ```python
        async def rows() -> JsonText:
            return JsonText([{"id": 1}])
        ```
    """

    __slots__ = ("_text", "_value")

    def __init__(self, value: object) -> None:
        self._text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        self._value = value

    @property
    def text(self) -> str:
        """The JSON text, as `json.dumps(value, ensure_ascii=False)` writes it."""
        return self._text

    @property
    def size(self) -> int:
        """The text's length in characters (what a limit on a result's JSON counts)."""
        return len(self._text)

    def copy(self) -> JsonValue:
        """A fresh copy of the value in exact JSON types, for the code to change as it likes."""
        try:
            return _plain_copy(self._value)
        except (_NotPlainError, RecursionError):  # a tuple, a subclass, a number key: the text spells them as JSON
            return json.loads(self._text)  # type: ignore[no-any-return]  # a JSON text decodes to JSON data

    def __repr__(self) -> str:
        shown = cut_end(self._text, 80)
        return f"JsonText({shown})"


class _NotPlainError(Exception):
    """The value holds something other than the exact JSON types."""


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_copy(value: object) -> JsonValue:
    """A copy of data made of the exact JSON types only (its floats finite: the text was written without NaN)."""
    kind = type(value)
    if kind is dict:
        out: dict[str, JsonValue] = {}
        for key, item in value.items():  # type: ignore[attr-defined]  # an exact dict
            if type(key) is not str:
                raise _NotPlainError
            out[key] = item if type(item) in _SCALARS else _plain_copy(item)
        return out
    if kind is list:
        return [item if type(item) in _SCALARS else _plain_copy(item) for item in value]  # type: ignore[attr-defined]
    if kind in _SCALARS:
        return value  # type: ignore[return-value]  # an exact scalar
    raise _NotPlainError
