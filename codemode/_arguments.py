"""`Arguments`: a Python tool's keyword arguments as pydantic sees them: their JSON Schema and their conversion.

Apart from `codemode.tools` so that tools read from JSON (a JSONL file, an MCP server) never load pydantic:
only a tool made from a Python function does.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from pydantic import PydanticUserError, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ArgsKwargs, core_schema

from codemode._results import BYTES_NOTE
from codemode.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode.tools import Handler
    from sandbox import JsonObject, JsonValue


class Arguments:
    """The one owner of a Python tool's arguments: their JSON Schema, and their conversion to the handler's types.

    The types are the handler's annotations (pydantic models, dataclasses, TypedDicts, dates, Enums, Literals,
    unions, `Annotated` constraints). The schema the model sees and the conversion come from one pydantic
    `TypeAdapter` over the function's signature, so they cannot disagree.
    """

    def __init__(self, signature: inspect.Signature) -> None:
        def bind(**arguments: Any) -> dict[str, Any]:
            return arguments

        # A function with the handler's parameters that returns them converted: pydantic's call validation
        # without calling the handler, so a value that does not convert never reaches it.
        bind.__signature__ = signature.replace(return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]  # read by inspect.signature
        bind.__annotations__ = {
            name: param.annotation
            for name, param in signature.parameters.items()
            if param.annotation is not param.empty
        }
        target: Any = bind  # pydantic builds a call schema from a function, which its type stubs do not spell
        self._adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(target)
        self._open = any(param.kind == param.VAR_KEYWORD for param in signature.parameters.values())

    def json_schema(self) -> JsonObject:
        """The JSON Schema of the keyword arguments (`**kwargs` of any type, `Any` too, takes keys beyond them)."""
        schema = self._adapter.json_schema(schema_generator=_ToolSchemaGenerator)
        if self._open and "additionalProperties" not in schema:  # pydantic writes nothing for `**kwargs: Any`
            schema["additionalProperties"] = True
        return schema

    def convert(self, arguments: Mapping[str, JsonValue]) -> dict[str, Any]:
        """The arguments as the handler's types, defaults filled in.

        Raises:
            pydantic.ValidationError: A value does not convert (`loc` names the parameter and the path in it).
        """
        return self._adapter.validate_python(ArgsKwargs((), dict(arguments)))


def function_schemas(fn: Handler, *, tool_name: str) -> tuple[Arguments, JsonObject, JsonObject | None]:
    """The owner of a function's keyword arguments, their JSON Schema, and that of its result (`None` if unknown).

    Raises:
        CatalogError: A parameter cannot be passed by keyword, or a type hint has no JSON Schema.
    """
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, TypeError, ValueError) as e:
        raise CatalogError(
            f"Cannot read the type hints of tool {tool_name!r}: {e}. Type hints must name types that the "
            "function's module defines or imports."
        ) from e
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.VAR_POSITIONAL):
            shown = f"*{param.name}" if param.kind == param.VAR_POSITIONAL else param.name
            raise CatalogError(
                f"Tool {tool_name!r} has the parameter `{shown}`, which cannot be passed by keyword; tools are "
                "called with keyword arguments only, so make every parameter a keyword parameter."
            )
    try:
        arguments = Arguments(signature)
        parameters = arguments.json_schema()
        returns = _returns_schema(signature.return_annotation)
    except (PydanticUserError, NameError) as e:  # NameError: a type hint names something undefined
        raise CatalogError(f"Cannot make a JSON Schema for tool {tool_name!r}: {e}") from e
    return arguments, parameters, returns


def _returns_schema(annotation: Any) -> JsonObject | None:
    if annotation in (inspect.Signature.empty, None, type(None), Any):
        return None
    return TypeAdapter(annotation).json_schema(mode="serialization", schema_generator=_ToolSchemaGenerator)


class _ToolSchemaGenerator(GenerateJsonSchema):
    """Pydantic's schema generator, with the few changes a tool's schemas need.

    No `title` derived from each field name (noise for a model); the arguments' models, dataclasses and TypedDicts
    closed (a misspelt key is refused, where pydantic would drop it); a result's bytes described as the code gets them.
    """

    def field_title_should_be_set(self, schema: object) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return self._closed(super().model_schema(schema))

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return self._closed(super().dataclass_schema(schema))

    def typed_dict_schema(self, schema: core_schema.TypedDictSchema) -> JsonSchemaValue:
        return self._closed(super().typed_dict_schema(schema))

    def _closed(self, json_schema: JsonSchemaValue) -> JsonSchemaValue:
        """No keys beyond the fields, unless the class allows them (`extra="allow"` wrote `additionalProperties`)."""
        target = self.resolve_ref_schema(json_schema)
        if self.mode == "validation" and target.get("type") == "object" and "additionalProperties" not in target:
            target["additionalProperties"] = False
        return json_schema

    def bytes_schema(self, schema: core_schema.BytesSchema) -> JsonSchemaValue:
        json_schema = super().bytes_schema(schema)
        if self.mode == "serialization":  # a str to the code, whose `format: binary` would mislead
            json_schema.pop("format", None)
            json_schema["description"] = BYTES_NOTE
        return json_schema
