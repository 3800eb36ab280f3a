"""Variables that outlive a run: JSON values handed in as top-level names, and the JSON values a run leaves.

A run asked to keep variables starts with the given names bound at top level (as if an earlier part of the same
script had assigned them) and ends by reading the top-level names it left. Only plain JSON goes in or out: each
value a run leaves is converted by the same rules as a returned value, and one that does not convert (a function,
a module, an object) or does not fit the size budget is dropped with a short reason, so nothing the model's code
defined ever reaches the host. The conversion walks only exact built-in containers, calling no method of theirs.
"""

from __future__ import annotations

import json
import keyword
import types
from typing import TYPE_CHECKING, Any

from sandbox._compile import KEEP, LOCALS, VARIABLES
from sandbox._jsonvalue import NotJsonError, check_json
from sandbox._modules import Module

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sandbox._jsonvalue import JsonValue


def valid_name(name: object) -> bool:
    """Whether `name` can be a kept variable: an identifier, not a keyword, not starting with `_`."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


class Keeper:
    """One run's variables: what it starts with, and the top-level names its body left when it ended."""

    def __init__(self, initial: Mapping[str, JsonValue]) -> None:
        self.initial = dict(initial)
        self.left: dict[str, Any] | None = None

    def globals(self) -> dict[str, object]:
        """The hidden globals the compiled wrapper uses."""
        return {VARIABLES: self.initial, KEEP: self.keep, LOCALS: locals}

    def keep(self, names: dict[str, Any]) -> None:
        """Called by the wrapper with `locals()` of the run's body."""
        self.left = dict(names)

    def collect(self, *, budget: int, skip: Iterable[str]) -> tuple[dict[str, JsonValue] | None, dict[str, str]]:
        """The JSON values the run left, by name, and why each other name was dropped.

        The budget is spent in name order, so the same run keeps the same variables. None when the body never
        reached its end (the worker was stopped in a C-level operation, say).
        """
        if self.left is None:
            return None, {}
        excluded = set(skip)
        kept: dict[str, JsonValue] = {}
        dropped: dict[str, str] = {}
        left = budget
        for name, value in sorted(self.left.items()):
            if name in excluded or not valid_name(name):
                continue
            converted, reason = _convert(name, value, left)
            if reason is not None:
                dropped[name] = reason
                continue
            kept[name] = converted
            left -= _size(converted)
        return kept, dropped


def _convert(name: str, value: object, budget: int) -> tuple[JsonValue, str | None]:
    kind = _not_data(value)
    if kind is not None:
        return None, kind
    if _nodes_over(value, budget):  # before converting: a list holding itself many times would take for ever
        return None, f"too large: over the {budget:,} bytes of JSON left for variables"
    try:
        converted = check_json(value)
    except NotJsonError as error:
        text = str(error)
        return None, f"{name}{text[len('value') :]}" if text.startswith("value") else text
    except RecursionError:
        return None, "nested too deeply"
    size = _size(converted)
    if size > budget:
        return None, f"too large: {size:,} bytes of JSON, over the {budget:,} left for variables"
    return converted, None


def _not_data(value: object) -> str | None:
    """A short name for a value that is code rather than data, else None (by its exact type: no hook runs)."""
    kind = type(value)
    if issubclass(kind, Module):
        return "a module: import it again"
    if issubclass(kind, type):
        return "a class: define it again"
    if kind in (types.FunctionType, types.BuiltinFunctionType, types.MethodType):
        return "a function: define it again"
    if kind in (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType):
        return "a generator or coroutine"
    return None


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


def _size(value: JsonValue) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
