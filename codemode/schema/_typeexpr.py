"""JSON Schema to Python type expressions (`list[str]`, `Literal["a", "b"]`, `Forecast | None`) and TypedDicts.

`TypeRenderer` turns the schemas of one tool into type expression strings. Objects with properties become
`TypedDictDef`s (data, laid out as source by `codemode.schema.stubs`), named from `$defs` keys or titles when those are
usable, else from the tool alias and the property path (`get_weather` + `days[]` -> `GetWeatherDay`). A named
definition is one class wherever the tool's schemas define it: its name and the definitions it reaches decide,
so pydantic's output schema for `-> User` (`User` itself, titled) is the parameters' `$defs/User`, and two
different types of one name are `User` and `User2`. Python
literal helpers (`py_str`, `py_literal`) live here too, since `Literal[...]` needs them. Anything the renderer
cannot express becomes `Any` (or `dict[str, Any]`), never an error.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from codemode._naming import is_python_name
from codemode.schema._defkeys import DefinitionKeys, RefKey
from codemode.schema._jsonschema import (
    as_schema,
    constraint_notes,
    enum_values,
    normalize,
    ref_name,
    resolve_ref,
    schema_types,
)
from sandbox.limits import one_line

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sandbox import JsonObject, JsonValue

MAX_LITERAL_VALUES: Final = 50
"""Enums with more values render as their base type, the values listed in the docs instead."""
_FIELD_DOC_CHARS: Final = 200
_SCALARS: Final = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    # Non-standard spellings seen in hand-written catalogs.
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "any": "Any",
}
_RESERVED: Final = frozenset({"Any", "Literal", "NotRequired", "TypedDict", "None", "dict", "list", "tuple"})


@dataclass(frozen=True, kw_only=True)
class TypedDictField:
    """One key of a TypedDict."""

    key: str
    """The key as the schema spells it (maybe not an identifier)."""
    type: str
    """Its Python type expression."""
    required: bool
    """Whether the key must be present."""
    doc: str
    """One line: the description and constraint notes (may be empty)."""


@dataclass(frozen=True, kw_only=True)
class TypedDictDef:
    """A TypedDict class the stub must define."""

    name: str
    """The class name, unique within one tool's stub."""
    fields: tuple[TypedDictField, ...]
    """Its keys, in schema order."""
    doc: str
    """The object's description, one line (may be empty)."""


@dataclass(kw_only=True)
class TypeRenderer:
    """Renders the schemas of one tool, collecting the TypedDicts they need.

    Example:
        ```python
        renderer = TypeRenderer(prefix="GetWeather")
        renderer.type_of({"type": "array", "items": {"type": "string"}}, root={}, path=("cities",))  # 'list[str]'
        ```
    """

    prefix: str
    """CamelCase form of the tool alias, the start of every path-derived class name."""
    reserved: frozenset[str] = frozenset()
    """Names a class must not take (the function's own name)."""
    classes: list[TypedDictDef] = field(default_factory=list)
    """TypedDicts defined so far, each after the ones it uses (except in cycles)."""
    _taken: set[str] = field(default_factory=set, init=False, repr=False)
    _named_refs: dict[RefKey, str] = field(default_factory=dict, init=False, repr=False)
    _open_refs: set[RefKey] = field(default_factory=set, init=False, repr=False)
    _keys: DefinitionKeys = field(default_factory=DefinitionKeys, init=False, repr=False)

    def type_of(self, value: JsonValue, root: JsonObject, path: tuple[str, ...]) -> str:
        """The Python type expression of schema `value`, whose `$ref`s resolve against `root`."""
        if (
            value is root
            and isinstance(title := root.get("title"), str)
            and is_python_name(title, ascii_only=True, keyword_ok=True)
        ):
            return self._ref("#", root, path, def_name=title)  # pydantic's `-> User`: the same `User` as a `$defs/User`
        schema, nullable = normalize(value, root)
        expr = self._non_null(schema, root, path)
        return union([expr, "None"]) if nullable else expr

    def _non_null(self, schema: JsonObject, root: JsonObject, path: tuple[str, ...]) -> str:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, root, path)
        values = enum_values(schema)
        if values is not None and (expr := literal(values)) is not None:
            return expr
        for key in ("anyOf", "oneOf"):
            members = schema.get(key)
            if isinstance(members, list) and members and not _constraints_only(members):
                return union(self.type_of(member, root, path) for member in members)
        types = schema_types(schema)
        if not types:
            return "Any"
        return union(self._single(schema, kind, root, path) for kind in types)

    def _ref(self, ref: str, root: JsonObject, path: tuple[str, ...], *, def_name: str | None = None) -> str:
        key = self._keys.key(ref, root, def_name)
        if key in self._named_refs:
            return self._named_refs[key]
        target = resolve_ref(ref, root)
        if target is None or key in self._open_refs:
            return "Any"
        schema, nullable = normalize(target, root)
        if _has_properties(schema) and not isinstance(schema.get("$ref"), str):
            name = def_name or (ref_name(ref) if ref != "#" else None)
            expr = self._typed_dict(schema, root, path, def_name=name, ref_key=key)
        else:
            self._open_refs.add(key)
            expr = self._non_null(schema, root, path)
            self._open_refs.discard(key)
        return union([expr, "None"]) if nullable else expr

    def _single(self, schema: JsonObject, kind: str, root: JsonObject, path: tuple[str, ...]) -> str:
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind in ("array", "list", "tuple"):
            return self._array(schema, root, path)
        if kind in ("object", "dict"):
            return self._object(schema, root, path)
        return "Any"

    def _array(self, schema: JsonObject, root: JsonObject, path: tuple[str, ...]) -> str:
        item_path = (*path[:-1], singular(path[-1])) if path else ("Item",)
        prefix_items = schema.get("prefixItems")
        items = schema.get("items")
        if not isinstance(prefix_items, list) and isinstance(items, list):
            prefix_items = items  # draft 4 to 2019-09 tuple form
        if isinstance(prefix_items, list) and prefix_items:
            parts = [self.type_of(item, root, (*item_path, str(i))) for i, item in enumerate(prefix_items)]
            return f"tuple[{', '.join(parts)}]"
        if isinstance(items, dict):
            return f"list[{self.type_of(items, root, item_path)}]"
        return "list[Any]"

    def _object(self, schema: JsonObject, root: JsonObject, path: tuple[str, ...]) -> str:
        if _has_properties(schema):
            return self._typed_dict(schema, root, path)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return f"dict[str, {self.type_of(extra, root, (*path, 'Value'))}]"
        patterns = as_schema(schema.get("patternProperties"))
        if patterns:
            return f"dict[str, {union(self.type_of(v, root, (*path, 'Value')) for v in patterns.values())}]"
        return "dict[str, Any]"

    def _typed_dict(
        self,
        schema: JsonObject,
        root: JsonObject,
        path: tuple[str, ...],
        *,
        def_name: str | None = None,
        ref_key: RefKey | None = None,
    ) -> str:
        name = self._class_name(schema, path, def_name)
        if ref_key is not None:
            self._named_refs[ref_key] = name  # before the fields, so a recursive reference finds the name
        required = schema.get("required")
        required_keys = set(required) if isinstance(required, list) else set()
        fields = [
            TypedDictField(
                key=key,
                type=self.type_of(sub, root, (*path, key)),
                required=key in required_keys or as_schema(sub).get("required") is True,
                doc=field_doc(as_schema(sub)),
            )
            for key, sub in as_schema(schema.get("properties")).items()
            if sub is not False
        ]
        description = schema.get("description")
        doc = visible_line(description, _FIELD_DOC_CHARS) if isinstance(description, str) else ""
        self.classes.append(TypedDictDef(name=name, fields=tuple(fields), doc=doc))
        return name

    def _class_name(self, schema: JsonObject, path: tuple[str, ...], def_name: str | None) -> str:
        title = schema.get("title")
        if def_name and camel(def_name):
            base = camel(def_name)
        elif isinstance(title, str) and is_python_name(title, ascii_only=True, keyword_ok=True):
            base = camel(title)
        else:
            base = self.prefix + "".join(camel(part) for part in path)
        name, n = base, 1
        while name in self._taken or name in _RESERVED or name in self.reserved or keyword.iskeyword(name):
            n += 1
            name = f"{base}{n}"
        self._taken.add(name)
        return name


def _has_properties(schema: JsonObject) -> bool:
    properties = schema.get("properties")
    return isinstance(properties, dict) and any(value is not False for value in properties.values())


def _constraints_only(members: list[JsonValue]) -> bool:
    """True when union members only constrain the parent (`anyOf: [{required: [a]}, {required: [b]}]`)."""
    typing_keys = ("type", "$ref", "properties", "items", "enum", "const", "anyOf", "oneOf", "allOf")
    return not any(key in as_schema(member) for member in members for key in typing_keys)


def union(members: Iterable[str]) -> str:
    """Join type expressions with `|`: flattened, deduplicated, `None` last, `Any` absorbing the rest."""
    seen: list[str] = []
    for member in members:
        for part in _split_union(member):
            if part not in seen:
                seen.append(part)
    if not seen or "Any" in seen:
        return "Any"
    if "None" in seen:
        seen = [part for part in seen if part != "None"] + ["None"]
    return " | ".join(seen)


def _split_union(expr: str) -> list[str]:
    """Split a rendered union at its top-level `|` (outside brackets and string literals)."""
    parts, depth, start, quote = [], 0, 0, ""
    i = 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(expr[start:i].strip())
            start = i + 1
        i += 1
    parts.append(expr[start:].strip())
    return parts


def literal(values: list[JsonValue]) -> str | None:
    """`Literal[...]` of enum values, or `None` when a value cannot be a Literal (floats, objects) or too many."""
    parts: list[str] = []
    for value in values:
        if not (value is None or isinstance(value, str | int)):
            return None
        text = py_literal(value)
        if text not in parts:
            parts.append(text)
    if len(parts) > MAX_LITERAL_VALUES:
        return None
    return f"Literal[{', '.join(parts)}]"


def field_doc(schema: JsonObject) -> str:
    """One line describing a TypedDict key: description, then constraint notes and default in parentheses."""
    description = schema.get("description")
    text = visible_line(description, _FIELD_DOC_CHARS) if isinstance(description, str) else ""
    notes = constraint_notes(schema)
    values = enum_values(schema)
    if values is not None and literal(values) is None:
        notes.append("one of: " + ", ".join(py_literal(value) for value in values[:20]))
    if "default" in schema:
        notes.append(f"default: {py_literal(schema['default'])}")
    note = visible_line("; ".join(notes), _FIELD_DOC_CHARS)
    return f"{text} ({note})".strip() if note else text


def visible_line(text: str, limit: int) -> str:
    """`text` as one line of a stub: `one_line`, then non-printables made visible (their escapes may add a little)."""
    return printable(one_line(text, limit))


def printable(text: str) -> str:
    """Replace non-printable characters (other than newline) with their Python escape sequences."""
    if text.isprintable() or text.replace("\n", "").isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\n" else repr(ch)[1:-1] for ch in text)


def py_str(text: str) -> str:
    """A Python string literal for `text`, double-quoted where that needs no escaping."""
    source = repr(text)
    if source[0] == "'" and '"' not in text and "'" not in text:
        return f'"{source[1:-1]}"'
    return source


def py_literal(value: JsonValue) -> str:
    """Python source for a JSON value: `true` -> `True`, `null` -> `None`, strings double-quoted."""
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f'float("{value}")'
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(item) for item in value) + "]"
    return "{" + ", ".join(f"{py_str(k)}: {py_literal(v)}" for k, v in value.items()) + "}"


def camel(text: str) -> str:
    """CamelCase of an identifier-ish string: `get_weather` -> `GetWeather`, `HTTPRequest` unchanged."""
    words = [word for word in re.split(r"[^0-9A-Za-z]+", text) if word]
    result = "".join(word[0].upper() + word[1:] for word in words)
    return "T" + result if result[:1].isdigit() else result


def singular(word: str) -> str:
    """A rough singular for naming array items: `days` -> `day`, `entries` -> `entry`, else `<word>Item`."""
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return f"{word}_item"
