"""The size-checked methods of str and bytes, and the `%` template reader the `%` guard uses.

Each method takes the run's `SizeGuards` first and checks the size of what it would build before building it:
`ljust`/`center`/`zfill` widths, `expandtabs`, `replace`, `translate`, `join`, and `str.format` whose fields go through
the sandbox's attribute guard. Apart from `sandbox._runtime.sizes.operations` so that each stays under 400 lines.
"""

from __future__ import annotations

import operator
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sandbox._runtime.sizes.transforms import checked_repr

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from sandbox._runtime.sizes.operations import SizeGuards


class _GuardedFormatter(string.Formatter):
    """`str.format` whose fields go through the sandbox's attribute and item guards."""

    def __init__(self, guards: SizeGuards) -> None:
        self.guards = guards
        self.numbering: list[bool] = []  # per field: numbered automatically (`{}`, `{.x}`, `{[0]}`) or by hand

    def parse(self, format_string: str) -> Any:
        """Number `{.x}` and `{[0]}` automatically as `str.format` does (`string.Formatter` makes them a KeyError)."""
        for literal, field, spec, conversion in super().parse(format_string):
            if field is not None and (field == "" or field[0] in ".["):
                self.numbering.append(True)
                field = f"{self.numbering.count(True) - 1}{field}"
            elif field is not None and field.split(".")[0].split("[")[0].isdigit():
                self.numbering.append(False)
            if len(set(self.numbering)) > 1:
                first, then = ("automatic field numbering", "manual field specification")[
                    :: 1 if self.numbering[0] else -1
                ]
                raise ValueError(f"cannot switch from {first} to {then}")
            yield literal, field, spec, conversion

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = _formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attribute, key in rest:
            obj = self.guards.getattr(obj, key) if is_attribute else obj[key]
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.guards.check_spec(format_spec, value)
        return format(value, format_spec)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in ("r", "a"):
            return checked_repr(self.guards, value, ascii_only=conversion == "a")
        return super().convert_field(value, conversion)


def _formatter_field_name_split(field_name: str) -> tuple[Any, Iterator[tuple[bool, Any]]]:
    import _string  # type: ignore[import-not-found]  # CPython's own parser of `{a.b[c]}` fields, as used by string.Formatter

    return _string.formatter_field_name_split(field_name)  # type: ignore[no-any-return]


def _format(guards: SizeGuards, template: str, *args: Any, **kwargs: Any) -> str:
    return _GuardedFormatter(guards).vformat(template, args, kwargs)


def _format_map(guards: SizeGuards, template: str, mapping: Any) -> str:
    return _GuardedFormatter(guards).vformat(template, (), mapping)


def _padded(name: str) -> Callable[..., Any]:
    def method(guards: SizeGuards, obj: Any, width: int, *args: Any) -> Any:
        width = operator.index(width)  # once, as a plain int: the code's `__index__` or `>` may lie
        guards.check_length(width, "a string of length")
        return getattr(obj, name)(width, *args)

    return method


def _expandtabs(guards: SizeGuards, obj: Any, tabsize: int = 8) -> Any:
    tabsize = operator.index(tabsize)  # once, as a plain int: the code's `__index__` or `>` may lie
    guards.check_length(len(obj) * max(tabsize, 1), "a string of length")
    return obj.expandtabs(tabsize)


def _replace(guards: SizeGuards, obj: Any, old: Any, new: Any, count: int = -1) -> Any:
    old, new = plain(old), plain(new)  # a subclass's `len` may lie; the base type's may not
    count = operator.index(count)  # once, as a plain int
    hits = obj.count(old) if old else len(obj) + 1
    if count >= 0:
        hits = min(hits, count)
    guards.check_length(len(obj) + hits * max(len(new) - len(old), 0), "a string of length")
    return obj.replace(old, new, count)


def _translate(guards: SizeGuards, obj: Any, table: Any) -> Any:
    if type(table) is not dict:  # another mapping's `__getitem__` would answer inside C, past any check
        raise TypeError("`str.translate` takes a dict in the sandbox, as `str.maketrans` makes it")
    longest = max((str.__len__(value) for value in table.values() if isinstance(value, str)), default=1)
    guards.check_length(len(obj) * max(longest, 1), "a string of length")
    return obj.translate(table)


def _join(guards: SizeGuards, obj: Any, iterable: Any) -> Any:
    items = [plain(item) for item in iterable]
    guards.check_length(
        sum(len(item) for item in items if isinstance(item, (str, bytes, bytearray)))
        + len(obj) * max(len(items) - 1, 0),
        "a string of length",
    )
    return obj.join(items)


@dataclass(frozen=True, slots=True)
class PercentFields:
    """What the `%` guard needs of a template's fields."""

    widest: int
    """The widest width or precision written in it."""
    stars: bool
    """Whether a `*` takes a width or precision from the arguments."""
    shown: tuple[tuple[str | int, str], ...]
    """The `%r`/`%a` fields: their key or position, and the conversion."""
    keys: tuple[str, ...]
    """The keys its fields read from a mapping."""


_SUMMARIES: dict[str, PercentFields] = {}
"""Templates read so far (a loop formats with the same one): plain text only, so no code's `__eq__` is asked."""
_SUMMARIZED: Final = 512
"""Templates kept, each at most `_SUMMARIZED` characters; past that many the cache starts again."""


def percent_summary(template: str) -> PercentFields:
    """`template`'s fields, read once (`template` is a plain str)."""
    known = _SUMMARIES.get(template)
    if known is not None:
        return known
    widest, stars, position = 0, False, 0
    shown: list[tuple[str | int, str]] = []
    keys: list[str] = []
    for key, widths, conversion in percent_fields(template):
        for width in widths:
            if width == "*":
                stars, position = True, position + 1
            else:
                widest = max(widest, int(width) if len(width) <= 18 else 10**18)
        if conversion == "%":
            continue
        if conversion in ("r", "a"):
            shown.append((position if key is None else key, conversion))
        if key is None:
            position += 1
        else:
            keys.append(key)
    summary = PercentFields(widest, stars, tuple(shown), tuple(keys))
    if len(template) <= _SUMMARIZED:
        if len(_SUMMARIES) >= _SUMMARIZED:
            _SUMMARIES.clear()
        _SUMMARIES[template] = summary
    return summary


def percent_fields(template: str) -> Iterator[tuple[str | None, list[str], str]]:
    """Each field of a `%` template as CPython reads it: its `(key)`, widths and conversion.

    The key is None for a positional field; the width and precision are as written (digits or `*`); the
    conversion is one character (`""` at the end of the template).
    """
    index, end = 0, len(template)
    while (index := template.find("%", index)) != -1:
        index += 1
        key = None
        if index < end and template[index] == "(":
            depth = 1
            index += 1
            start = index
            while index < end and depth:
                depth += {"(": 1, ")": -1}.get(template[index], 0)
                index += 1
            key = template[start : index - 1]
        while index < end and template[index] in "-+ #0":
            index += 1
        widths = []
        for _ in range(2):  # the width, then after a `.` the precision
            start = index
            if index < end and template[index] == "*":
                index += 1
            while index < end and template[index].isdigit():
                index += 1
            if index > start:
                widths.append(template[start:index])
            if index < end and template[index] == ".":
                index += 1
            else:
                break
        while index < end and template[index] in "hlL":  # a length modifier, which CPython skips
            index += 1
        conversion = template[index : index + 1]
        index += 1
        yield key, widths, conversion


def plain(value: Any) -> Any:
    """A str or bytes subclass's value as the plain base type (other values unchanged)."""
    if isinstance(value, str) and type(value) is not str:
        return str.__getitem__(value, slice(None))
    if isinstance(value, bytes | bytearray) and type(value) not in (bytes, bytearray):
        return bytes(value)
    return value


SIZED_METHODS: dict[str, Callable[..., Any]] = {
    "join": _join,
    "ljust": _padded("ljust"),
    "rjust": _padded("rjust"),
    "center": _padded("center"),
    "zfill": _padded("zfill"),
    "expandtabs": _expandtabs,
    "replace": _replace,
}
STR_METHODS: dict[str, Callable[..., Any]] = {
    **SIZED_METHODS,
    "format": _format,
    "format_map": _format_map,
    "translate": _translate,
}
