"""What a tool's JSON Schema means, for the stub and the validator alike: `$ref`, `allOf`, nullability, drafts.

Tool schemas arrive in every dialect (draft 4 to 2020-12, OpenAPI 3.0 `nullable`, pydantic's `$defs`, hand-written
ones with non-standard keys). These pure functions reduce one schema node to the few shapes `codemode.schema._typeexpr`
renders, and read the constraints worth a word in a docstring. They never raise on a malformed schema: what they
cannot read they leave out, and the renderer falls back to `Any`. This module is the one owner of nullability
(`split_nullable`, `accepts_null`, OpenAPI `nullable` for validation), which `_validator` reads too, so the stub
and the validator never disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from sandbox.limits import cut_end

if TYPE_CHECKING:
    from sandbox import JsonObject, JsonValue

_MAX_MERGE_DEPTH: Final = 8
"""How deep `allOf` members that are themselves `allOf` (through `$ref`) are merged before giving up."""
_MAX_PATTERN: Final = 80
"""Characters of a `pattern` shown in a field's notes; a longer one is cut with the marker."""
_UNION_KEYS: Final = ("anyOf", "oneOf")
_NULLABLE_KEYS: Final = ("nullable", "enum", "anyOf", "oneOf")


def as_schema(value: JsonValue) -> JsonObject:
    """Return `value` as a schema object: `true`, `false` and malformed schemas become `{}` (anything)."""
    return value if isinstance(value, dict) else {}


def ref_name(ref: str) -> str:
    """The last segment of a JSON pointer reference: `#/$defs/User` -> `User`."""
    return _unescape(ref.rsplit("/", 1)[-1])


def resolve_ref(ref: str, root: JsonObject) -> JsonObject | None:
    """Resolve a local reference (`#`, `#/$defs/X`, `#/definitions/X`, any local JSON pointer) against `root`.

    Returns `None` for remote references and pointers that lead nowhere or to a non-object.
    """
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: JsonValue = root
    for part in ref[2:].split("/"):
        key = _unescape(part)
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node if isinstance(node, dict) else None


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def merge_all_of(schema: JsonObject, root: JsonObject, depth: int = 0) -> JsonObject:
    """Merge `allOf` into its parent where that is simple.

    A single member is lifted into the parent (so `allOf: [{$ref}]` with a description stays a named reference).
    Several members, resolved through local `$ref`, are merged: properties joined, `required` united, other
    keywords first-wins. The parent's own keywords (description, default) always win.
    """
    members = schema.get("allOf")
    if not isinstance(members, list) or not members:
        return schema
    rest = {key: value for key, value in schema.items() if key != "allOf"}
    parts = [as_schema(member) for member in members]
    if len(parts) == 1:
        return {**parts[0], **rest}
    merged: JsonObject = {}
    properties: JsonObject = {}
    required: list[JsonValue] = []
    for part in parts:
        resolved = _resolve_member(part, root, depth)
        properties.update({k: v for k, v in as_schema(resolved.get("properties")).items() if k not in properties})
        reqs = resolved.get("required")
        required.extend(r for r in (reqs if isinstance(reqs, list) else []) if r not in required)
        for key, value in resolved.items():
            merged.setdefault(key, value)
    merged.update(rest)
    if properties:
        merged["properties"] = properties
        merged.setdefault("type", "object")
    if required:
        merged["required"] = required
    return merged


def _resolve_member(member: JsonObject, root: JsonObject, depth: int) -> JsonObject:
    ref = member.get("$ref")
    if isinstance(ref, str) and depth < _MAX_MERGE_DEPTH:
        target = resolve_ref(ref, root)
        if target is not None:
            rest = {key: value for key, value in member.items() if key != "$ref"}
            return merge_all_of({**target, **rest}, root, depth + 1)
    return merge_all_of(member, root, depth + 1) if depth < _MAX_MERGE_DEPTH else member


def split_nullable(schema: JsonObject) -> tuple[JsonObject, bool]:
    """Remove every way of saying "or null" from `schema` and report whether one was there.

    Handles `nullable: true` (OpenAPI 3.0), `type: [X, "null"]`, `null` in `enum`, and `anyOf`/`oneOf` with a
    null member (a single remaining member is lifted into the parent, whose own keywords win). A schema that is
    only null stays `{"type": "null"}` and is not reported as nullable.
    """
    if not isinstance(schema.get("type"), list) and not any(key in schema for key in _NULLABLE_KEYS):
        return schema, False
    out = {key: value for key, value in schema.items() if key != "nullable"}
    nullable = schema.get("nullable") is True
    kind = out.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [t for t in kind if t != "null"]
        if not rest:
            return {**out, "type": "null"}, False
        out["type"] = rest[0] if len(rest) == 1 else rest
        nullable = True
    values = out.get("enum")
    if isinstance(values, list) and None in values:
        rest = [value for value in values if value is not None]
        if not rest:
            return {key: value for key, value in out.items() if key != "enum"} | {"type": "null"}, False
        out["enum"] = rest
        nullable = True
    for key in _UNION_KEYS:
        members = out.get(key)
        if not isinstance(members, list):
            continue
        others = [member for member in members if not _is_null(member)]
        if len(others) == len(members) or not others:
            continue
        nullable = True
        if len(others) == 1:
            siblings = {k: v for k, v in out.items() if k != key}
            return {**as_schema(others[0]), **siblings}, nullable
        out[key] = others
    return out, nullable


def accepts_null(value: JsonValue, root: JsonObject, depth: int = 0) -> bool:
    """Whether the schema says "or null" in any of its forms: exactly when the stub renders the type with `| None`.

    A local `$ref` is followed. A schema that says nothing of null (`{}`) is not counted.
    """
    schema = as_schema(value)
    ref = schema.get("$ref")
    if isinstance(ref, str) and depth < _MAX_MERGE_DEPTH:
        target = resolve_ref(ref, root)
        return target is not None and accepts_null(target, root, depth + 1)
    normal, nullable = normalize(schema, root)
    return nullable or _is_null(normal)


def openapi_nullable(value: JsonValue) -> JsonValue:
    """`value` with OpenAPI 3.0's `nullable: true` said in JSON Schema (`"null"` in `type`, `None` in `enum`).

    Standard validators ignore `nullable`; the stub renders it as `| None`, so validation must accept `None` too.
    Data keywords (`enum`, `const`, `default`, `examples`) are left alone.
    """
    if isinstance(value, list):
        return [openapi_nullable(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: item if key in _DATA_KEYS else openapi_nullable(item) for key, item in value.items()}
    if out.pop("nullable", None) is not True:
        return out
    kind, values = out.get("type"), out.get("enum")
    if isinstance(values, list) and None not in values:
        out["enum"] = [*values, None]
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        out["type"] = kind if "null" in kind else [*kind, "null"]
    elif not isinstance(values, list):
        return {"anyOf": [out, {"type": "null"}]}
    return out


_DATA_KEYS: Final = frozenset({"enum", "const", "default", "examples", "example"})


def _is_null(member: JsonValue) -> bool:
    schema = as_schema(member)
    return (
        schema.get("type") == "null" or ("const" in schema and schema["const"] is None) or schema.get("enum") == [None]
    )


def normalize(value: JsonValue, root: JsonObject) -> tuple[JsonObject, bool]:
    """Normalise one schema node: coerce to an object, merge simple `allOf`, split off nullability."""
    return split_nullable(merge_all_of(as_schema(value), root))


def enum_values(schema: JsonObject) -> list[JsonValue] | None:
    """The allowed values from `const` or `enum`, or `None` when the schema has neither."""
    if "const" in schema:
        return [schema["const"]]
    values = schema.get("enum")
    return values if isinstance(values, list) and values else None


def schema_types(schema: JsonObject) -> list[str]:
    """The schema's `type` as a list, inferred from its keywords when absent (`properties` -> object)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [t for t in kind if isinstance(t, str)]
    if any(key in schema for key in ("properties", "additionalProperties", "patternProperties")):
        return ["object"]
    if "items" in schema or "prefixItems" in schema:
        return ["array"]
    return []


def constraint_notes(schema: JsonObject) -> list[str]:
    """Short human-readable notes on the constraints that a Python type cannot carry (format, bounds, pattern)."""
    notes: list[str] = []
    if isinstance(fmt := schema.get("format"), str):
        notes.append(f"format: {fmt}")
    notes.extend(f"{text} {bound}" for text, bound in bounds(schema))
    if isinstance(pattern := schema.get("pattern"), str):
        notes.append(f"pattern: {cut_end(pattern, _MAX_PATTERN)}")
    return notes


def bounds(schema: JsonObject) -> list[tuple[str, int | float]]:
    """The schema's bounds as the validator reads them: each as its operator or words, and its number (`(">", 0)`).

    A boolean `exclusiveMinimum`/`exclusiveMaximum` (draft 4 and OpenAPI 3.0) makes its `minimum`/`maximum`
    exclusive: it is valid under draft 4 only, the draft `checked_schema` then checks the schema under.
    """
    out: list[tuple[str, int | float]] = []
    for key, text, draft4 in _BOUNDS:
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            out.append((draft4[1] if draft4 and schema.get(draft4[0]) is True else text, bound))
    return out


_BOUNDS: Final[tuple[tuple[str, str, tuple[str, str] | None], ...]] = (
    ("minimum", ">=", ("exclusiveMinimum", ">")),
    ("exclusiveMinimum", ">", None),
    ("maximum", "<=", ("exclusiveMaximum", "<")),
    ("exclusiveMaximum", "<", None),
    ("minLength", "min length", None),
    ("maxLength", "max length", None),
    ("minItems", "min items", None),
    ("maxItems", "max items", None),
)
"""Each bound: its key, its words, and draft 4's boolean flag that makes it exclusive with the words it then takes."""
