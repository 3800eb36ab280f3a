"""Which of a tool's schema definitions are one type, so its stub defines each class once.

pydantic writes a model both taken and returned twice: in the parameters' `$defs`, and as the output schema itself
(`-> User` is `User`, titled, with its own `$defs`). `DefinitionKeys` keys a named definition by its name and the
definitions it reaches (itself too), so equal ones share a key across roots and different ones of one name do not.
Apart from `codemode.schema._typeexpr` because it is a question of identity, not of rendering.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final, TypeAlias

from codemode.schema._jsonschema import ref_name, resolve_ref

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sandbox import JsonObject, JsonValue

RefKey: TypeAlias = tuple[str, ...]
"""What makes two references the same class: a definition's name and its definitions, or its root and ref."""
_DEFS_REF: Final = re.compile(r"#/(\$defs|definitions)/([^/]+)")
_Body: TypeAlias = tuple[str, list[tuple[str, str]]]
"""A definition's canonical JSON, and the `(ref, name)` of each named definition it refers to."""


class DefinitionKeys:
    """The keys of one tool's references, cached by root and ref while the tool's stub is rendered."""

    def __init__(self) -> None:
        self._keys: dict[tuple[int, str], RefKey] = {}
        self._bodies: dict[tuple[int, str], _Body | None] = {}

    def key(self, ref: str, root: JsonObject, def_name: str | None = None) -> RefKey:
        """A named definition's key is its name and definitions; any other reference's is its root and ref.

        `def_name` names the root itself (`ref == "#"`, a titled root object).
        """
        if (id(root), ref) not in self._keys:
            name = def_name if ref == "#" else _defs_name(ref)
            closure = None if name is None else self._closure(name, ref, root)
            self._keys[id(root), ref] = (f"root:{id(root)}", ref) if closure is None else ("def", *closure)
        return self._keys[id(root), ref]

    def _closure(self, name: str, ref: str, root: JsonObject) -> tuple[str, ...] | None:
        """`name`, and each definition it reaches through `$ref` (itself too) by name: equal exactly when the types are.

        `None` when a reference leads somewhere that is not a named definition (`#`, `#/properties/x`): then only
        that root knows what the type is. A remote reference renders as `Any` wherever it is, so it is kept as written.
        """
        seen: dict[str, tuple[str, str]] = {}
        pending = [(ref, name)]
        while pending:
            current, current_name = pending.pop()
            if current in seen:
                continue
            body = self._body(current, root)
            if body is None:
                return None
            seen[current] = (current_name, body[0])
            pending.extend(body[1])
        return (name, *(part for pair in sorted(seen.values()) for part in pair))

    def _body(self, ref: str, root: JsonObject) -> _Body | None:
        """A definition's canonical JSON (without the root's `$defs`) and the named definitions it refers to."""
        if (id(root), ref) not in self._bodies:
            target = root if ref == "#" else resolve_ref(ref, root)
            found: _Body | None = None
            if target is not None:
                body = {  # a class closed to other keys reads the same: a model taken is closed, returned is not
                    key: value
                    for key, value in target.items()
                    if key not in ("$defs", "definitions") and not (key == "additionalProperties" and value is False)
                }
                inner = [(each, _defs_name(each)) for each in _refs(body)]
                if not any(name is None and each.startswith("#") for each, name in inner):
                    named = [(each, name) for each, name in inner if name is not None]
                    found = (json.dumps(body, sort_keys=True, default=repr), named)
            self._bodies[id(root), ref] = found
        return self._bodies[id(root), ref]


def _defs_name(ref: str) -> str | None:
    """The name in a `#/$defs/X` or `#/definitions/X` reference, else `None`."""
    return ref_name(ref) if _DEFS_REF.fullmatch(ref) else None


def _refs(value: JsonValue) -> Iterable[str]:
    """Every `$ref` string inside a schema, at any depth."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
