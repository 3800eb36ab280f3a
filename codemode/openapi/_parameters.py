"""One operation's inputs as one parameter schema: path, query, header and cookie parameters and the body.

Every input becomes a keyword argument, and each argument is bound to where it goes in the request. Names are
kept as the API spells them; when two inputs share a name, the first in the order path, query, header, cookie
keeps it and the others get their location as a suffix (`id` in the path, `id_query` in the query). The
properties of an object body (JSON or form) become arguments of their own, unless one of them would clash with
a parameter, or the body is not a plain object: then the whole body is one argument, `body`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from codemode.schema._jsonschema import as_schema, merge_all_of, resolve_ref

if TYPE_CHECKING:
    from sandbox import JsonObject, JsonValue

Location: TypeAlias = Literal["path", "query", "header", "cookie", "body", "field", "form"]
"""Where an argument goes: a parameter, the whole body, one property of a JSON body, or one form field."""
BodyKind: TypeAlias = Literal["json", "form", "multipart", "text"]

PARAMETER_ORDER: Final = ("path", "query", "header", "cookie")
_SWAGGER2_KEYS: Final = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
)
_COLLECTION_STYLES: Final = {"csv": "form", "ssv": "spaceDelimited", "tsv": "tabDelimited", "pipes": "pipeDelimited"}


@dataclass(frozen=True, kw_only=True)
class Binding:
    """Where one keyword argument goes in the request."""

    argument: str
    """The property name in the tool's parameter schema."""
    location: Location
    """The part of the request it fills."""
    name: str
    """Its name there (the parameter's or the body property's); empty for a whole body."""
    style: str = "form"
    """How an array is written: `form`, `simple`, `spaceDelimited`, `pipeDelimited`, `tabDelimited`."""
    explode: bool = True
    """Whether an array in a query repeats the name for each item (`tags=a&tags=b`) or joins them."""


@dataclass(frozen=True, kw_only=True)
class Input:
    """One parameter of an operation, its schema already bundled."""

    name: str
    location: Location
    schema: JsonValue
    required: bool = False
    description: str = ""
    style: str = "form"
    explode: bool = True


@dataclass(frozen=True, kw_only=True)
class Body:
    """An operation's request body, its schema already bundled."""

    schema: JsonValue
    kind: BodyKind
    media_type: str
    required: bool = False
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class Combined:
    """The properties and required names of a parameter schema, and where each argument goes."""

    properties: JsonObject
    required: list[str]
    bindings: tuple[Binding, ...]


def combine(inputs: list[Input], body: Body | None, defs: JsonObject, *, defs_key: str) -> Combined:
    """Combine the parameters and the body into one set of arguments, resolving name clashes (module doc)."""
    properties: JsonObject = {}
    required: list[str] = []
    bindings: list[Binding] = []
    for item in sorted(inputs, key=lambda item: PARAMETER_ORDER.index(item.location)):
        argument = _free(item.name, properties, item.location)
        properties[argument] = _described(item.schema, item.description)
        # A path parameter is always sent, so required, unless its default fills it (`/{version}/...`, "v1").
        filled = item.location == "path" and isinstance(item.schema, dict) and "default" in item.schema
        if (item.required or item.location == "path") and not filled:
            required.append(argument)
        bindings.append(
            Binding(argument=argument, location=item.location, name=item.name, style=item.style, explode=item.explode)
        )
    if body is not None:
        _add_body(body, properties, required, bindings, {defs_key: defs})
    return Combined(properties=properties, required=required, bindings=tuple(bindings))


def _add_body(
    body: Body, properties: JsonObject, required: list[str], bindings: list[Binding], root: JsonObject
) -> None:
    fields = _object_fields(body, root)
    if fields is not None and not any(name in properties for name in fields[0]):
        field_properties, field_required = fields
        location: Location = "field" if body.kind == "json" else "form"
        for name, sub in field_properties.items():
            properties[name] = sub
            bindings.append(Binding(argument=name, location=location, name=name))
        required.extend(name for name in field_required if name in field_properties and body.required)
        return
    argument = _free("body", properties, "body")
    properties[argument] = _described(body.schema, body.description)
    if body.required:
        required.append(argument)
    bindings.append(Binding(argument=argument, location="body", name=""))


def _object_fields(body: Body, root: JsonObject) -> tuple[JsonObject, list[str]] | None:
    """The properties and required names of a body that is a plain object, or None when it is not one."""
    if body.kind == "text":
        return None
    schema = as_schema(body.schema)
    for _ in range(8):
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            break
        schema = {**as_schema(resolve_ref(ref, root)), **{k: v for k, v in schema.items() if k != "$ref"}}
    schema = merge_all_of(schema, root)
    properties = schema.get("properties")
    plain = isinstance(properties, dict) and properties and schema.get("type", "object") == "object"
    if not plain or any(key in schema for key in ("oneOf", "anyOf", "not", "patternProperties")):
        return None
    if schema.get("additionalProperties") not in (None, False) or schema.get("nullable") is True:
        return None
    assert isinstance(properties, dict)
    names = schema.get("required")
    return properties, [name for name in names if isinstance(name, str)] if isinstance(names, list) else []


def _free(name: str, taken: JsonObject, location: str) -> str:
    if name not in taken:
        return name
    candidate, n = f"{name}_{location}", 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{location}{n}"
    return candidate


def _described(schema: JsonValue, description: str) -> JsonValue:
    if not description or not isinstance(schema, dict):
        return schema
    return {**schema, "description": description}


def swagger2_schema(parameter: JsonObject) -> JsonObject:
    """The JSON Schema of a Swagger 2.0 non-body parameter, whose type keywords sit on the parameter itself."""
    schema: JsonObject = {key: parameter[key] for key in _SWAGGER2_KEYS if key in parameter}
    items = schema.get("items")
    if isinstance(items, dict):
        schema["items"] = swagger2_schema(items)
    return schema


def swagger2_style(parameter: JsonObject) -> tuple[str, bool]:
    """The OpenAPI 3 `style` and `explode` of a Swagger 2.0 `collectionFormat`."""
    collection = parameter.get("collectionFormat", "csv")
    if collection == "multi":
        return "form", True
    return _COLLECTION_STYLES.get(str(collection), "form"), False


def openapi3_style(parameter: JsonObject, location: str) -> tuple[str, bool]:
    """An OpenAPI 3 parameter's `style` and `explode`, with the defaults of its location."""
    default = "form" if location in ("query", "cookie") else "simple"
    style = parameter.get("style", default)
    explode = parameter.get("explode", style == "form")
    return str(style), explode is True
