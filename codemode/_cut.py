"""Cutting text short: one line of at most N characters, and the one marker that says how much was cut.

`one_line` is codemode's one way to put text on a line the model reads (a description in a stub or a listing, a
call's arguments, a value the model sent, a pattern); `cut_end` cuts text that keeps its lines (a long description,
a tool's text answer, a trace attribute). Both end a cut text with `cut_marker`, `[... 1,234 characters cut ...]`,
the marker `sandbox.limits` puts in the middle of long printed output, so the model meets one marker everywhere.

Apart from `sandbox.limits`, the owner of the same rule in the sandbox, because `import codemode` and `codemode
search` must not load the sandbox, and importing `sandbox.limits` loads the whole `sandbox` package. A test keeps
the two `cut_end` and `cut_marker` the same; head-and-tail cuts (`cut_middle`) are only the sandbox's.
"""

from __future__ import annotations

from typing import Final

_WORD_BREAK: Final = 0.8
"""A cut moves back to the last white space when that keeps at least this share of the room."""


def cut_marker(count: int, what: str = "characters") -> str:
    """The one marker of cut text, saying how much is missing: `[... 1,234 characters cut ...]`."""
    return f"[... {count:,} {what} cut ...]"


def cut_end(text: str, limit: int, what: str = "characters") -> str:
    """`text` in at most `limit` characters, the marker included: if longer, its head and the marker after it.

    The head ends at a word break when one is near the cut. A `limit` too short for the marker gives the marker alone.
    `what` names what the marker counts (see `cut_marker`).
    """
    if len(text) <= limit:
        return text
    room = max(limit - len(cut_marker(len(text), what)) - 1, 0)
    head = text[:room]
    space = max(head.rfind(" "), head.rfind("\n"))
    if space > room * _WORD_BREAK:
        head = head[:space]
    head = head.rstrip()
    marker = cut_marker(len(text) - len(head), what)
    return f"{head} {marker}" if head else marker


def one_line(text: str, limit: int) -> str:
    """`text` on one line of at most `limit` characters: each run of white space one space, and if longer, cut.

    Example:
        ```python
        from codemode._cut import one_line

        assert one_line("Send  an email.", 80) == "Send an email."
        assert one_line("word " * 40, 60) == "word word word word word word [... 170 characters cut ...]"
        ```
    """
    return cut_end(" ".join(text.split()), limit)
