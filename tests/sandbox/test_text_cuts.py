"""Cutting text short: one line of at most N characters, and one marker that counts what was cut."""

from __future__ import annotations

import re

import pytest
from inline_snapshot import snapshot

from sandbox.limits import cut_end, cut_marker, one_line

TEXTS = ["", "short", "word " * 300, "x" * 5000, "line one\nline two\n" * 50, "a\u00a0b\tc  d\n" * 40]
LIMITS = [0, 10, 29, 30, 40, 60, 80, 200, 10_000]
MARKER = re.compile(r" ?\[\.\.\. ([\d,]+) characters cut \.\.\.\]$")


def test_a_short_text_is_kept_whole_and_a_long_one_ends_with_a_count_of_what_was_cut() -> None:
    """Within the limit nothing changes but white space; past it the head ends at a word, then the marker."""
    assert one_line("Send  an\n\temail.", 80) == "Send an email."
    assert one_line("word " * 40, 60) == snapshot("word word word word word word [... 170 characters cut ...]")
    assert cut_end("first line\nsecond line\n" * 10, 50) == snapshot(
        """\
first line
second [... 213 characters cut ...]\
"""
    )


@pytest.mark.parametrize("limit", [limit for limit in LIMITS if limit >= 40])
@pytest.mark.parametrize("text", TEXTS)
def test_a_cut_line_fits_its_limit_and_its_marker_counts_exactly_the_missing_characters(text: str, limit: int) -> None:
    """`one_line` is at most `limit` characters, on one line, and head plus counted characters is the whole."""
    flat = " ".join(text.split())
    line = one_line(text, limit)
    found = MARKER.search(line)

    assert len(line) <= limit
    assert "\n" not in line
    if found is None:
        assert line == flat
    else:
        head = line[: found.start()]
        assert flat.startswith(head)
        assert len(head) + int(found.group(1).replace(",", "")) == len(flat)


def test_a_limit_shorter_than_the_marker_gives_the_marker_alone() -> None:
    """With no room for any of the text, what was cut is still said."""
    assert one_line("x" * 100, 20) == cut_marker(100)
