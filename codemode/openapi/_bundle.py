"""Schemas bundled per tool: every `$ref` a tool's schema reaches becomes one of the tool's own definitions.

The referenced schemas of a description are named once (`Pet`, and `Pet_2` for another file's `Pet`) and
rewritten once per direction: requests leave out `readOnly` properties, results `writeOnly` ones. A tool's
schema then carries the definitions it reaches, under those names; references stay references, so recursive
schemas stay finite and the stub renderer names each one once. Rewriting once per description, not per tool,
keeps a description of thousands of operations over a few hundred shared schemas fast to load.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeAlias
from urllib.parse import urlsplit

from codemode.schema._jsonschema import ref_name

if TYPE_CHECKING:
    from codemode.openapi._documents import Documents
    from sandbox import JsonObject, JsonValue

Key: TypeAlias = tuple[str, str]
"""A referenced schema: its document's location and the JSON pointer in it."""
_DATA_KEYS: Final = frozenset({"example", "examples", "default", "enum", "const", "x-examples"})
"""Keywords whose values are data, never schemas: a `$ref` key inside them is not a reference."""
_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_.-]+")


class Definitions:
    """The referenced schemas of one description, each named once and rewritten once per direction.

    Args:
        documents: Where references are looked up.
        defs_key: `$defs` (JSON Schema 2020-12, OpenAPI 3.1) or `definitions` (draft 4, OpenAPI 3.0 and 2.0).
    """

    def __init__(self, documents: Documents, *, defs_key: str) -> None:
        self.documents = documents
        self.defs_key = defs_key
        self._names: dict[Key, str] = {}
        self._taken: set[str] = set()
        self._rewritten: dict[tuple[Key, str], tuple[JsonValue, tuple[Key, ...]]] = {}

    def bundle(self, *, drop: str) -> SchemaBundle:
        """A new bundle for one tool's parameters (`drop="readOnly"`) or result (`drop="writeOnly"`)."""
        return SchemaBundle(self, drop=drop)

    def name(self, key: Key) -> str:
        """The definition name of a referenced schema, the same for every tool."""
        name = self._names.get(key)
        if name is None:
            location, pointer = key
            base = _NAME_CHARS.sub("_", ref_name(pointer) if pointer else Path(urlsplit(location).path).stem)
            name, n = base or "Schema", 1
            while name in self._taken:
                n += 1
                name = f"{base}_{n}"
            self._names[key] = name
            self._taken.add(name)
        return name

    def definition(self, key: Key, *, drop: str) -> tuple[JsonValue, tuple[Key, ...]]:
        """A referenced schema rewritten for one direction, and the schemas it refers to in turn."""
        done = self._rewritten.get((key, drop))
        if done is None:
            walker = _Walker(self, drop)
            value = walker.copy(self.documents.lookup(*key), key[0])
            done = (value, tuple(walker.refs))
            self._rewritten[(key, drop)] = done
        return done


class SchemaBundle:
    """The schemas of one tool's parameters (or result), and the definitions they reach."""

    def __init__(self, definitions: Definitions, *, drop: str) -> None:
        self.definitions = definitions
        self.drop = drop
        self._walker = _Walker(definitions, drop)

    def schema(self, node: JsonValue, base: str) -> JsonValue:
        """A copy of `node` (found in `base`) with its references rewritten to definition names."""
        return self._walker.copy(node, base)

    @property
    def defs(self) -> JsonObject:
        """Every definition the schemas so far reach, by name."""
        out: JsonObject = {}
        seen: set[Key] = set()
        pending = list(self._walker.refs)
        while pending:
            key = pending.pop()
            if key in seen:
                continue
            seen.add(key)
            value, refs = self.definitions.definition(key, drop=self.drop)
            out[self.definitions.name(key)] = value
            pending.extend(refs)
        return dict(sorted(out.items()))

    def root(self, schema: JsonObject, *, dialect: str | None) -> JsonObject:
        """`schema` as a standalone JSON Schema: the dialect declared and the definitions it uses attached."""
        out: JsonObject = {"$schema": dialect} if dialect else {}
        out.update(schema)
        if defs := self.defs:
            out[self.definitions.defs_key] = defs
        return out


class _Walker:
    """Copies schemas with each `$ref` rewritten to its definition's name, noting the references (not following)."""

    def __init__(self, definitions: Definitions, drop: str) -> None:
        self.definitions = definitions
        self.documents = definitions.documents
        self.drop = drop
        self.refs: dict[Key, None] = {}

    def copy(self, node: JsonValue, base: str) -> JsonValue:
        if isinstance(node, list):
            return [self.copy(item, base) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            key = self.documents.target(ref, base)
            self.refs[key] = None
            rest = {k: self.copy(value, base) for k, value in node.items() if k != "$ref"}
            return {"$ref": f"#/{self.definitions.defs_key}/{self.definitions.name(key)}", **rest}
        out: JsonObject = {k: value if k in _DATA_KEYS else self.copy(value, base) for k, value in node.items()}
        properties = node.get("properties")
        if isinstance(properties, dict):
            dropped = {k for k, sub in properties.items() if self._is_dropped(sub, base)}
            if dropped:
                _drop(out, dropped)
        return out

    def _is_dropped(self, sub: JsonValue, base: str) -> bool:
        """Whether a property is `readOnly` (or `writeOnly`), itself or through the schema it refers to."""
        if not isinstance(sub, dict):
            return False
        if sub.get(self.drop) is True:
            return True
        ref = sub.get("$ref")
        if not isinstance(ref, str):
            return False
        target = self.documents.lookup(*self.documents.target(ref, base))
        return isinstance(target, dict) and target.get(self.drop) is True


def _drop(schema: JsonObject, dropped: set[str]) -> None:
    properties = schema.get("properties")
    assert isinstance(properties, dict)
    schema["properties"] = {key: sub for key, sub in properties.items() if key not in dropped}
    required = schema.get("required")
    if isinstance(required, list):
        kept = [key for key in required if key not in dropped]
        if kept:
            schema["required"] = kept
        else:
            del schema["required"]
