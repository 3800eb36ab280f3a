"""Markdown code fences around the model's code: the code inside one runs, the prose around it is dropped.

Models often send ```` ```python ... ``` ````, now and then with a sentence before or after. Only source that is
not valid Python as sent is looked at: if it holds exactly one fenced block tagged as Python or untagged (or
exactly one block of any kind), that block runs. Every line outside it becomes blank, so the line numbers of
errors still count the lines the model sent. Several Python blocks are not joined (which one is meant is a
guess); the syntax error then says to send one.
"""

from __future__ import annotations

from dataclasses import dataclass

_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})


@dataclass(frozen=True, kw_only=True)
class Unfenced:
    """What the fences of a source hold."""

    code: str | None
    """The one block's code, at its original line numbers; None when there is not exactly one to run."""
    blocks: int
    """How many fenced blocks that could be Python the source holds."""


@dataclass(frozen=True, kw_only=True)
class _Fence:
    """A fence line: up to three spaces, three or more backticks or tildes, an info string without backticks."""

    indent: int
    marker: str
    tag: str


def _fence(line: str) -> _Fence | None:
    """The fence on `line`, or None; read in one pass (a regular expression here backtracked quadratically)."""
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3 or indent == len(line) or line[indent] not in "`~":
        return None
    char = line[indent]
    end = indent
    while end < len(line) and line[end] == char:
        end += 1
    info = line[end:]
    if end - indent < 3 or "`" in info:
        return None
    words = info.split()
    return _Fence(indent=indent, marker=line[indent:end], tag=words[0] if words else "")


@dataclass(frozen=True, kw_only=True)
class _Block:
    tag: str
    indent: int
    start: int
    end: int


def unfence(source: str) -> Unfenced:
    """The code of the single fenced block in `source`, every other line blanked."""
    lines = source.split("\n")
    blocks = _blocks(lines)
    python = [block for block in blocks if block.tag in _PYTHON_TAGS]
    chosen = python if python else blocks
    if len(chosen) != 1:
        return Unfenced(code=None, blocks=len(python))
    block = chosen[0]
    kept = [""] * len(lines)
    for index in range(block.start, block.end):
        line = lines[index]
        kept[index] = line[min(block.indent, len(line) - len(line.lstrip(" "))) :]  # as CommonMark drops it
    return Unfenced(code="\n".join(kept), blocks=len(python))


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    opened: _Fence | None = None
    start = 0
    for index, line in enumerate(lines):
        match = _fence(line.rstrip("\r"))
        if match is None:
            continue
        if opened is None:
            opened, start = match, index + 1
        elif _closes(opened, match):
            blocks.append(_block(opened, start, index))
            opened = None
    if opened is not None:  # a fence never closed (the reply was cut): its block runs to the end
        blocks.append(_block(opened, start, len(lines)))
    return blocks


def _closes(opened: _Fence, match: _Fence) -> bool:
    marker, closing = opened.marker, match.marker
    return closing[0] == marker[0] and len(closing) >= len(marker) and not match.tag


def _block(opened: _Fence, start: int, end: int) -> _Block:
    return _Block(tag=opened.tag.lower(), indent=opened.indent, start=start, end=end)
