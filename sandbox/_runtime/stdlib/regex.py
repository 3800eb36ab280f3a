"""The `re` facade, and `string.Template`: patterns, replacement templates and flags reach `re` as plain values.

`re` caches compiled patterns by (type, pattern, flags) and parsed replacement templates by (template,
pattern), for the whole process. A `str` subclass of the code's with its own `__eq__`/`__hash__` (and a
metaclass whose `__eq__` answers yes) would be found by everyone's later lookups, and its `__getitem__`
decides what is parsed: afterwards the host's own `re.sub` with that template does what the code chose. So every
pattern, template and flag is converted to its plain value before `re` sees it, including the templates
given to a compiled pattern's `sub`/`subn` and a match's `expand` (the guard hands out those methods wrapped).
"""

from __future__ import annotations

import collections
import itertools
import operator
import re
import string
from typing import TYPE_CHECKING, Any

from sandbox._runtime.sizes.text import plain

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._runtime.sizes.operations import SizeGuards

_TEMPLATED = frozenset({"sub", "subn", "expand"})
"""Methods of compiled patterns and matches that parse a replacement template."""
_GROUP_REFERENCE = re.compile(r"\\(?:\d|g<)")
"""A group reference in a replacement template (`\\1`, `\\g<name>`): each may be a whole match's text."""
_TEMPLATE_ATTRIBUTES = ("delimiter", "idpattern", "braceidpattern", "pattern")


def plain_flags(flags: object) -> int:
    """`flags` as a plain int (an `re` flag stays one)."""
    if type(flags) in (int, re.RegexFlag):
        return flags  # type: ignore[return-value]
    return int.__index__(operator.index(flags))  # type: ignore[arg-type]


def _pattern(pattern: object) -> object:
    return pattern if isinstance(pattern, re.Pattern) else plain(pattern)


def _template(repl: object) -> object:
    return plain(repl) if isinstance(repl, str | bytes | bytearray) else repl


def compile(pattern: Any, flags: Any = 0) -> re.Pattern[Any]:  # `re.compile` in the facade
    """`re.compile`."""
    return re.compile(_pattern(pattern), plain_flags(flags))


def search(pattern: Any, string: Any, flags: Any = 0) -> Any:
    """`re.search`."""
    return compile(pattern, flags).search(string)


def match(pattern: Any, string: Any, flags: Any = 0) -> Any:
    """`re.match`."""
    return compile(pattern, flags).match(string)


def fullmatch(pattern: Any, string: Any, flags: Any = 0) -> Any:
    """`re.fullmatch`."""
    return compile(pattern, flags).fullmatch(string)


def split(pattern: Any, string: Any, maxsplit: Any = 0, flags: Any = 0) -> Any:
    """`re.split`."""
    return compile(pattern, flags).split(string, maxsplit)


def findall(pattern: Any, string: Any, flags: Any = 0) -> Any:
    """`re.findall`."""
    return compile(pattern, flags).findall(string)


def finditer(pattern: Any, string: Any, flags: Any = 0) -> Any:
    """`re.finditer`."""
    return compile(pattern, flags).finditer(string)


def subs_for(guards: SizeGuards) -> dict[str, Callable[..., Any]]:
    """`re.sub` and `re.subn`, refused before their replacements build past the size limit."""

    def sub(pattern: Any, repl: Any, string: Any, count: Any = 0, flags: Any = 0) -> Any:
        compiled = compile(pattern, flags)
        return compiled.sub(check_sub(guards, compiled, _template(repl), string, count), string, count)

    def subn(pattern: Any, repl: Any, string: Any, count: Any = 0, flags: Any = 0) -> Any:
        compiled = compile(pattern, flags)
        return compiled.subn(check_sub(guards, compiled, _template(repl), string, count), string, count)

    return {"sub": sub, "subn": subn}


def checked_sub(guards: SizeGuards, pattern: re.Pattern[Any], name: str) -> Callable[..., Any]:
    """A compiled pattern's `sub` or `subn`, with a plain template, size-checked like `re.sub`."""
    method = getattr(pattern, name)

    def sub(repl: Any, string: Any, count: Any = 0) -> Any:
        return method(check_sub(guards, pattern, _template(repl), string, count), string, count)

    return sub


def escape(pattern: Any) -> Any:
    """`re.escape`."""
    return re.escape(plain(pattern))


def check_sub(guards: SizeGuards, pattern: re.Pattern[Any], repl: Any, string: object, count: Any = 0) -> Any:
    """Refuse a `sub` whose replacements could pass the size limit, before it makes them; returns the `repl` to use.

    A pattern that matches empty strings matches between every two characters; the bound is the string, each
    match's replacement, and for each group reference in it the whole string again. A function as `repl` is
    the code's, budgeted as it runs; what it returns is counted as `sub` takes it (`_counted`).
    """
    if not isinstance(string, str | bytes | bytearray):
        return repl
    text: str | bytes = plain(string) if isinstance(string, str) else bytes(string)  # a subclass's `len` may lie
    if not isinstance(repl, str | bytes | bytearray):
        return _counted(guards, repl, len(text)) if callable(repl) else repl
    refs = len(_GROUP_REFERENCE.findall(repl if isinstance(repl, str) else bytes(repl).decode("latin-1")))
    limit = operator.index(count) or len(text) + 1
    room = guards.max_size - len(text) * (1 + refs)
    if min(limit, len(text) + 1) * len(repl) <= room:
        return repl
    most = max(room, 0) // max(len(repl), 1) + 1  # one match more than fits: refused
    found = collections.deque(enumerate(itertools.islice(pattern.finditer(text), min(limit, most)), 1), maxlen=1)
    matches = found[0][0] if found else 0
    guards.check_length(len(text) * (1 + refs) + matches * len(repl), "a string of length")
    return repl


def _counted(guards: SizeGuards, function: Callable[[Any], Any], length: int) -> Callable[[Any], Any]:
    """`function` as a `sub`'s replacement, refused once the text it makes passes the cap (it starts at `length`)."""
    total = length

    def replace(match: re.Match[Any]) -> Any:
        nonlocal total
        made = function(match)
        if isinstance(made, str | bytes | bytearray):
            made = plain(made)  # its own length: a subclass's `len` may lie
            total += len(made) - (match.end() - match.start())
            if total > guards.max_size:
                guards.check_length(total, "a string of length")
        return made

    return replace


def templated(obj: object, name: str) -> Callable[..., Any] | None:
    """A compiled pattern's `sub`/`subn` or a match's `expand`, taking a plain template; None for anything else."""
    if name not in _TEMPLATED or not isinstance(obj, re.Pattern | re.Match):
        return None
    method = getattr(obj, name)
    return lambda template, *args, **kwargs: method(_template(template), *args, **kwargs)


class Template(string.Template):
    """`string.Template`; a subclass's delimiter, patterns and flags are compiled from their plain values."""

    def __init_subclass__(cls) -> None:
        for name in _TEMPLATE_ATTRIBUTES:
            value = getattr(cls, name)
            if isinstance(value, str) and type(value) is not str:
                type.__setattr__(cls, name, plain(value))
        type.__setattr__(cls, "flags", plain_flags(cls.flags))
        super().__init_subclass__()


RE: dict[str, Any] = {
    "compile": compile,
    "search": search,
    "match": match,
    "fullmatch": fullmatch,
    "split": split,
    "findall": findall,
    "finditer": finditer,
    "escape": escape,
    **{
        name: getattr(re, name)
        for name in "error Pattern Match A ASCII I IGNORECASE M MULTILINE S DOTALL X VERBOSE U UNICODE NOFLAG".split()
    },
}
"""The `re` facade, the same for every run but for `sub` and `subn` (`subs_for`)."""
