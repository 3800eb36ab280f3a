"""One line of a JSONL file of tool definitions, read into a `Tool`, or refused with the reason.

A definition is an object with `name`, `description` and `parameters`, optionally `returns`, `deferred` and
`approval`. Only the shape is checked here (it costs microseconds); whether `parameters` is valid JSON Schema
is learnt at the tool's first call, or by `Catalog.check()`.
"""

from __future__ import annotations

import json
from typing import Final

from codemode.errors import CatalogError
from codemode.tools import Tool

JSONL_KEYS: Final = frozenset({"name", "description", "parameters", "returns", "deferred", "approval"})
"""The keys a definition may have."""


def tool_from_json_line(line: str) -> Tool:
    """The tool one line defines.

    Raises:
        CatalogError: The line is not JSON, not an object, or has an unknown key or a value of the wrong type.
    """
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise CatalogError(f"not JSON: {e}") from e
    if not isinstance(data, dict):
        raise CatalogError(f"expected a JSON object, got {line:.80}")
    if not JSONL_KEYS.issuperset(data):
        unknown = sorted(set(data) - JSONL_KEYS)
        raise CatalogError(f"unknown keys {unknown}; a definition has the keys {sorted(JSONL_KEYS)}.")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise CatalogError(f'every definition needs a "name" (a non-empty string), got {name!r:.80}.')
    deferred = data.get("deferred", True)
    if not isinstance(deferred, bool):
        raise CatalogError(f'"deferred" must be true or false, got {deferred!r:.80}.')
    approval = data.get("approval", False)
    if not isinstance(approval, bool):
        raise CatalogError(f'"approval" must be true or false, got {approval!r:.80}.')
    return Tool(
        name=name,
        description=data.get("description", ""),
        parameters=data.get("parameters", {"type": "object", "properties": {}}),
        returns=data.get("returns"),
        deferred=deferred,
        approval=approval,
    )
