"""Python names: whether a string is a usable one, and the portable alias the model writes after `tools.`.

`is_python_name` is codemode's one check of a name the model writes or reads (a variable, a parameter, a type).

Tool names come from hosts, MCP servers and JSONL files, and many are not Python identifiers
(`math.factorial`, `my-tool`, `2fa`, `class`). Each name maps to one alias by fixed rules, so the same
catalog gives the same aliases in every process and a conversation can be continued anywhere. The rules,
applied in order (a name that is already a portable alias is kept as it is):

1. NFKC-normalise the name; fold non-ASCII letters to ASCII by dropping their accents (`café` -> `cafe`);
   a character with no ASCII form becomes `u<hex code point>` (`天` -> `u5929`).
2. Replace each run of characters that cannot appear in an identifier by one `_` (`my-tool` -> `my_tool`),
   then strip leading and trailing `_` (the sandbox forbids names that start with `_`).
3. A name left empty becomes `tool`; one that starts with a digit gets the prefix `t_` (`2fa` -> `t_2fa`).
4. Keywords and soft keywords get a `_` suffix (`class` -> `class_`, `match` -> `match_`).
5. Names reserved on the `tools` namespace (`search`, `describe`, `list`) get the suffix `_tool`.

Distinct names can map to one alias (`my-tool` and `my_tool`). Within one source (one `extend`, JSONL file or
server) the catalog numbers them (`_definitions.numbered_aliases`): the tool whose name is the alias keeps
it, the others get `my_tool_2`, `my_tool_3`, ... in order. Across sources it refuses the second.
"""

from __future__ import annotations

import difflib
import keyword
import re
import unicodedata
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable

RESERVED_NAMES: Final = frozenset({"describe", "list", "search"})
"""Members of the sandbox's `tools` namespace that are not tools."""

RESERVED_SUFFIX: Final = "_tool"
"""Appended to a name in `RESERVED_NAMES` to make its alias (`search` -> `search_tool`)."""

SOFT_KEYWORDS: Final = frozenset({"case", "match", "type"})
"""Soft keywords of Python 3.12, fixed here so that aliases do not depend on the running Python."""

_INVALID_RUN: Final = re.compile(r"[^A-Za-z0-9_]+")
MAX_NAME: Final = 256
"""Characters of the longest tool or argument name looked up or matched (MCP's own limit is 128): a longer one
is refused first, since matching costs the host time and memory per character."""
_QUOTED: Final = 40
"""Characters of a too-long name quoted in its error."""


def is_python_name(
    name: str,
    *,
    ascii_only: bool = False,
    keyword_ok: bool = False,
    underscore_ok: bool = True,
    nfkc_only: bool = False,
) -> bool:
    """Whether `name` can be written as a Python name: an identifier, and not a keyword (`class`, `None`).

    Every check of this kind in codemode is this function; the sandbox keeps its own.

    Args:
        name: The string to judge.
        ascii_only: Only ASCII letters, digits and `_` (what a type name from a schema title must be).
        keyword_ok: A keyword counts too (a name the code assigned, which the parser has already judged).
        underscore_ok: A leading `_` counts (the sandbox forbids such names in the model's code).
        nfkc_only: Only a name that is its own NFKC form: Python reads `ﬁle` as `file`, so a name that is not
            would be written with one spelling and looked up with another.
    """
    return (
        (not ascii_only or name.isascii())
        and name.isidentifier()
        and (keyword_ok or not keyword.iskeyword(name))
        and (underscore_ok or not name.startswith("_"))
        and (not nfkc_only or unicodedata.normalize("NFKC", name) == name)
    )


def is_portable_alias(alias: str) -> bool:
    """Whether `alias` can be used as it is: an ASCII identifier that no rule would change."""
    return (
        is_python_name(alias, ascii_only=True, underscore_ok=False)
        and alias not in SOFT_KEYWORDS
        and alias not in RESERVED_NAMES
    )


def portable_alias(name: str) -> str:
    """Map a tool name to its portable alias, a Python identifier safe to use as `tools.<alias>`.

    Example:
        ```python
        portable_alias("math.factorial")  # 'math_factorial'
        portable_alias("2fa")  # 't_2fa'
        portable_alias("search")  # 'search_tool'
        ```
    """
    if is_portable_alias(name):
        return name
    alias = _INVALID_RUN.sub("_", _fold_to_ascii(name)).strip("_")
    if not alias:
        alias = "tool"
    elif alias[0].isdigit():
        alias = f"t_{alias}"
    if keyword.iskeyword(alias) or alias in SOFT_KEYWORDS:
        alias = f"{alias}_"
    if alias in RESERVED_NAMES:
        alias = f"{alias}{RESERVED_SUFFIX}"
    return alias


def too_long(name: str, what: str) -> str | None:
    """Why `name` is refused before any lookup (it is longer than `MAX_NAME`), quoting its start; else None."""
    if len(name) <= MAX_NAME:
        return None
    return f"{what} {name[:_QUOTED]!r}... is {len(name):,} characters long; one is at most {MAX_NAME:,}"


def close_matches(name: str, candidates: Iterable[str], *, limit: int = 3, cutoff: float = 0.6) -> list[str]:
    """The candidates closest to an unknown `name`, best first, to suggest in an error message.

    Comparison ignores case and treats `.`, `-` and `_` alike, so `github-create-issue` finds
    `github.create_issue`.

    Args:
        name: The name that was not found.
        candidates: Known names (original names and aliases may be mixed; duplicates are dropped).
        limit: The most matches to return.
        cutoff: Similarity in [0, 1] below which a candidate is not a match.
    """
    if len(name) > MAX_NAME:
        return []
    by_key: dict[str, str] = {}
    for candidate in candidates:
        by_key.setdefault(_match_key(candidate), candidate)
    keys = difflib.get_close_matches(_match_key(name), list(by_key), n=limit, cutoff=cutoff)
    return [by_key[key] for key in keys]


def _fold_to_ascii(name: str) -> str:
    if name.isascii():
        return name  # NFKC leaves ASCII as it is; most names are ASCII
    parts: list[str] = []
    for char in unicodedata.normalize("NFKC", name):
        if char.isascii():
            parts.append(char)
            continue
        folded = "".join(c for c in unicodedata.normalize("NFKD", char) if c.isascii() and c.isalnum())
        # Spaces around an escape become one `_` in the next step: `天气` -> `u5929_u6c14`.
        parts.append(folded or f" u{ord(char):04x} ")
    return "".join(parts)


def _match_key(name: str) -> str:
    return _INVALID_RUN.sub("_", name.lower())
