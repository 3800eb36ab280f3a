"""Docstring parsing for tools made from functions: the description, parameter docs and the returns doc.

Understands Google style (`Args:` / `Returns:` sections, `name (type): text` entries) and NumPy style
(`Parameters` / `Returns` headers underlined with dashes, `name : type` entries with indented text). It
is deliberately small: a section it does not know stays in the description, word for word.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Final, Literal

SectionKind = Literal["params", "returns", "raises"]

_SECTIONS: Final[dict[str, SectionKind]] = {
    "args": "params",
    "arguments": "params",
    "parameters": "params",
    "params": "params",
    "keyword args": "params",
    "keyword arguments": "params",
    "other parameters": "params",
    "returns": "returns",
    "return": "returns",
    "yields": "returns",
    "yield": "returns",
    "raises": "raises",
    "exceptions": "raises",
}
_GOOGLE_HEADER: Final = re.compile(r"^\s*([A-Za-z][A-Za-z ]*):\s*$")
_NUMPY_UNDERLINE: Final = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ENTRY: Final = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY: Final = re.compile(r"^\*{0,2}(\w+)\s*(?::.*)?$")


@dataclass(frozen=True, kw_only=True)
class Docstring:
    """What a docstring says, split into the parts a tool definition uses."""

    description: str
    """The summary and body, without the parameter, returns and raises sections."""
    params: dict[str, str] = field(default_factory=dict)
    """Description of each documented parameter, by name."""
    returns: str | None = None
    """Text of the returns (or yields) section, if any."""


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google- or NumPy-style docstring into description, parameter docs and returns doc."""
    lines = inspect.cleandoc(doc or "").splitlines()
    kept: list[str] = []
    params: dict[str, str] = {}
    returns: str | None = None
    i = 0
    while i < len(lines):
        kind, body_start = _section_at(lines, i)
        if kind is None:
            kept.append(lines[i])
            i += 1
            continue
        numpy = body_start == i + 2
        end = _section_end(lines, body_start, numpy=numpy)
        body = lines[body_start:end]
        if kind == "params":
            params.update(_numpy_entries(body) if numpy else _google_entries(body))
        elif kind == "returns":
            returns = _numpy_returns(body) if numpy else _join(body)
        i = end
    return Docstring(description=_tidy(kept), params=params, returns=returns or None)


def _section_at(lines: list[str], i: int) -> tuple[SectionKind | None, int]:
    """The kind of section that starts at line `i` (None if none) and the index of its first body line."""
    line = lines[i]
    if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]) and not line.startswith(" "):
        return _SECTIONS.get(line.strip().lower()), i + 2
    match = _GOOGLE_HEADER.match(line)
    if match and not line.startswith(" "):
        return _SECTIONS.get(match.group(1).strip().lower()), i + 1
    return None, i


def _section_end(lines: list[str], start: int, *, numpy: bool) -> int:
    """Index of the first line after the section body that starts at `start`."""
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip() and not line.startswith((" ", "\t")):
            # Google bodies are indented; NumPy entries start at column 0 but stop at the next header.
            if not numpy or _is_header(lines, i):
                break
        elif numpy and not line.strip() and i + 1 < len(lines) and _is_header(lines, i + 1):
            break
        i += 1
    return i


def _is_header(lines: list[str], i: int) -> bool:
    numpy_header = i + 1 < len(lines) and bool(_NUMPY_UNDERLINE.match(lines[i + 1]))
    return numpy_header or bool(_GOOGLE_HEADER.match(lines[i]))


def _google_entries(body: list[str]) -> dict[str, str]:
    """Entries `name (type): text` at the body's first indentation, continued by deeper lines."""
    indent = _indent_of_first(body)
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body:
        if line.strip() and _indent(line) <= indent:
            match = _GOOGLE_ENTRY.match(line.strip())
            current = None if match is None else entries.setdefault(match.group(1), [match.group(2)])
        elif current is not None:
            current.append(line)
    return {name: text for name, lines in entries.items() if (text := _join(lines))}


def _numpy_entries(body: list[str]) -> dict[str, str]:
    """Entries `name : type` at the body's first indentation, described by the deeper lines below."""
    indent = _indent_of_first(body)
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body:
        if line.strip() and _indent(line) <= indent:
            match = _NUMPY_ENTRY.match(line.strip())
            current = entries.setdefault(match.group(1), []) if match else None
        elif current is not None:
            current.append(line)
    return {name: text for name, lines in entries.items() if (text := _join(lines))}


def _numpy_returns(body: list[str]) -> str:
    """The description lines of a NumPy returns section (its `type` lines name what, not why)."""
    indent = _indent_of_first(body)
    described = [line for line in body if line.strip() and _indent(line) > indent]
    return _join(described) if described else _join(body)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indent_of_first(body: list[str]) -> int:
    return next((_indent(line) for line in body if line.strip()), 0)


def _join(lines: list[str]) -> str:
    """Join wrapped lines into one paragraph per blank-line-separated block."""
    paragraphs = "\n".join(line.strip() for line in lines).strip().split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _tidy(lines: list[str]) -> str:
    """The kept lines, with runs of blank lines (left where sections were removed) squeezed to one."""
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
