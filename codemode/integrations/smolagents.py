"""`CodeModeTool`: the one `code` tool as a smolagents `Tool` (the `smolagents` extra).

For a `ToolCallingAgent`: the model calls `code` with Python that searches and calls the catalog's tools.
smolagents calls tools from sync code (and from a thread pool for parallel calls), so `forward` hands the code to
a `BlockingCodeMode`: a dedicated event-loop thread that owns the `CodeMode`. Announcements go in the tool result,
after the run's text.

Discovery state is per tool instance, one conversation: smolagents gives a tool neither the run nor the memory.
`agent.run(task)` starts a new memory by default (`reset=True`), so call `tool.reset()` with it; with
`reset=False` keep the state. A stale state only means a tool is not announced again: the model can still
`tools.describe` it.

The description is `code_mode.tool`'s, byte for byte. The parameters are smolagents' own rendering of `inputs`
(`get_tool_json_schema`): the same properties and `required` as `code_mode.tool.input_schema`, without its
`additionalProperties: false`, which smolagents' format cannot carry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from codemode.integrations import BlockingCodeMode, tool_output
from codemode.integrations._approvals import cannot_ask

try:
    from smolagents import Tool  # type: ignore[import-untyped]  # smolagents ships no type information
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `smolagents` extra: pip install "codemode[smolagents]"') from e

if TYPE_CHECKING:
    from types import TracebackType

    from codemode.code_mode import CodeMode
    from codemode.discovery import DiscoveryState
    from sandbox import JsonObject

__all__ = ["CodeModeTool"]


def _inputs(input_schema: JsonObject) -> dict[str, dict[str, Any]]:
    """The smolagents `inputs` for a JSON Schema of string properties: `{name: {"type", "description"}}`."""
    properties = input_schema.get("properties")
    assert isinstance(properties, dict)
    inputs: dict[str, dict[str, Any]] = {}
    for name, schema in properties.items():
        assert isinstance(schema, dict)
        inputs[name] = {"type": schema["type"], "description": schema.get("description", "")}
    return inputs


class CodeModeTool(Tool):  # type: ignore[misc]  # `Tool` is untyped (see the import)
    """The `code` tool of a `CodeMode`, for `ToolCallingAgent(tools=[...])`.

    Args:
        code_mode: A `CodeMode` (not entered: the tool enters it in its own event-loop thread, and `close`
            closes it), or a `BlockingCodeMode` to share (closed by whoever made it).
        state: The discovery state to start from (default: a fresh one).

    Example:
        ```python
        with CodeModeTool(CodeMode(catalog)) as tool:
            agent = ToolCallingAgent(tools=[tool], model=InferenceClientModel())
            agent.run("Which Berlin customers have overdue invoices?")
        ```
    """

    name = "code"
    description = "Run Python to find and use tools."
    inputs: dict[str, dict[str, Any]] = {"code": {"type": "string", "description": "Python source to run."}}  # noqa: RUF012 - smolagents' class attribute
    output_type = "string"

    def __init__(self, code_mode: CodeMode | BlockingCodeMode, *, state: DiscoveryState | None = None) -> None:
        self._owns = not isinstance(code_mode, BlockingCodeMode)
        self._blocking = code_mode if isinstance(code_mode, BlockingCodeMode) else BlockingCodeMode(code_mode)
        tool = self._blocking.tool
        self.name = tool.name
        self.description = tool.description
        self.inputs = _inputs(tool.input_schema)
        self.state = state if state is not None else self._blocking.new_state()
        """What this conversation has been shown."""
        super().__init__()

    def forward(self, code: str) -> str:
        """Run the model's code; the result text ends with the announcement of any newly discovered tools.

        smolagents has no way to pause a run for a person, so a call that needs approval is not made, and the
        model reads so.
        """
        result = self._blocking.execute(code, self.state)
        if result.pending is not None:
            return cannot_ask(result.pending, "smolagents runs this tool")
        return tool_output(result)

    def reset(self) -> None:
        """Start a new conversation: forget what was announced."""
        self.state = self._blocking.new_state()

    def close(self) -> None:
        """Close the `CodeMode` and its event-loop thread, if this tool made them."""
        if self._owns:
            self._blocking.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
