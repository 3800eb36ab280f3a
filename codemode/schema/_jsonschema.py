"""What a tool's JSON Schema means, for the stub and the validator alike: `$ref`, `allOf`, nullability, drafts.

Tool schemas arrive in every dialect (draft 4 to 2020-12, OpenAPI 3.0 `nullable`, pydantic's `$defs`, hand-written
ones with non-standard keys). These pure functions reduce one schema node to the few shapes `codemode.schema._typeexpr`
renders, and read the constraints worth a word in a docstring. They never raise on a malformed schema: what they
cannot read they leave out, and the renderer falls back to `Any`. This module is the one owner of nullability
(`split_nullable`, `accepts_null`, OpenAPI `nullable` for validation) and of drafts (`codemode._validators` picks
the draft: `checked_schema`), so the stub and the validator never disagree.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from codemode._json import JsonObject, JsonValue

_MAX_MERGE_DEPTH: Final = 8
"""How deep `allOf` members that are themselves `allOf` (through `$ref`) are merged before giving up."""
_UNION_KEYS: Final = ("anyOf", "oneOf")
FIRST_ERRORS: Final = 64
"""The most validation errors collected for one instance (the message names the first by path)."""
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
        notes.append(f"pattern: {pattern if len(pattern) <= 80 else pattern[:77] + '...'}")
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


logger = logging.getLogger("codemode.schema")
_reported: set[tuple[str, str]] = set()


def report_problem(tool_name: str, problem: str) -> None:
    """Log, once per process, that a tool's schema is valid under no draft and is checked loosely."""
    if (tool_name, problem) not in _reported:
        _reported.add((tool_name, problem))
        logger.warning(
            "tool %r: its argument schema is valid under no JSON Schema draft (%s); its arguments are checked "
            "only where the schema can be read",
            tool_name,
            problem,
        )


@functools.cache
def _drafts() -> tuple[Any, ...]:
    """The drafts' validators, newest first: a schema without `$schema` is read under the newest it is valid under.

    `jsonschema` is imported here, at the first schema checked, not with this module: reading a catalog and
    rendering stubs need none of it, and it is a fifth of a CLI start.
    """
    import jsonschema  # type: ignore[import-untyped]  # no stubs in the dev extra

    return (
        jsonschema.Draft202012Validator,
        jsonschema.Draft201909Validator,
        jsonschema.Draft7Validator,
        jsonschema.Draft6Validator,
        jsonschema.Draft4Validator,
    )


@dataclass(frozen=True, kw_only=True)
class CheckedSchema:
    """A schema's validator, under the draft it declares or the newest it is valid under."""

    draft: str
    """The draft's name (`"draft-04"`), or `"relaxed"` when the schema is valid under none."""
    problem: str | None
    """Why the schema is valid under no draft (then only the parts that are valid are checked)."""
    validator: Any
    """The `jsonschema` validator (of the relaxed schema, when there is a problem)."""

    def errors(self, instance: JsonValue) -> list[Any]:
        """The first validation errors of `instance`, first by path, worded to act on (`codemode.schema._errors`).

        A reference that cannot be followed is skipped.

        The walk stops after `FIRST_ERRORS`: a million bad items would each build an error, for one message.
        """
        from referencing.exceptions import Unresolvable  # loaded with `jsonschema`, by `_drafts`

        from codemode.schema._errors import readable  # it reads schemas with this module's functions

        root = as_schema(self.validator.schema)
        try:
            found = list(itertools.islice(self.validator.iter_errors(instance), FIRST_ERRORS))
        except Unresolvable:  # a remote or broken `$ref`: check what can be checked without it
            found = list(itertools.islice(_relaxed(root).iter_errors(instance), FIRST_ERRORS))
        return sorted((readable(e, root) for e in found), key=lambda e: list(e.absolute_path))


def checked_schema(schema: JsonObject) -> CheckedSchema:
    """The validator of a tool's argument schema, with OpenAPI `nullable` honoured; cached by the schema's JSON."""
    try:
        canonical = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        return CheckedSchema(draft="relaxed", problem=f"it is not plain JSON ({e})", validator=_relaxed({}))
    return _checked(canonical)


def schema_problem(schema: JsonObject) -> str | None:
    """Why `schema` is valid under no JSON Schema draft (the declared one if it declares one), or `None`."""
    return checked_schema(schema).problem


@functools.lru_cache(maxsize=4096)
def _checked(canonical: str) -> CheckedSchema:
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]  # loaded by `_drafts`

    schema = as_schema(openapi_nullable(json.loads(canonical)))
    problem = None
    for draft in _candidates(schema):
        try:
            draft.check_schema(schema)
        except SchemaError as e:
            problem = problem or _describe(e)
            continue
        return CheckedSchema(draft=_draft_name(draft), problem=None, validator=draft(schema))
    return CheckedSchema(draft="relaxed", problem=problem, validator=_relaxed(schema))


def _candidates(schema: JsonObject) -> tuple[Any, ...]:
    drafts = _drafts()
    declared = schema.get("$schema")
    if isinstance(declared, str):
        from jsonschema.validators import validator_for  # type: ignore[import-untyped]  # loaded by `_drafts`

        draft = validator_for(schema, default=None)
        if draft is not None and draft in drafts:
            return (draft,)
    return drafts


def _draft_name(draft: Any) -> str:
    name: str = draft.__name__.removesuffix("Validator").removeprefix("Draft")
    return f"draft-{int(name):02d}" if len(name) == 1 else f"draft-{name[:4]}-{name[4:]}"


def _describe(error: Any) -> str:
    where = "/".join(str(part) for part in error.path)
    return f"{error.message}" + (f" (at `{where}`)" if where else "")


def _relaxed(schema: JsonObject) -> Any:
    """A validator of what can be checked: `required`, and each property whose own schema is valid and whole."""
    properties = {key: _whole(sub) for key, sub in as_schema(schema.get("properties")).items()}
    required = schema.get("required")
    relaxed: JsonObject = {"type": "object", "properties": properties}
    if isinstance(required, list) and all(isinstance(name, str) for name in required):
        relaxed["required"] = required
    return _drafts()[0](relaxed)


def _whole(sub: JsonValue) -> JsonValue:
    """`sub` if it is valid on its own under the newest draft (and has no `$ref` out of it), else `{}` (anything)."""
    if not isinstance(sub, dict) or '"$ref"' in json.dumps(sub):
        return {}
    return sub if _meta_2020().is_valid(sub) else {}


@functools.cache
def _meta_2020() -> Any:
    """A validator of schemas under the newest draft."""
    newest = _drafts()[0]
    return newest(newest.META_SCHEMA)
