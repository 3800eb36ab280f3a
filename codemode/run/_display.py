"""What the model reads of one run: printed output, the returned value, the error and the calls, within one budget.

The budget (`DISPLAY_BUDGET` characters by default, `CodeMode(display_budget=)`) is shared by the output, the value,
the error and the calls listing (`codemode.run._text`); each is cut with `sandbox.limits`'s one cutter and marker, the
output in its middle and the value keeping its JSON shape. The host keeps the whole (`ExecuteResult.run`, the run
log). Apart from `codemode.run._text` because it needs the sandbox, which commands that only search never load.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Final

from codemode.run._text import render_calls, render_in_flight
from sandbox.limits import cut_marker, cut_middle

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemode.events import ToolCall
    from sandbox import JsonValue, RunResult

DISPLAY_BUDGET: Final = 20_000
"""Characters the model reads of one run by default: output, value, error and the calls listing share them."""
_SHARE: Final = 4
"""The error and the calls listing take at most a quarter of the budget each; output and value share the rest."""
_ITEMS: Final = (1000, 200, 100, 50, 20, 10, 5, 3, 1)
"""Items per list or object tried in turn until a value fits its share: first with strings kept to the share, then
with the characters of each string halved at each step."""
_VALUE_NOTE: Final = "[the value is cut to fit what you read of a run: `return` only what you need]"


def render_text(run: RunResult, calls: Sequence[ToolCall] = (), *, budget: int = DISPLAY_BUDGET) -> tuple[str, bool]:
    """The tool result the model reads, within `budget` characters, and whether the returned value was cut.

    The error and the calls already made come first (each within a quarter of the budget), then the printed output
    and the value share what is left: one that needs less than half leaves the rest to the other. Output is cut in
    its middle, the value keeping its JSON shape (the first items of a long list, then a count of the rest).
    """
    ending = _ending(run, calls)
    ending = cut_middle(ending, budget // _SHARE) if ending else ""
    value = None if run.value is None else json.dumps(run.value, ensure_ascii=False, indent=1)
    output = run.stdout.rstrip("\n")
    rest = max(budget - len(ending), 0)
    output_share, value_share = _shares(len(output), len(value or ""), rest)
    parts = []
    if output:
        parts.append(cut_middle(output, output_share))
    cut = value is not None and len(value) > value_share
    if value is not None:
        shown = shaped(run.value, value_share) if cut else value
        parts.append(f"Returned: {shown}" + (f"\n{_VALUE_NOTE}" if cut else ""))
    if ending:
        parts.append(ending)
    text = "\n".join(parts) if parts else "(no output: `print` what you need to see, or `return` a value)"
    return text, cut


def _ending(run: RunResult, calls: Sequence[ToolCall]) -> str:
    """The error, with the calls already made; or the calls a run that ended well left in flight."""
    parts = []
    if run.error is not None:
        parts.append(run.error.traceback or f"Error: {run.error.message}")
        if run.error.traceback and run.error.kind != "runtime":
            parts.append(f"({run.error.kind})")
        if calls and not (len(calls) == 1 and calls[0].error is not None):  # a lone failed call is the error itself
            parts.append(render_calls(calls))
    elif any(call.in_flight for call in calls):  # the code went on without their answers; they did not stop
        parts.append(render_in_flight(calls))
    return "\n".join(parts)


def _shares(output: int, value: int, rest: int) -> tuple[int, int]:
    """Characters for the output and for the value out of `rest`: what one leaves of its half goes to the other."""
    if output + value <= rest:
        return output, value
    half = rest // 2
    if output <= half:
        return output, rest - output
    if value <= half:
        return rest - value, value
    return half, rest - half


def shaped(value: JsonValue, limit: int) -> str:
    """`value` as indented JSON in about `limit` characters, keeping its shape.

    Long lists and objects show their first items and a count of the rest, long strings their start and a count;
    only a value that fits no cap (deep nesting) is cut in its middle.
    """
    text = json.dumps(value, ensure_ascii=False, indent=1)
    whole = max(10, limit - 100)
    for step, items in enumerate(_ITEMS):
        for chars in (whole, max(10, whole >> step)):
            if len(text) <= limit:
                return text
            text = json.dumps(_capped(value, items, chars), ensure_ascii=False, indent=1)
    return text if len(text) <= limit else cut_middle(text, limit)


def _capped(value: JsonValue, items: int, chars: int) -> JsonValue:
    if isinstance(value, str):
        return value if len(value) <= chars else f"{value[:chars]} {cut_marker(len(value) - chars)}"
    if isinstance(value, list):
        head: list[JsonValue] = [_capped(item, items, chars) for item in value[:items]]
        return head if len(value) <= items else [*head, cut_marker(len(value) - items, "items")]
    if isinstance(value, dict):
        kept = dict(itertools.islice(value.items(), items))
        shown: dict[str, JsonValue] = {key: _capped(item, items, chars) for key, item in kept.items()}
        if len(value) > items:
            shown["..."] = cut_marker(len(value) - items, "keys")
        return shown
    return value
