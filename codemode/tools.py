"""`Tool`: one definition in a catalog, as the model and the host see it.

A tool has its original `name` (what the host or MCP server calls it), a portable `alias` that is a Python
identifier (what the model writes after `tools.`), a description, a JSON Schema for its arguments, an
optional output schema, and an optional handler. `tool_from_function` builds one from a function's type
hints (with pydantic) and docstring.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codemode._docstrings import parse_docstring
from codemode._naming import portable_alias
from codemode.errors import CatalogError

if TYPE_CHECKING:
    from codemode._arguments import Arguments as Arguments  # noqa: PLC0414  # re-exported: `Tool.arguments`' type
    from codemode.policy import ApprovalRule, ToolLimits
    from sandbox import JsonObject

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
    from codemode._arguments import function_schemas  # pydantic, loaded by the first Python tool, not by JSONL ones

    doc = parse_docstring(_docstring(fn))
    arguments, parameters, returns = function_schemas(fn, tool_name=tool_name)
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


def _docstring(fn: Handler) -> str | None:
    """The docstring that describes calling `fn`: a partial's function's, a callable object's `__call__`'s."""
    while isinstance(fn, functools.partial):
        fn = fn.func  # `partial`'s own docstring describes `partial`
    if inspect.isroutine(fn) or isinstance(fn, type):
        return inspect.getdoc(fn)
    own = getattr(inspect.getattr_static(type(fn), "__call__", None), "__doc__", None)  # never an inherited one
    return inspect.cleandoc(own) if isinstance(own, str) else inspect.getdoc(type(fn))


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
