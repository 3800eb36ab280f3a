"""A `jsonschema` validation error made into one a model can act on: the key it misspelt, the variant it meant.

`jsonschema` says "Additional properties are not allowed ('emial' was unexpected)" and, for a `oneOf`/`anyOf`,
"is not valid under any of the given schemas", which names neither the right key nor what is missing. `readable`
rewrites those two: a misspelt key gets "did you mean", and a union is narrowed to the variant the value names by
its tag (OpenAPI's `discriminator`, or a property that is a `const` in every variant) or, with no tag, the variant
it fits best, whose own error is then given with the variant named. Apart from `codemode.schema._jsonschema`, which owns
what a schema means; this module owns only the wording of what went wrong.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from codemode._naming import close_matches
from codemode.schema._jsonschema import as_schema, enum_values, resolve_ref, schema_types
from codemode.schema._typeexpr import literal, union

if TYPE_CHECKING:
    from sandbox import JsonObject, JsonValue

_UNIONS: Final = ("oneOf", "anyOf")
_SHAPE: Final = ("required", "additionalProperties", "dependentRequired", "dependencies")
"""Validators that fail on an object of the variant's own shape: its error is worth more than "valid under none"."""
_KINDS: Final = ("type", "enum", "const", "anyOf", "oneOf", "$ref")
"""Validators that fail on a value of another kind than the variant's: it was not meant for that variant."""


def readable(error: Any, root: JsonObject) -> Any:
    """`error`, or a clearer error of the same place (or of the key inside it that is wrong).

    Args:
        error: A `jsonschema.ValidationError`.
        root: The schema the validator checks, for the variants' `$ref`s.
    """
    if error.validator in _UNIONS and error.context:
        narrowed = _narrowed(error, root)
        return _rewritten(error, f"expected `{_expected(error, root)}`") if narrowed is None else narrowed
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return _unexpected_key(error)
    if error.validator == "required" and error.absolute_path:
        missing = _quoted(str(error.message))
        return _rewritten(error, f"missing key `{missing}`") if missing else error
    return error


def _narrowed(error: Any, root: JsonObject) -> Any | None:
    variants = [_resolved(variant, root) for variant in error.validator_value]
    instance = error.instance
    tag = _tag(error.schema, variants) if isinstance(instance, dict) else None
    consts = [as_schema(as_schema(v.get("properties")).get(tag)) for v in variants] if tag is not None else []
    if tag is not None and tag in instance and all("const" in const for const in consts):
        values = [const["const"] for const in consts]
        if instance[tag] not in values:
            shown = ", ".join(json.dumps(value, ensure_ascii=False) for value in values)
            return _rewritten(error, f"must be one of {shown}", path=[*error.absolute_path, tag])
        index = values.index(instance[tag])
        label = f"the variant for {tag}={json.dumps(instance[tag], ensure_ascii=False)}"
    else:
        fitting = _fitting(error) or _typed(error)
        if not fitting:
            return None
        index = min(fitting, key=lambda i: (len(fitting[i]), -_known(variants[i], instance), i))
        label = f"the closest of its {len(variants)} variants" if len(fitting) > 1 else ""
    own = [sub for sub in error.context if sub.relative_schema_path and sub.relative_schema_path[0] == index]
    if not own:
        return None
    best = readable(min(own, key=lambda sub: len(sub.absolute_path)), root)
    message = f"{best.message} ({label})" if label else best.message
    return _rewritten(best, message, path=list(best.absolute_path))


_PYTHON_TYPES: Final = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "array": "list",
    "object": "dict",
}


def _expected(error: Any, root: JsonObject) -> str:
    """The union's variants as a Python type, as the stub writes a simple one (`bool | None`): what was expected."""
    parts: list[str] = []
    for variant in (_resolved(v, root) for v in error.validator_value):
        values = enum_values(variant)
        shown = literal(values) if values is not None else None
        if shown is None:
            types = schema_types(variant)
            shown = union(_PYTHON_TYPES.get(kind, "Any") for kind in types) if types else "Any"
        parts.append(shown)
    return union(parts)


def _resolved(variant: JsonValue, root: JsonObject) -> JsonObject:
    schema = as_schema(variant)
    ref = schema.get("$ref")
    target = resolve_ref(ref, root) if isinstance(ref, str) else None
    return schema if target is None else target


def _tag(schema: JsonObject, variants: list[JsonObject]) -> str | None:
    """The property that names the variant: the declared `discriminator`, else one that is a `const` in each."""
    declared = as_schema(schema.get("discriminator")).get("propertyName")
    if isinstance(declared, str):
        return declared
    if not variants:
        return None
    first = as_schema(variants[0].get("properties"))
    for key in first:
        if all("const" in as_schema(as_schema(v.get("properties")).get(key)) for v in variants):
            return key
    return None


def _fitting(error: Any) -> dict[int, list[Any]]:
    """The variants whose errors are all about the value's content, not its type, with their errors."""
    return {
        index: subs
        for index, subs in _by_variant(error).items()
        if all(sub.relative_path or sub.validator in _SHAPE for sub in subs)
    }


def _typed(error: Any) -> dict[int, list[Any]]:
    """The variants the value has the type of, failing only a constraint (`minimum`, `pattern`), with their errors."""
    return {
        index: subs
        for index, subs in _by_variant(error).items()
        if not any(sub.validator in _KINDS and not sub.relative_path for sub in subs)
    }


def _by_variant(error: Any) -> dict[int, list[Any]]:
    """The union's errors, by the index of the variant each is of."""
    errors: dict[int, list[Any]] = {}
    for sub in error.context:
        if sub.relative_schema_path and isinstance(sub.relative_schema_path[0], int):
            errors.setdefault(sub.relative_schema_path[0], []).append(sub)
    return errors


def _known(variant: JsonObject, instance: JsonValue) -> int:
    """How many of the value's keys the variant names: of two variants as far off, the one the model meant."""
    properties = as_schema(variant.get("properties"))
    return sum(key in properties for key in instance) if isinstance(instance, dict) else 0


def _unexpected_key(error: Any) -> Any:
    properties = as_schema(as_schema(error.schema).get("properties"))
    unexpected = [key for key in error.instance if key not in properties]
    if not unexpected or not error.absolute_path:  # the top level names its arguments itself
        return error
    key = str(unexpected[0])
    matches = close_matches(key, list(properties), limit=1)
    hint = f"; did you mean `{matches[0]}`?" if matches else f"; the keys it takes: {', '.join(properties)}"
    return _rewritten(error, f"unexpected key `{key}`{hint}")


def _quoted(message: str) -> str:
    """The name `jsonschema` quotes first in its message (`'h' is a required property` -> `h`)."""
    parts = message.split("'")
    return parts[1] if len(parts) > 2 else ""


def _rewritten(error: Any, message: str, *, path: list[Any] | None = None) -> Any:
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]  # loaded with the validator

    where = list(error.absolute_path) if path is None else path
    instance = error.instance
    if path is not None and len(path) > len(error.absolute_path) and isinstance(instance, dict):
        instance = instance.get(path[-1])
    return ValidationError(message, validator=error.validator, path=where, instance=instance, schema=error.schema)
