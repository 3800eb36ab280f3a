"""What already happened in a run, as the model reads it: the calls made, and the calls in flight.

After any failure (an error, a timeout, the call limit, a crash) the text lists the tool calls that completed,
with a short summary of their arguments and whether they worked, and the calls still in flight, marked as
possibly done, so a model never retries an action (an email, a payment) that already took place. Long runs show
the first and last few calls, every failed one, and exact counts of the ok ones between. A run that ended well
with calls still in flight (an `asyncio.wait_for` that gave up on a call, a task the code never awaited) names
those calls too: they went on, and may have taken effect.

`readable` is the one rule for any text the model reads: a lone surrogate (what `print(chr(0xDCFF))` prints, text
decoded with `surrogateescape`) becomes U+FFFD, since no provider or MCP client can send it as UTF-8.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from sandbox.limits import one_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemode.events import ToolCall

_EDGE: Final = 3
"""Completed calls shown at each end of a long run."""
_MAX_NAMED: Final = 50
"""Failed calls, and calls in flight, named in full before the rest are only counted."""
_MAX_ARGUMENT: Final = 60
"""Characters of one argument's JSON in a call's summary, the cut marker included."""
_MAX_ARGUMENTS: Final = 160
"""Characters of all of a call's arguments in its summary, the cut marker included."""
_MAX_ERROR: Final = 120
"""Characters of a failed call's error in its line, the cut marker included."""


def readable(text: str) -> str:
    """`text` as UTF-8 can carry it: each lone surrogate replaced by U+FFFD (a split pair joined into its character)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def render_calls(calls: Sequence[ToolCall]) -> str:
    """What already happened: completed calls (long runs elide only ok ones, with counts) and calls in flight."""
    done = [call for call in calls if not call.in_flight]
    running = [call for call in calls if call.in_flight]
    failed = sum(1 for call in done if not call.ok)
    head = f"Tool calls before the run stopped: {len(done)} completed ({len(done) - failed} ok, {failed} failed)"
    lines = [head + (f", {len(running)} in flight" if running else "") + ":"]
    if len(done) <= 2 * _EDGE + 1:
        lines.extend(_done_line(call) for call in done)
    else:
        lines.extend(_done_line(call) for call in done[:_EDGE])
        lines.extend(_middle(done[_EDGE:-_EDGE]))
        lines.extend(_done_line(call) for call in done[-_EDGE:])
    lines.extend(_in_flight_lines(running))
    return "\n".join(lines)


def render_in_flight(calls: Sequence[ToolCall]) -> str:
    """The calls a run that ended well left in flight (abandoned by a timeout, never awaited, or cut off)."""
    running = [call for call in calls if call.in_flight]
    count = f"{len(running)} tool call{'s' if len(running) != 1 else ''}"
    head = f"The run ended with {count} still in flight (given up on, never awaited, or cut off):"
    return "\n".join([head, *_in_flight_lines(running)])


def _in_flight_lines(running: Sequence[ToolCall]) -> list[str]:
    lines = [f"  in flight, may have happened: {summary(call)}" for call in running[:_MAX_NAMED]]
    if len(running) > _MAX_NAMED:
        lines.append(f"  ... {len(running) - _MAX_NAMED} more in flight")
    if running:
        lines.append("Check whether the calls in flight took effect before you repeat them.")
    return lines


def _middle(middle: Sequence[ToolCall]) -> list[str]:
    """The calls between the first and last few: every failed one named (up to a cap), the ok ones counted."""
    lines: list[str] = []
    named = 0
    ok_run = 0
    for index, call in enumerate(middle):
        if named == _MAX_NAMED:
            rest = middle[index:]
            bad = sum(1 for c in rest if not c.ok)
            lines.append(f"  ... {len(rest) + ok_run} more ({len(rest) - bad + ok_run} ok, {bad} failed)")
            return lines
        if call.ok:
            ok_run += 1
            continue
        if ok_run:
            lines.append(f"  ... {ok_run} more ok")
            ok_run = 0
        lines.append(_done_line(call))
        named += 1
    if ok_run:
        lines.append(f"  ... {ok_run} more ok")
    return lines


def _done_line(call: ToolCall) -> str:
    error = f": {one_line(call.error, _MAX_ERROR)}" if call.error else ""
    return f"  {'ok    ' if call.ok else 'failed'} {summary(call)}{error}"


def summary(call: ToolCall) -> str:
    """`name(a="x", b=2)`, each value and the whole cut short."""
    items = [
        f"{key}={one_line(json.dumps(value, ensure_ascii=False), _MAX_ARGUMENT)}"
        for key, value in call.arguments.items()
    ]
    return f"{call.name}({one_line(', '.join(items), _MAX_ARGUMENTS)})"
