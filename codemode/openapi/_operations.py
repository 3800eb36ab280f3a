"""The operations of an OpenAPI description (Swagger 2.0, OpenAPI 3.0, 3.1), each read into an `Operation`.

An operation that cannot be read (a reference that leads nowhere, a body of a kind that cannot be sent) is
reported with the reason and left out; the others load. Names come from `operationId`, else from the method
and path (`GET /pets/{id}` -> `get_pets_by_id`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from codemode.openapi._bundle import Definitions, SchemaBundle
from codemode.openapi._documents import DocumentError, Documents
from codemode.openapi._parameters import (
    Binding,
    Body,
    BodyKind,
    Input,
    combine,
    openapi3_style,
    swagger2_schema,
    swagger2_style,
)
from codemode.openapi._security import SecurityScheme, read_requirements, read_schemes

if TYPE_CHECKING:
    from sandbox import JsonObject, JsonValue

METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DRAFT4: Final = "http://json-schema.org/draft-04/schema#"
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
"""Header parameters the OpenAPI specification says to ignore: the client sets them."""
_WORDS: Final = re.compile(r"[A-Za-z0-9]+")


class OperationError(Exception):
    """One operation cannot be made into a tool; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Operation:
    """One HTTP operation as a tool definition, with what its calls need."""

    name: str
    method: str
    path: str
    """The path template, `/pets/{id}`."""
    description: str
    tags: tuple[str, ...]
    parameters: JsonObject
    returns: JsonObject | None
    bindings: tuple[Binding, ...]
    body_kind: BodyKind | None
    body_required: bool
    media_type: str | None
    security: tuple[tuple[str, ...], ...] | None
    """Alternatives, each the scheme names that must all be applied; `None` when the document says nothing."""


@dataclass(frozen=True, kw_only=True)
class Description:
    """What a whole document gives: its operations, the ones left out, its security schemes and server."""

    title: str
    operations: list[Operation]
    failures: dict[str, str]
    schemes: dict[str, SecurityScheme]
    server: str | None


def read_description(documents: Documents) -> Description:
    """Read every operation of a document; raises `DocumentError` only when the document is not OpenAPI."""
    doc = documents.root
    version = str(doc.get("openapi") or doc.get("swagger") or "")
    if not re.match(r"^(2\.0|3\.[01])(\.\d+)?", version):
        raise DocumentError(f"not an OpenAPI 2.0, 3.0 or 3.1 description (its version is {version or 'missing'!r})")
    reader = _Reader(documents, swagger=version.startswith("2"), dialect=None if version.startswith("3.1") else DRAFT4)
    operations: list[Operation] = []
    failures: dict[str, str] = {}
    names: set[str] = set()
    paths = doc.get("paths")
    for path, item in (paths if isinstance(paths, dict) else {}).items():
        try:
            path_item, base = documents.deref(item, documents.location)
        except DocumentError as e:
            failures[path] = str(e)
            continue
        for method in METHODS:
            if method not in path_item:
                continue
            operation_id = as_dict(path_item[method]).get("operationId")
            label = operation_id if isinstance(operation_id, str) else f"{method.upper()} {path}"
            try:
                operation = reader.operation(path, method, path_item, base, names)
            except (OperationError, DocumentError, ValueError, TypeError, KeyError) as e:
                failures[label] = str(e)  # a malformed operation fails in many ways; the others still load
                continue
            names.add(operation.name)
            operations.append(operation)
    info = as_dict(doc.get("info"))
    return Description(
        title=str(info.get("title", "")),
        operations=operations,
        failures=failures,
        schemes=read_schemes(documents, swagger=reader.swagger),
        server=_server(doc, swagger=reader.swagger),
    )


def as_dict(value: JsonValue) -> JsonObject:
    """`value` if it is an object, else `{}`."""
    return value if isinstance(value, dict) else {}


class _Reader:
    def __init__(self, documents: Documents, *, swagger: bool, dialect: str | None) -> None:
        self.documents = documents
        self.swagger = swagger
        self.dialect = dialect
        self.defs_key = "definitions" if dialect else "$defs"
        self.definitions = Definitions(documents, defs_key=self.defs_key)

    def operation(self, path: str, method: str, item: JsonObject, base: str, names: set[str]) -> Operation:
        op = item[method]
        if not isinstance(op, dict):
            raise OperationError(f"`{method}` of {path!r} is not an object")
        bundle = self.definitions.bundle(drop="readOnly")
        inputs, body = self._inputs(item, op, base, bundle)
        combined = combine(inputs, body, bundle.defs, defs_key=self.defs_key)
        shape: JsonObject = {"type": "object", "properties": combined.properties}
        if combined.required:
            required: list[JsonValue] = list(combined.required)
            shape["required"] = required
        shape["additionalProperties"] = False
        tags = tuple(tag for tag in as_list(op.get("tags")) if isinstance(tag, str))
        return Operation(
            name=_name(op, method, path, names),
            method=method.upper(),
            path=path,
            description=_description(op, method, path),
            tags=tags,
            parameters=bundle.root(shape, dialect=self.dialect),
            returns=self._returns(op, base),
            bindings=combined.bindings,
            body_kind=body.kind if body else None,
            body_required=body.required if body else False,
            media_type=body.media_type if body else None,
            security=read_requirements(op.get("security", self.documents.root.get("security"))),
        )

    def _inputs(
        self, item: JsonObject, op: JsonObject, base: str, bundle: SchemaBundle
    ) -> tuple[list[Input], Body | None]:
        merged: dict[tuple[str, str], tuple[JsonObject, str]] = {}
        for raw in [*as_list(item.get("parameters")), *as_list(op.get("parameters"))]:
            parameter, where = self.documents.deref(raw, base)
            name = parameter.get("name")
            if not isinstance(name, str) or not name:
                raise OperationError(f"a parameter has no `name`: {str(parameter)[:80]}")
            merged[(name, str(parameter.get("in")))] = (parameter, where)  # the operation's own win
        inputs: list[Input] = []
        form: list[tuple[JsonObject, str]] = []
        body: Body | None = None
        for (name, location), (parameter, where) in merged.items():
            if location == "body":
                body = self._swagger2_body(parameter, where, bundle, op)
            elif location == "formData":
                form.append((parameter, where))
            elif location not in ("path", "query", "header", "cookie"):
                raise OperationError(f"parameter {name!r} is in {location!r}, which is not a request location")
            elif not (location == "header" and name.lower() in _IGNORED_HEADERS):
                inputs.append(self._input(parameter, name, location, where, bundle))
        if form:
            body = self._swagger2_form(form, bundle, op)
        if not self.swagger and "requestBody" in op:
            body = self._request_body(op["requestBody"], base, bundle)
        return inputs, body

    def _input(self, parameter: JsonObject, name: str, location: str, where: str, bundle: SchemaBundle) -> Input:
        if self.swagger:
            schema: JsonValue = swagger2_schema(parameter)
            style, explode = swagger2_style(parameter)
        else:
            schema = parameter.get("schema", {})
            if "content" in parameter and "schema" not in parameter:
                media = next(iter(as_dict(parameter["content"]).values()), {})
                schema = as_dict(media).get("schema", {})
            style, explode = openapi3_style(parameter, location)
        return Input(
            name=name,
            location=location,  # type: ignore[arg-type]  # checked against the four locations by the caller
            schema=bundle.schema(schema, where),
            required=parameter.get("required") is True,
            description=str(parameter.get("description", "")),
            style=style,
            explode=explode,
        )

    def _swagger2_body(self, parameter: JsonObject, where: str, bundle: SchemaBundle, op: JsonObject) -> Body:
        consumes = as_list(op.get("consumes", self.documents.root.get("consumes"))) or ["application/json"]
        media = next((str(m) for m in consumes if _is_json(str(m))), str(consumes[0]))
        return Body(
            schema=bundle.schema(parameter.get("schema", {}), where),
            kind=_body_kind(media),
            media_type=media,
            required=parameter.get("required") is True,
            description=str(parameter.get("description", "")),
        )

    def _swagger2_form(self, form: list[tuple[JsonObject, str]], bundle: SchemaBundle, op: JsonObject) -> Body:
        properties: JsonObject = {}
        required: list[JsonValue] = []
        for parameter, where in form:
            if parameter.get("type") == "file":
                raise OperationError(f"it uploads a file (form field {parameter.get('name')!r}); files are not sent")
            name = str(parameter.get("name"))
            sub = swagger2_schema(parameter)
            if parameter.get("description"):
                sub["description"] = parameter["description"]
            properties[name] = bundle.schema(sub, where)
            if parameter.get("required") is True:
                required.append(name)
        consumes = [str(m) for m in as_list(op.get("consumes", self.documents.root.get("consumes")))]
        media = "multipart/form-data" if "multipart/form-data" in consumes else "application/x-www-form-urlencoded"
        schema: JsonObject = {"type": "object", "properties": properties, "required": required}
        return Body(schema=schema, kind=_body_kind(media), media_type=media, required=bool(required))

    def _request_body(self, raw: JsonValue, base: str, bundle: SchemaBundle) -> Body:
        body, where = self.documents.deref(raw, base)
        content = as_dict(body.get("content"))
        if not content:
            raise OperationError("its request body has no content")
        media = _pick_media(list(content))
        if media is None:
            raise OperationError(f"its request body is {sorted(content)}; only JSON, form and text bodies are sent")
        schema = as_dict(content[media]).get("schema", {})
        if media.startswith("multipart/") and _has_binary(schema):
            raise OperationError("it uploads a file (a binary form field); files are not sent")
        return Body(
            schema=bundle.schema(schema, where),
            kind=_body_kind(media),
            media_type=media,
            required=body.get("required") is True,
            description=str(body.get("description", "")),
        )

    def _returns(self, op: JsonObject, base: str) -> JsonObject | None:
        responses = as_dict(op.get("responses"))
        codes = sorted(code for code in responses if re.fullmatch(r"2(\d\d|XX)", str(code)))
        for code in codes:
            response, where = self.documents.deref(responses[code], base)
            bundle = self.definitions.bundle(drop="writeOnly")
            if self.swagger:
                if "schema" not in response:
                    return {"type": "null"} if code == "204" else None
                schema = bundle.schema(response["schema"], where)
            else:
                content = as_dict(response.get("content"))
                if not content:
                    return {"type": "null"} if code == "204" else None
                media = next((m for m in content if _is_json(m)), None)
                if media is None:
                    return {"type": "string"}
                schema = bundle.schema(as_dict(content[media]).get("schema", {}), where)
            return bundle.root(as_dict(schema), dialect=self.dialect)
        return None


def _name(op: JsonObject, method: str, path: str, taken: set[str]) -> str:
    operation_id = op.get("operationId")
    if isinstance(operation_id, str) and operation_id.strip():
        name = operation_id.strip()
        if name in taken:
            raise OperationError(f"another operation has the operationId {name!r}")
        return name
    words = [method]
    for segment in path.split("/"):
        found = _WORDS.findall(segment)
        if segment.startswith("{") and found:
            words += ["by", *found]
        else:
            words += found
    base = "_".join(words).lower()
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _description(op: JsonObject, method: str, path: str) -> str:
    parts = [str(op[key]).strip() for key in ("summary", "description") if isinstance(op.get(key), str)]
    text = "\n\n".join(dict.fromkeys(part for part in parts if part))
    if op.get("deprecated") is True:
        text = f"Deprecated. {text}".strip()
    return f"{text}\n\n`{method.upper()} {path}`" if text else f"`{method.upper()} {path}`"


def _server(doc: JsonObject, *, swagger: bool) -> str | None:
    if swagger:
        host = doc.get("host")
        if not isinstance(host, str):
            return None
        schemes = as_list(doc.get("schemes")) or ["https"]
        scheme = "https" if "https" in schemes else str(schemes[0])
        return f"{scheme}://{host}{doc.get('basePath', '')}".rstrip("/")
    servers = as_list(doc.get("servers"))
    if not servers:
        return None
    server = as_dict(servers[0])
    url = str(server.get("url", ""))
    for name, variable in as_dict(server.get("variables")).items():
        url = url.replace(f"{{{name}}}", str(as_dict(variable).get("default", "")))
    return url.rstrip("/") or None


def as_list(value: JsonValue) -> list[JsonValue]:
    """`value` if it is a list, else `[]`."""
    return value if isinstance(value, list) else []


def _is_json(media: str) -> bool:
    kind = media.split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


def _pick_media(types: list[str]) -> str | None:
    for wanted in (_is_json, lambda m: m.startswith("application/x-www-form-urlencoded")):
        found = next((m for m in types if wanted(m.lower())), None)
        if found:
            return found
    return next((m for m in types if m.lower().startswith(("multipart/form-data", "text/"))), None)


def _body_kind(media: str) -> BodyKind:
    kind = media.split(";")[0].strip().lower()
    if _is_json(kind):
        return "json"
    if kind == "application/x-www-form-urlencoded":
        return "form"
    if kind.startswith("multipart/"):
        return "multipart"
    return "text"


def _has_binary(schema: JsonValue) -> bool:
    properties = as_dict(as_dict(schema).get("properties"))
    return any(as_dict(sub).get("format") in ("binary", "base64") for sub in properties.values())
