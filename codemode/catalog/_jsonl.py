"""One line of a JSONL file of tool definitions, read into a `Tool`, or refused with the reason.

A definition is an object with `name`, `description` and `parameters`, optionally `returns`, `deferred` and
`approval`. Only the shape is checked here (it costs microseconds); whether `parameters` is valid JSON Schema
is learnt at the tool's first call, or by `Catalog.check()`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from codemode._naming import portable_alias
from codemode.catalog._definitions import check_alias, check_fields
from codemode.errors import CatalogError
from codemode.tools import Tool
from sandbox.limits import cut_end

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

JSONL_KEYS: Final = frozenset({"name", "description", "parameters", "returns", "deferred", "approval"})
"""The keys a definition may have."""

_SCAN: Final[Callable[[str, int], tuple[object, int]]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""`json.loads` without its Python layers, for the lines that parse; the others go through `json.loads`."""
_JSON_SPACE: Final = " \t\n\r"


def tool_from_json_line(line: str, *, prefix: str = "", aliases: Mapping[str, str] | None = None) -> Tool:
    """The tool one line defines, under its prefixed name and alias, checked as `check_definition` checks a tool.

    Args:
        line: The line.
        prefix: Prepended to the name; the alias is derived from the prefixed name.
        aliases: Hand-made aliases by (prefixed) name.

    Raises:
        CatalogError: The line is not JSON, not an object, has an unknown key or a value of the wrong type, or
            its hand-made alias is not portable.
    """
    data = _parsed(line)
    if not isinstance(data, dict):
        raise CatalogError(f"expected a JSON object, got {line:.80}")
    if not JSONL_KEYS.issuperset(data):
        unknown = sorted(set(data) - JSONL_KEYS)
        raise CatalogError(f"unknown keys {unknown}; a definition has the keys {sorted(JSONL_KEYS)}.")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise CatalogError(f'every definition needs a "name" (a non-empty string), got {cut_end(repr(name), 80)}.')
    deferred = data.get("deferred", True)
    if not isinstance(deferred, bool):
        raise CatalogError(f'"deferred" must be true or false, got {cut_end(repr(deferred), 80)}.')
    approval = data.get("approval", False)
    if not isinstance(approval, bool):
        raise CatalogError(f'"approval" must be true or false, got {cut_end(repr(approval), 80)}.')
    name = f"{prefix}{name}"
    alias = aliases.get(name) if aliases else None
    if alias:
        check_alias(name, alias)  # a derived alias is portable by construction
    else:
        alias = portable_alias(name)
    description = data.get("description", "")
    parameters = data.get("parameters", {"type": "object", "properties": {}})
    returns = data.get("returns")
    check_fields(name, description, parameters, returns)
    return Tool(
        name=name,
        alias=alias,
        description=description,
        parameters=parameters,
        returns=returns,
        deferred=deferred,
        approval=approval,
    )


def _parsed(line: str) -> object:
    """The JSON value of `line`; a line that does not parse gets `json.loads`' own message."""
    start = len(line) - len(line.lstrip(_JSON_SPACE))
    try:
        value, end = _SCAN(line, start)
    except (StopIteration, json.JSONDecodeError):
        value, end = None, -1
    if end == len(line) or (end > 0 and not line[end:].strip(_JSON_SPACE)):
        return value
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise CatalogError(f"not JSON: {e}") from e
