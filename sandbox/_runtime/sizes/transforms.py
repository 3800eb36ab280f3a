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
    from collections.abc import Callable, Iterator

    from sandbox._runtime.sizes.operations import SizeGuards

_SLICE: Final = 1 << 16
_ESCAPE: Final = 10
"""Characters `repr`/`ascii` (and `json.dumps`, 12 for an astral character) write for one, at most."""
_NORMALIZED: Final = 18
"""Code points one becomes under NFKD at most (U+FDFA); NFC/NFD/NFKC make fewer."""
_QUOTED: Final = 12
"""Characters `quote` writes for one at most: `%XX` for each of its up to four UTF-8 bytes."""
_TEXT: Final = (str, bytes, bytearray)
_INDENT: Final = "an indent of width"
_SEPARATOR: Final = 2
"""Characters of a separator that need no measuring: the defaults' (`", "`, `": "`)."""


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
    check_repr(guards, value, ascii_only=ascii_only)
    return ascii(value) if ascii_only else repr(value)


def check_repr(guards: SizeGuards, value: Any, *, ascii_only: bool = False) -> None:
    """Refuse `repr(value)` (`ascii` with `ascii_only`) of a str or bytes that would pass the cap, unbuilt."""
    if type(value) in _TEXT:  # exactly: a subclass's own `__repr__` is the code's, budgeted as it runs
        convert = ascii if ascii_only else repr
        # a slice may pick the other quote mark, escaping at most each `'` it holds once more than the whole
        quotes = value.count("'" if type(value) is str else b"'")
        extra = 2 + quotes + (11 if type(value) is bytearray else 0)
        _measured(guards, value, _ESCAPE, lambda part: len(convert(part)) - 2, extra)


def dumps_for(guards: SizeGuards) -> Callable[..., str]:
    """`json.dumps`, refusing a string that would escape past the cap, or an indent or separators that could."""

    def dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        indent, separators = kwargs.get("indent"), kwargs.get("separators")
        item, key = (", " if indent is None else ",", ": ") if separators is None else _pair(separators)
        check_dump(guards, obj, kwargs.get("ensure_ascii", True), indent, item, key)
        return json.dumps(obj, *args, **kwargs)

    dumps.__doc__ = json.dumps.__doc__
    return dumps


def encoder_for(guards: SizeGuards) -> type[json.JSONEncoder]:
    """`json.JSONEncoder`, its `encode` and `iterencode` checked as `json.dumps` is (the code's subclasses too)."""

    class JSONEncoder(json.JSONEncoder):
        __doc__ = json.JSONEncoder.__doc__

        def encode(self, o: Any) -> str:
            if isinstance(o, str):  # written at once, without `iterencode`
                check_dump(guards, o, self.ensure_ascii, None, "", "")
            return super().encode(o)

        def iterencode(self, o: Any, _one_shot: bool = False) -> Iterator[str]:
            indent = self.indent  # read once, and written back plain: the code's int or str may answer differently
            if indent is not None:
                self.indent = str.__str__(indent) if isinstance(indent, str) else guards.check_length(indent, _INDENT)
            check_dump(guards, o, self.ensure_ascii, self.indent, str(self.item_separator), str(self.key_separator))
            return super().iterencode(o, _one_shot)

    JSONEncoder.__module__ = "json"
    return JSONEncoder


def _pair(separators: Any) -> tuple[Any, Any]:
    """The item and key separators given to `json.dumps`, or none to measure if they are no pair."""
    if type(separators) in (tuple, list) and len(separators) == 2:
        return separators[0], separators[1]
    return "", ""


def check_dump(guards: SizeGuards, obj: Any, ensure_ascii: object, indent: Any, item: Any, key: Any) -> None:
    """Refuse a JSON text that would pass the cap: a string's escapes, or the layout of indents and separators."""
    if type(obj) is str:
        _measured(guards, obj, 12, lambda part: len(json.dumps(part, ensure_ascii=bool(ensure_ascii))) - 2, 2)
        return
    if isinstance(obj, str | int | float | bool) or obj is None:
        return
    separators = len(item) if isinstance(item, str) else 0, len(key) if isinstance(key, str) else 0
    if indent is None and max(separators) <= _SEPARATOR:
        return
    if indent is None:
        width = None
    else:
        width = len(indent) if isinstance(indent, str) else guards.check_length(indent, _INDENT)
    _check_layout(guards, obj, width, *separators)


def _check_layout(guards: SizeGuards, obj: Any, width: int | None, item: int, key: int) -> None:
    """Refuse a dump whose layout alone passes the cap: the separators, and each item's line at its depth."""
    total, pending = 0, [(obj, 1)]
    while pending:
        value, depth = pending.pop()
        mapping = type(value) is dict
        items = list(dict.values(value)) if mapping else value if type(value) in (list, tuple) else None
        if not items:
            continue
        total += (len(items) - 1) * item + (len(items) * key if mapping else 0)
        if width is not None:  # a newline and the indent before each item and the close
            total += (len(items) + 1) * (1 + width * depth)
        if total > guards.max_size:
            guards.check_length(total, "a string of length")
        pending.extend((item_, depth + 1) for item_ in items)


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
