"""`Limits`: how much one run may use, and what the model reads when a run reaches one.

Every limit is per run. A run that reaches one stops with a result whose `error.kind` names the limit; the
sandbox itself keeps working. Printed output is the exception: past `output` it is cut in the middle and the run
goes on, and only a flood (`flood`) stops it. `cut_middle` (head and tail), `cut_end` (head), `one_line` and
`cut_marker` are the one way text is cut here and in `codemode`, with one marker; this module imports nothing of
the sandbox, so a command that never runs code loads it alone. The wall clock and the call count are enforced in
more than one place (see the README's table of limits); each place words its stop with the one function here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.jsonvalue import JsonValue


MAX_JSON_VALUES = 1_000_000
"""Values one JSON value going into or out of a run holds at most (a result, a call's arguments, a tool's result):
more cannot fit any result limit, and a list holding itself twice at each level would otherwise take for ever."""
MAX_INT_BITS = 10_000
"""Bits of the largest int going into or out of a run; a larger one is sent as a str."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Per-run limits; the defaults suit one step of an agent."""

    timeout: float = 30.0
    """Wall-clock seconds for the whole run, host calls included."""
    memory: int = 256 * 1024 * 1024
    """Bytes of address space a run's process may add to the template's; inline, resident bytes the host process
    may grow by during the run (sampled, so one C call allocating at once is not bounded). 0: no limit."""
    output: int = 1024 * 1024
    """Characters of printed output kept for the host: past it the middle is cut (its head and tail kept, with how
    much was cut) and the run goes on. What the model reads of it is the host's choice (`codemode` shows less)."""
    flood: int = 8 * 1024 * 1024
    """Characters the code may print in all: past it the run stops with `output_limit` (a flood far past any use),
    what was printed first still kept."""
    calls: int = 1000
    """Host-function calls per run."""
    concurrent_calls: int = 32
    """Host-function calls in flight at once; more wait their turn."""
    source: int = 256 * 1024
    """Characters of source code accepted."""
    result: int = 1024 * 1024
    """Bytes of the returned value once encoded as JSON."""
    operations: int = 50_000_000
    """Loop iterations and function entries the code may make (the operation budget)."""
    max_size: int = 10_000_000
    """Largest string, bytes or sequence (in items) and int (in bits) a single operation may create."""
    variables: int = 256 * 1024
    """Bytes of JSON the top-level variables a run keeps may take in all (runs given `variables=`); a variable
    that does not fit is dropped, with the reason."""

    def to_json(self) -> dict[str, JsonValue]:
        """These limits as plain data, to send to a run process."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_json(cls, data: dict[str, JsonValue]) -> Limits:
        """Limits from `to_json` output."""
        return cls(**data)  # type: ignore[arg-type]  # produced by to_json on the other side of the pipe


_FIELDS = tuple(field.name for field in fields(Limits))


def memory_message() -> str:
    """What a run stopped for using more memory than `Limits.memory` is told."""
    return "the code used more memory than its limit; build smaller values or process the data in pieces"


def timeout_message(seconds: float, where: str = "") -> str:
    """What the model reads when a run reaches its wall clock, whichever layer stopped it.

    Args:
        seconds: The run's `timeout`.
        where: What the code was doing, a phrase with a leading space (" waiting on tools or sleeps"), or empty.
    """
    return (
        f"the code ran past its {seconds:g} s time limit{where}; do less per run, or split the work over several runs"
    )


def calls_message(calls: int) -> str:
    """What the model reads when a run makes more host-function calls than its `calls` limit."""
    return f"the code made more than {calls:,} tool calls; make fewer per run"


def output_message(output: int) -> str:
    """What the model reads when a run prints more than its `flood` limit."""
    return (
        f"the code printed more than {output:,} characters; print less (a summary, a count, a slice, only the "
        "fields you need)"
    )


def too_many_values_message(where: str) -> str:
    """What the model reads when `where` (a result, an argument) holds more than `MAX_JSON_VALUES` values."""
    return f"{where} holds more than {MAX_JSON_VALUES:,} values in all; return less"


def int_too_large_message(where: str, bits: int) -> str:
    """What the model reads when `where` is an int of more than `MAX_INT_BITS` bits."""
    return f"{where} is an int too large to send ({bits} bits); send it as a str"


def cut_marker(count: int, what: str = "characters") -> str:
    """The one marker of cut text, saying how much is missing: `[... 1,234 characters cut ...]`."""
    return f"[... {count:,} {what} cut ...]"


_WORD_BREAK = 0.8
"""`cut_end` moves back to the last white space when that keeps at least this share of the room."""
MARKER_SLACK = len(cut_marker(2**63)) + 2
"""Characters `cut_middle` may add past its limit at most: the marker and its two newlines."""


def cut_middle(text: str, limit: int) -> str:
    """`text` in at most `limit` characters and `MARKER_SLACK`: its head and tail, and how much was cut between."""
    if len(text) <= limit:
        return text
    tail = limit // 2
    head = limit - tail
    return around_cut(text[:head], len(text) - limit, text[len(text) - tail :] if tail else "")


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
        from sandbox.limits import one_line

        assert one_line("Send  an email.", 80) == "Send an email."
        assert one_line("word " * 40, 60) == "word word word word word word [... 170 characters cut ...]"
        ```
    """
    return cut_end(" ".join(text.split()), limit)


def around_cut(head: str, count: int, tail: str) -> str:
    """`head`, the marker of `count` characters cut on a line of its own, then `tail`."""
    before = "" if not head or head.endswith("\n") else "\n"
    return f"{head}{before}{cut_marker(count)}\n{tail}"
