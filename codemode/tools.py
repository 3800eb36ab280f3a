"""`Tool`: one definition in a catalog, as the model and the host see it.

A tool has its original `name` (what the host or MCP server calls it), a portable `alias` that is a Python
identifier (what the model writes after `tools.`), a description, a JSON Schema for its arguments, an
optional output schema, and an optional handler. `tool_from_function` builds one from a function's type
hints (with pydantic) and docstring.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import PydanticUserError, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import ArgsKwargs

from codemode._docstrings import parse_docstring
from codemode._naming import portable_alias
from codemode.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode._json import JsonObject, JsonValue
    from codemode.policy import ApprovalRule, ToolLimits

Handler = Callable[..., Any | Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool definition in a catalog."""

    name: str
    """The original name, used by the host (and MCP) to call the tool."""
    alias: str = ""
    """A Python identifier the model uses: `tools.<alias>(...)`; by default the name's portable alias."""
    description: str
    """What the tool does, for the model."""
    parameters: JsonObject
    """JSON Schema of the keyword arguments (an object schema)."""
    returns: JsonObject | None = None
    """JSON Schema of the result, if known."""
    handler: Handler | None = None
    """The callable that runs the tool; `None` for definitions loaded without one."""
    deferred: bool = True
    """Deferred tools are found through search; others are described in the `code` tool itself."""
    approval: ApprovalRule = False
    """Whether a call needs a person's approval: always (`True`), or when a rule on its arguments says so."""
    limits: ToolLimits | None = None
    """Timeout, calls in flight and rate for this tool's calls."""
    arguments: Arguments | None = field(default=None, compare=False, repr=False)
    """For a Python function's tool: converts validated JSON arguments to the handler's annotated types."""

    def __post_init__(self) -> None:
        if not self.alias:
            object.__setattr__(self, "alias", portable_alias(self.name))  # frozen: set once, while being made


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

    def json_schema(self) -> JsonObject:
        """The JSON Schema of the keyword arguments."""
        return self._adapter.json_schema(schema_generator=_ToolSchemaGenerator)

    def convert(self, arguments: Mapping[str, JsonValue]) -> dict[str, Any]:
        """The arguments as the handler's types, defaults filled in.

        Raises:
            pydantic.ValidationError: A value does not convert (`loc` names the parameter and the path in it).
        """
        return self._adapter.validate_python(ArgsKwargs((), dict(arguments)))


def tool_from_function(
    fn: Handler,
    *,
    name: str | None = None,
    description: str | None = None,
    deferred: bool = True,
    approval: ApprovalRule = False,
    limits: ToolLimits | None = None,
) -> Tool:
    """Make a tool from a sync or async function: its schema from the type hints, its docs from the docstring.

    Parameter descriptions come from `Annotated[..., Field(description=...)]` first, then from the docstring's
    `Args:` (Google) or `Parameters` (NumPy) section. The output schema comes from the return annotation; it is
    `None` when there is none, or when it is `None` or `Any`.

    Args:
        fn: The function; every parameter must be passable by keyword.
        name: The tool's name; defaults to the function's `__name__`.
        description: Replaces the description taken from the docstring.
        deferred: Whether the tool is found through search rather than described up front.
        approval: Whether a call needs a person's approval: `True`, or a rule on the validated arguments.
        limits: Timeout, calls in flight and rate for the tool's calls.

    Raises:
        CatalogError: The function takes positional-only or variadic parameters, or a type hint has no schema.

    Example:
        ```python
        async def get_weather(city: str) -> dict[str, float]:
            \"\"\"Get the weather forecast for a city.\"\"\"


        tool = tool_from_function(get_weather)
        tool.parameters  # {'type': 'object', 'properties': {'city': {'type': 'string'}}, ...}
        ```
    """
    tool_name = name if name is not None else getattr(fn, "__name__", None)
    if not tool_name:
        raise CatalogError(f"Cannot name the tool for {fn!r}: pass `name=...`.")
    doc = parse_docstring(inspect.getdoc(fn))
    arguments, parameters, returns = _function_schemas(fn, tool_name=tool_name)
    _document_parameters(parameters, doc.params)
    summary = doc.description if description is None else description
    if doc.returns and returns is not None:
        returns = _with_description(returns, doc.returns)  # says more than the docstring of the result's type
    elif doc.returns and description is None:
        summary = f"{summary}\n\nReturns: {doc.returns}".strip()
    return Tool(
        name=tool_name,
        description=summary,
        parameters=parameters,
        returns=returns,
        handler=fn,
        deferred=deferred,
        approval=approval,
        limits=limits,
        arguments=arguments,
    )


def _function_schemas(fn: Handler, *, tool_name: str) -> tuple[Arguments, JsonObject, JsonObject | None]:
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


def _document_parameters(parameters: JsonObject, docs: dict[str, str]) -> None:
    """Add docstring descriptions to the properties that have none of their own (from `Field`)."""
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return
    for param_name, text in docs.items():
        prop = properties.get(param_name)
        if isinstance(prop, dict) and "description" not in prop:
            properties[param_name] = _with_description(prop, text)


def _with_description(schema: JsonObject, text: str) -> JsonObject:
    """A copy of `schema` with a description, keys sorted as pydantic sorts them."""
    return dict(sorted({**schema, "description": text}.items()))


class _ToolSchemaGenerator(GenerateJsonSchema):
    """Pydantic's schema generator without the `title` it derives from each field name (noise for a model)."""

    def field_title_should_be_set(self, schema: object) -> bool:
        return False
