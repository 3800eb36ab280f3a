"""Size checks of the functions that turn text into more text: `repr`, `ascii`, `json.dumps`, `normalize`, `quote`.

Each can make its input many times longer (`repr` of backslashes doubles it, `ascii` of astral characters makes
ten of one, NFKD makes up to eighteen), so applied a few times to a string under the size cap it builds one far
past it. A string short enough that even the worst growth fits is passed at once; a longer one is measured in
slices of `_SLICE` characters (each slice's result is small, and their lengths add up to the whole's, or more),
stopping as soon as the total passes the cap, before the whole result is built. Containers are not measured:
their `repr` is the parts' (a list of one long string many times is left to the memory limit).
"""

from __future__ import annotations

import json
import unicodedata
import urllib.parse
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._sizes import SizeGuards

_SLICE: Final = 1 << 16
_ESCAPE: Final = 10
"""Characters `repr`/`ascii` (and `json.dumps`, 12 for an astral character) write for one, at most."""
_NORMALIZED: Final = 18
"""Code points one becomes under NFKD at most (U+FDFA); NFC/NFD/NFKC make fewer."""
_QUOTED: Final = 12
"""Characters `quote` writes for one at most: `%XX` for each of its up to four UTF-8 bytes."""
_TEXT: Final = (str, bytes, bytearray)


def _measured(guards: SizeGuards, text: Any, worst: int, measure: Callable[[Any], int], extra: int = 0) -> None:
    """Refuse if `measure` over `text`'s slices (plus `extra`) passes the cap; `worst` bounds its growth."""
    if len(text) * worst + extra <= guards.max_size:
        return
    total = extra
    for start in range(0, len(text), _SLICE):
        total += measure(text[start : start + _SLICE])
        if total > guards.max_size:
            guards.check_length(total, "a string of length")  # at least this long: refused


def checked_repr(guards: SizeGuards, value: Any, *, ascii_only: bool = False) -> str:
    """`repr(value)` (`ascii` with `ascii_only`), refused before it is built if a string's would pass the cap."""
    convert = ascii if ascii_only else repr
    if type(value) in _TEXT:  # exactly: a subclass's own `__repr__` is the code's, budgeted as it runs
        # a slice may pick the other quote mark, escaping at most each `'` it holds once more than the whole
        quotes = value.count("'" if type(value) is str else b"'")
        extra = 2 + quotes + (11 if type(value) is bytearray else 0)
        _measured(guards, value, _ESCAPE, lambda part: len(convert(part)) - 2, extra)
    return convert(value)


def dumps_for(guards: SizeGuards) -> Callable[..., str]:
    """`json.dumps`, refusing a string that would escape past the cap, or an indent that could."""

    def dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        ensure_ascii = kwargs.get("ensure_ascii", True)
        if type(obj) is str:
            _measured(guards, obj, 12, lambda part: len(json.dumps(part, ensure_ascii=ensure_ascii)) - 2, 2)
        indent = kwargs.get("indent")
        if indent is not None and not isinstance(obj, str | int | float | bool):
            width = len(indent) if isinstance(indent, str) else guards.check_length(indent, "an indent of width")
            _check_indents(guards, obj, width)
        return json.dumps(obj, *args, **kwargs)

    dumps.__doc__ = json.dumps.__doc__
    return dumps


def _check_indents(guards: SizeGuards, obj: Any, width: int) -> None:
    """Refuse an indented dump whose indentation alone passes the cap: each item's line at its depth."""
    total, pending = 0, [(obj, 1)]
    while pending:
        value, depth = pending.pop()
        items = list(dict.values(value)) if type(value) is dict else value if type(value) in (list, tuple) else None
        if items is None:
            continue
        total += (len(items) + 1) * (1 + width * depth)  # a newline and the indent before each item and the close
        if total > guards.max_size:
            guards.check_length(total, "a string of length")
        pending.extend((item, depth + 1) for item in items)


def normalize_for(guards: SizeGuards) -> Callable[[Any, Any], str]:
    """`unicodedata.normalize`, refused before it builds past the cap."""

    def normalize(form: Any, unistr: Any, /) -> str:
        if type(unistr) is str:
            _measured(guards, unistr, _NORMALIZED, lambda part: len(unicodedata.normalize(form, part)))
        return unicodedata.normalize(form, unistr)

    normalize.__doc__ = unicodedata.normalize.__doc__
    return normalize


def quoting_for(guards: SizeGuards, real: Callable[..., str]) -> Callable[..., str]:
    """`urllib.parse.quote` or `quote_plus`, refused before it builds past the cap."""

    def quote(string: Any, *args: Any, **kwargs: Any) -> str:
        if type(string) in _TEXT:
            _measured(guards, string, _QUOTED, lambda part: 3 * len(_utf8(part)))
        return real(string, *args, **kwargs)

    quote.__name__ = quote.__qualname__ = real.__name__
    quote.__doc__ = real.__doc__
    return quote


def _utf8(part: str | bytes | bytearray) -> bytes | bytearray:
    return part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part


QUOTING: Final = (urllib.parse.quote, urllib.parse.quote_plus)
