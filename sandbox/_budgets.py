"""The size checks both sides of the worker pipe make, so each limit has one owner and one wording.

A worker process checks the value a run returns, what it printed and the variables it keeps; the host checks the
same again on what the worker sends (`sandbox._distrust`), since a worker whose code got past the policy can send
anything. Both use these functions, and only plain JSON values and the JSON size walk (`_jsonvalue`), so the
host side imports nothing that runs the model's code.
"""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING

from sandbox._jsonvalue import NotJsonError, check_json, json_size
from sandbox.result import RunError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from sandbox._jsonvalue import JsonValue

OUTPUT_MARKER = "\n[... output truncated at {limit:,} characters]"
"""What ends printed output cut at the `output` limit."""


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
) -> tuple[dict[str, JsonValue], dict[str, str]]:
    """The values of `left` that can be kept, by name, and why each other one was dropped.

    Names that cannot be variables are skipped; `not_data` names a value that is code rather than data (the
    sandbox side's check; the host's values are JSON already). The host applies it again to what a worker
    process says it kept.
    """
    excluded = set(skip)
    kept: dict[str, JsonValue] = {}
    dropped: dict[str, str] = {}
    room = budget
    for name, value in sorted(left.items()):
        if name in excluded or not valid_name(name):
            continue
        converted, reason, size = _convert(name, value, room, not_data)
        if reason is not None:
            dropped[name] = reason
            continue
        kept[name] = converted
        room -= size
    return kept, dropped


def _convert(
    name: str, value: object, budget: int, not_data: Callable[[object], str | None]
) -> tuple[JsonValue, str | None, int]:
    kind = not_data(value)
    if kind is not None:
        return None, kind, 0
    over = f"too large: over the {budget:,} bytes of JSON left for variables"
    if _nodes_over(value, budget):  # before converting: a list holding itself many times would take for ever
        return None, over, 0
    try:
        converted = check_json(value)
    except NotJsonError as error:
        text = str(error)
        return None, f"{name}{text[len('value') :]}" if text.startswith("value") else text, 0
    except RecursionError:
        return None, "nested too deeply", 0
    size = json_size(converted, budget, utf8=True)
    if size is None:
        return None, over, 0
    if size > budget:
        return None, f"too large: {size:,} bytes of JSON, over the {budget:,} left for variables", 0
    return converted, None, size


def _nodes_over(value: object, limit: int) -> bool:
    """Whether `value` has more than `limit` JSON nodes (each takes at least a byte), counting without recursion."""
    stack = [value]
    count = 0
    while stack:
        item = stack.pop()
        count += 1
        if count > limit:
            return True
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())  # type: ignore[attr-defined]  # exact dict, checked above
            count += len(item)  # type: ignore[arg-type]  # its keys
        elif kind is list or kind is tuple:
            stack.extend(item)  # type: ignore[arg-type]  # exact list or tuple, checked above
    return False
