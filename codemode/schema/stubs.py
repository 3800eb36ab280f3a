"""Tool definitions as Python stubs the model reads like code: `async def alias(*, ...) -> T:` plus a docstring.

`render_stub` gives the full stub announced for a tool the code used and returned by `tools.describe` (TypedDict
classes, signature, docstring with an `Args:` section); `render_line` gives the one-line stub announced for a tool
the code only found (signature and first sentence); `render_signature` gives the form used in search results.
Both are pure and deterministic to the byte, and their output always parses with `ast.parse`, whatever the
definition holds. Schema reading lives in `_jsonschema` and type expressions in `_typeexpr`;
this module owns the layout and the parameter names (`parameter_names`, which the runtime uses to map sanitised
names back to the originals).
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from codemode._naming import is_python_name
from codemode.schema._jsonschema import as_schema, constraint_notes, enum_values, normalize, resolve_ref, schema_types
from codemode.schema._typeexpr import (
    TypedDictDef,
    TypeRenderer,
    camel,
    literal,
    printable,
    py_literal,
    py_str,
    union,
    visible_line,
)
from sandbox.limits import cut_end

if TYPE_CHECKING:
    from codemode.tools import Tool
    from sandbox import JsonObject, JsonValue

MAX_DESCRIPTION: Final = 4000
"""Tool descriptions longer than this many characters are cut, with a visible marker. Long enough that `describe`
gives a whole description, last sentence too ("always pass dry_run=True first"), for all but the rarest (2 of the
4,232 tools of the shared data sets); search results show one line of it anyway."""
_MAX_PARAM_DESCRIPTION: Final = 400
_MAX_DEFAULT_SOURCE: Final = 60
"""Longer defaults render as `= ...` in the signature and in full (trimmed) in the `Args:` entry."""
_MAX_ONE_LINE_DEF: Final = 100
_MAX_SENTENCE: Final = 200
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`])")
"""Where a first sentence ends: a full stop, then a space and what starts a sentence (not `e.g. the`)."""
_UNEXPRESSED: Final = ("anyOf", "oneOf", "not", "if", "then", "else", "dependencies", "dependentRequired")
"""Root keywords a signature cannot say; shown as JSON in the docstring instead."""
_JSON_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass(frozen=True, kw_only=True)
class _Param:
    name: str
    """The Python identifier used in the stub."""
    type: str
    default: str | None
    """Python source of the default, `None` for a required parameter."""
    doc: str
    """The `Args:` entry text (description and notes), maybe several lines, maybe empty."""


@dataclass(frozen=True, kw_only=True)
class _Parts:
    params: tuple[_Param, ...]
    kwargs: str | None
    """Type of `**kwargs`, when the schema allows keys beyond its properties."""
    returns: str
    classes: tuple[TypedDictDef, ...]
    schema_note: str
    """Compact JSON of root keywords the signature cannot express (may be empty)."""


def render_stub(tool: Tool, *, max_description: int = MAX_DESCRIPTION) -> str:
    """The full stub of `tool`: TypedDict definitions, then `async def` with a docstring and a `...` body.

    Example:
        ```python
        tool = Tool(name="weather.get", alias="weather_get", description="Get the weather.",
                    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
        render_stub(tool).splitlines()[0]  # 'async def weather_get(*, city: str) -> Any:'
        ```
    """
    parts = _build(tool)
    blocks = [_class_source(definition) for definition in parts.classes]
    items = _param_items(parts)
    head = f"async def {tool.alias}({', '.join(items)}) -> {parts.returns}:"
    if len(head) > _MAX_ONE_LINE_DEF and items:
        head = f"async def {tool.alias}(\n" + "".join(f"    {item},\n" for item in items) + f") -> {parts.returns}:"
    doc = _docstring_text(tool, parts, max_description)
    body = [head, *([f"    {_docstring_source(doc, '    ')}"] if doc else []), "    ..."]
    blocks.append("\n".join(body))
    return "\n\n\n".join(blocks) + "\n"


def render_line(tool: Tool) -> str:
    """The one-line stub of a tool the code only saw: `async def alias(*, city: str) -> T: '''First...'''`.

    Every parameter's name and type, a default for each optional one, the return type and the description's first
    sentence: what a model needs to call the tool well enough, in one line of valid Python (types by name).
    """
    parts = _build(tool)
    sentence = first_sentence(_clean(tool.description, MAX_DESCRIPTION))
    body = _docstring_source(sentence, "") if sentence else "..."
    return f"async def {tool.alias}({', '.join(_param_items(parts))}) -> {parts.returns}: {body}"


def first_sentence(text: str) -> str:
    """The first sentence of `text` on one line, at most `_MAX_SENTENCE` characters (cut with the marker)."""
    flat = " ".join(text.split())
    end = _SENTENCE_END.search(flat)
    sentence = flat[: end.start()] if end else flat
    return cut_end(sentence, _MAX_SENTENCE)


def render_signature(tool: Tool) -> str:
    """One line for search results: `alias(*, city: str, days: int = 1) -> Forecast` (TypedDicts by name)."""
    parts = _build(tool)
    return f"{tool.alias}({', '.join(_param_items(parts))}) -> {parts.returns}"


def parameter_names(parameters: JsonObject) -> dict[str, str]:
    """Map each stub parameter name to the property name in `parameters`, in schema order.

    Names that are identifiers (and not keywords) stay; others are sanitised (`first-name` -> `first_name`,
    `from` -> `from_`, `2fa` -> `arg_2fa`) without colliding with any name kept as it is. The runtime uses this
    map to turn the model's keyword arguments back into the tool's own argument names.
    """
    keys = [key for key, sub in as_schema(_root_object(parameters).get("properties")).items() if sub is not False]
    taken = {key for key in keys if is_python_name(key, nfkc_only=True)}
    names: dict[str, str] = {}
    for key in keys:
        name = key if is_python_name(key, nfkc_only=True) else _free_name(_sanitise(key), taken)
        taken.add(name)
        names[name] = key
    return names


def _sanitise(name: str) -> str:
    if keyword.iskeyword(name):
        return f"{name}_"
    cleaned = re.sub(r"[^0-9A-Za-z_]+", "_", name).strip("_") or "arg"
    return f"arg_{cleaned}" if cleaned[0].isdigit() else cleaned


def _free_name(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken or keyword.iskeyword(candidate):
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _root_object(parameters: JsonObject) -> JsonObject:
    """The parameters schema with `allOf` merged and a root `$ref` (pydantic's `{"$ref": "#/$defs/Args"}`) followed."""
    schema, _ = normalize(parameters, parameters)
    for _hop in range(3):
        ref = schema.get("$ref")
        target = resolve_ref(ref, parameters) if isinstance(ref, str) else None
        if target is None:
            break
        schema, _ = normalize({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, parameters)
    return schema


def _build(tool: Tool) -> _Parts:
    root = tool.parameters
    schema = _root_object(root)
    renderer = TypeRenderer(prefix=camel(tool.alias) or "Tool", reserved=frozenset({tool.alias}))
    properties = as_schema(schema.get("properties"))
    required = schema.get("required")
    required_keys = set(required) if isinstance(required, list) else set()
    params = [
        _param(
            name, original, sub=properties[original], required=original in required_keys, renderer=renderer, root=root
        )
        for name, original in parameter_names(root).items()
    ]
    params.sort(key=lambda param: param.default is not None)  # stable: required first, schema order within each
    returns = "Any" if tool.returns is None else renderer.type_of(tool.returns, tool.returns, ("Result",))
    unexpressed = {key: schema[key] for key in _UNEXPRESSED if key in schema}
    note = visible_line(json.dumps(unexpressed, ensure_ascii=False, separators=(",", ":")), 500) if unexpressed else ""
    return _Parts(
        params=tuple(params),
        kwargs=_kwargs_type(schema, bool(params) or not note, renderer, root),
        returns=returns,
        classes=tuple(renderer.classes),
        schema_note=note,
    )


def _kwargs_type(schema: JsonObject, described: bool, renderer: TypeRenderer, root: JsonObject) -> str | None:
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return renderer.type_of(extra, root, ("Value",))
    if extra is True or not described or not set(schema_types(schema)) <= {"object"}:
        return "Any"
    return None


def _param(
    name: str, original: str, *, sub: JsonValue, required: bool, renderer: TypeRenderer, root: JsonObject
) -> _Param:
    expr = renderer.type_of(sub, root, (original,))
    schema, _ = normalize(sub, root)
    notes = constraint_notes(schema)
    values = enum_values(schema)
    if values is not None and literal(values) is None:
        notes.append("one of: " + visible_line(", ".join(py_literal(value) for value in values), 300))
    default: str | None = None
    if not required:
        default, expr, note = _default(schema, expr)
        notes.extend(note)
    elif "default" in schema:
        notes.append(f"default: {visible_line(py_literal(schema['default']), 200)}")
    if name != original:
        notes.append(f"original name: {py_str(original)}")
    description = schema.get("description")
    text = _clean(description, _MAX_PARAM_DESCRIPTION) if isinstance(description, str) else ""
    suffix = f"({'; '.join(notes)})" if notes else ""
    return _Param(name=name, type=expr, default=default, doc=f"{text} {suffix}".strip())


def _default(schema: JsonObject, expr: str) -> tuple[str, str, list[str]]:
    """Default source, type expression and notes for an optional parameter (`X | None = None` when no default)."""
    if "default" not in schema:
        return "None", union([expr, "None"]), []
    value = _coerce(schema["default"], schema_types(schema))
    source = py_literal(value)
    if not _matches(value, schema_types(schema)):
        return "None", union([expr, "None"]), [f"default: {visible_line(source, 200)}"]
    expr = union([expr, "None"]) if value is None else expr
    if len(source) > _MAX_DEFAULT_SOURCE:
        return "...", expr, [f"default: {visible_line(source, 200)}"]
    return source, expr, []


def _coerce(value: JsonValue, types: list[str]) -> JsonValue:
    """Read a string default as the number or boolean the schema declares (`"10"` for an integer -> `10`)."""
    if not isinstance(value, str) or "string" in types:
        return value
    text = value.strip()
    if "integer" in types or "number" in types:
        if re.fullmatch(r"[-+]?\d+", text):
            return int(text)
        if "number" in types and re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?", text):
            return float(text)
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def _matches(value: JsonValue, types: list[str]) -> bool:
    if value is None or not types:
        return True
    if isinstance(value, bool):
        return "boolean" in types
    return any(isinstance(value, _JSON_TYPES.get(kind, (object,))) for kind in types)


def _param_items(parts: _Parts) -> list[str]:
    items = [f"{p.name}: {p.type}" + (f" = {p.default}" if p.default is not None else "") for p in parts.params]
    if items:
        items.insert(0, "*")  # keyword-only always: the runtime calls tools with keywords, never by position
    if parts.kwargs is not None:
        name = _free_name("kwargs", {p.name for p in parts.params})
        items.append(f"**{name}: {parts.kwargs}")
    return items


def _class_source(definition: TypedDictDef) -> str:
    total = any(f.required for f in definition.fields)
    types = [f.type if f.required or not total else f"NotRequired[{f.type}]" for f in definition.fields]
    comments = [f"  # {f.doc}" if f.doc else "" for f in definition.fields]
    if all(is_python_name(f.key, nfkc_only=True) for f in definition.fields):
        lines = [f"class {definition.name}(TypedDict{'' if total else ', total=False'}):"]
        if definition.doc:
            lines.append("    " + _docstring_source(definition.doc, "    "))
        lines += [f"    {f.key}: {t}{c}" for f, t, c in zip(definition.fields, types, comments, strict=True)]
        return "\n".join(lines)
    # Keys that are not identifiers need the functional form.
    lines = [f"# {definition.doc}"] if definition.doc else []
    lines.append(f"{definition.name} = TypedDict({py_str(definition.name)}, {{")
    lines += [f"    {py_str(f.key)}: {t},{c}" for f, t, c in zip(definition.fields, types, comments, strict=True)]
    lines.append("})" if total else "}, total=False)")
    return "\n".join(lines)


def _docstring_text(tool: Tool, parts: _Parts, max_description: int) -> str:
    sections = [_clean(tool.description, max_description)]
    if tool.name != tool.alias:
        sections.append(f"(original name: {tool.name})")
    if parts.schema_note:
        sections.append(f"Arguments must also satisfy (JSON Schema): {parts.schema_note}")
    args = [_indent_entry(f"{p.name}: {p.doc}") for p in parts.params if p.doc]
    if args:
        sections.append("Args:\n" + "\n".join(args))
    description = as_schema(tool.returns).get("description")
    if isinstance(description, str) and description.strip():
        sections.append("Returns:\n" + _indent_entry(_clean(description, _MAX_PARAM_DESCRIPTION)))
    return "\n\n".join(section for section in sections if section)


def _indent_entry(text: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([f"    {first}", *(f"        {line}" for line in rest if line.strip())])


def _clean(text: str, limit: int) -> str:
    """Normalise newlines and indentation, drop blank-line runs, and cut at `limit` characters with a marker."""
    text = inspect.cleandoc(text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(4))
    text = re.sub(r"\n\s*\n\s*\n+", "\n\n", "\n".join(line.rstrip() for line in text.split("\n")))
    return cut_end(text, limit)


def _docstring_source(text: str, indent: str) -> str:
    """A triple-quoted docstring that reads as `text` and always parses (backslashes, quotes, non-printables)."""
    escaped = text.replace("\\", "\\\\")
    if "\n" not in escaped and escaped.endswith('"'):
        escaped = escaped[:-1] + '\\"'  # else it would run into the closing quotes
    escaped = printable(escaped.replace('"""', '\\"\\"\\"'))
    if "\n" not in escaped:
        return f'"""{escaped}"""'
    lines = [f"{indent}{line}" if line else "" for line in escaped.split("\n")]
    return '"""' + lines[0].lstrip() + "\n" + "\n".join(lines[1:]) + f"\n{indent}" + '"""'
