"""The size checks both sides of the worker pipe make, so each limit has one owner and one wording.

A worker process checks the value a run returns, what it printed and the variables it keeps; the host checks the
same again on what the worker sends (`sandbox._host.distrust`), since a worker whose code got past the policy can send
anything. Both use these functions, and only plain JSON values and the JSON size walk (`sandbox.jsonvalue`), so the
host side imports nothing that runs the model's code.
"""

from __future__ import annotations

import keyword
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sandbox.jsonvalue import NotJsonError, check_json, json_size
from sandbox.result import RunError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from sandbox.jsonvalue import JsonValue


def result_size_error(value: JsonValue, limit: int) -> RunError | None:
    """The `result_limit` error for a returned JSON value over `limit` characters, else None."""
    size = json_size(value, limit)
    if size is not None and size <= limit:
        return None
    told = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return RunError(
        kind="result_limit",
        message=f"the returned value is {told} as JSON; the limit is {limit:,}. Return less "
        "(a summary, the fields you need, a slice)",
    )


def valid_name(name: object) -> bool:
    """Whether `name` can be a kept variable: an identifier, not a keyword, not starting with `_`."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def keep_values(
    left: Mapping[str, object],
    *,
    budget: int,
    skip: Iterable[str],
    not_data: Callable[[object], str | None] = lambda value: None,
    deadline: float | None = None,
) -> tuple[dict[str, JsonValue], dict[str, str]]:
    """The values of `left` that can be kept, by name, and why each other one was dropped.

    Names that cannot be variables are skipped; `not_data` names a value that is code rather than data (the
    sandbox side's check; the host's values are JSON already). The host applies it again to what a worker
    process says it kept. The work is bounded as a whole, not per name: kept values take at most `budget` bytes,
    the walks of the dropped ones at most `WALK_SHARE * budget` values in all, one object under many names is
    converted once (the names share the copy), and past `deadline` (a `time.monotonic()`) the rest are dropped.
    """
    excluded = set(skip)
    names = sorted(name for name in left if name not in excluded and valid_name(name))
    kept: dict[str, JsonValue] = {}
    dropped: dict[str, str] = {}
    room, walk = budget, WALK_SHARE * budget
    seen: dict[int, _Outcome] = {}  # by id: every value stays alive in `left` until the end
    for index, name in enumerate(names):
        if deadline is not None and time.monotonic() > deadline:
            dropped.update(dict.fromkeys(names[index:], LATE))
            break
        value = left[name]
        outcome = seen.get(id(value))
        first = outcome is None
        if outcome is None:  # budgets only shrink: what failed once fails again
            outcome = seen[id(value)] = _convert(value, room, walk, not_data)
        if outcome.converted is not None and outcome.size <= room:
            kept[name] = outcome.converted.value
            room -= outcome.size
        else:
            dropped[name] = _reason(name, outcome, room)
            walk -= outcome.walked if first else 0  # kept values are bounded by `room`
    return kept, dropped


WALK_SHARE = 2
"""The values the walks of dropped variables may take in all, as a multiple of the `variables` budget: a large
value left behind does not stop the next one from being kept, and a thousand names of large values cost no
more than two."""
SMALL_WALK = 100
"""The values a variable may still take once the dropped ones took their share: small ones are still kept."""
LATE = "not kept: saving the variables went past the run's time limit; `del` the large ones you do not need"
"""Why a variable not reached before the deadline was dropped."""


@dataclass(frozen=True)
class _Converted:
    value: JsonValue


@dataclass(frozen=True)
class _Outcome:
    """One value's conversion: its copy and JSON size, or why it failed, and the values its walks took."""

    converted: _Converted | None = None
    size: int = 0
    reason: str | None = None
    """Why it is not data (`{name}` stands for the name); None with `converted` None: too large."""
    walked: int = 0
    over: bool = False
    """Found too large by its count of values, before any conversion."""
    spent: bool = False
    """Over the values the walks had left, not over the bytes left."""


def _convert(value: object, room: int, walk: int, not_data: Callable[[object], str | None]) -> _Outcome:
    kind = not_data(value)
    if kind is not None:
        return _Outcome(reason=kind, walked=1)
    limit = min(room, max(walk, SMALL_WALK))
    nodes = _nodes(value, limit)  # before converting: a list holding itself many times would take for ever
    if nodes > limit:
        return _Outcome(walked=limit, over=True, spent=limit < room)
    try:
        converted = check_json(value)
    except NotJsonError as error:
        text = str(error)
        return _Outcome(reason=f"{{name}}{text[len('value') :]}" if text.startswith("value") else text, walked=nodes)
    except RecursionError:
        return _Outcome(reason="nested too deeply", walked=nodes)
    size = json_size(converted, room, utf8=True)
    if size is None:
        return _Outcome(walked=nodes)
    return _Outcome(converted=_Converted(converted), size=size, walked=nodes)


def _reason(name: str, outcome: _Outcome, room: int) -> str:
    if outcome.reason is not None:
        return f"{name}{outcome.reason[len('{name}') :]}" if outcome.reason.startswith("{name}") else outcome.reason
    if outcome.converted is not None:
        return f"too large: {outcome.size:,} bytes of JSON, over the {room:,} left for variables"
    if outcome.spent:
        return "not kept: the large variables dropped before it (in name order) used up the time to save variables"
    return f"too large: over the {room:,} bytes of JSON left for variables"


def _nodes(value: object, limit: int) -> int:
    """The JSON nodes of `value` (each takes at least a byte), or a count past `limit`, counting without recursion.

    A container's items are counted before they are walked, so a long flat list is over at once.
    """
    stack = [value]
    count = 1
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            count += 2 * len(item)  # type: ignore[arg-type]  # exact dict, checked above; its keys and values
            if count > limit:
                return count
            stack.extend(item.values())  # type: ignore[attr-defined]  # exact dict, checked above
        elif kind is list or kind is tuple:
            count += len(item)  # type: ignore[arg-type]  # exact list or tuple, checked above
            if count > limit:
                return count
            stack.extend(item)  # type: ignore[arg-type]  # exact list or tuple, checked above
    return count
