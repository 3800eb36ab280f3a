"""`CodeModeToolset`: the one `code` tool as a pydantic-ai toolset (the `pydantic-ai` extra).

Announcements go in the tool result, after the run's text. pydantic-ai's prefix-stable mechanism for changing
context (`InstructionPart(on_change="append")`) appends the *whole* changed instruction block each time it
changes, so a growing list of stubs would be resent in full at every discovery; the tool result carries each stub
once, in the history pydantic-ai already keeps.

Discovery state is per agent run, rebuilt at the run's first `code` call from the run's messages (which include
any `message_history` passed in), so a conversation continued over several runs, processes or stores never
re-announces a tool, and concurrent runs of one agent never share state.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

import anyio

from codemode.integrations import MISSING_CODE, texts_of, tool_output

try:
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `pydantic-ai` extra: pip install "codemode[pydantic-ai]"') from e

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from codemode.code_mode import CodeMode
    from codemode.discovery import DiscoveryState

__all__ = ["CodeModeToolset"]

_ARGS_VALIDATOR = SchemaValidator(
    core_schema.typed_dict_schema(
        {"code": core_schema.typed_dict_field(core_schema.str_schema())}, extra_behavior="forbid"
    )
)


@dataclass
class _Lifecycle:
    """How many runs have entered an owned `CodeMode`; shared by a toolset and its per-run copies."""

    entered: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)


class CodeModeToolset(AbstractToolset[Any]):
    """The `code` tool of a `CodeMode`, for `Agent(toolsets=[...])`.

    Its definition is `code_mode.tool`, byte for byte, in every request of every run.

    Args:
        code_mode: The `CodeMode` to run code with. Enter it yourself (`async with code_mode:`), or pass
            `own=True` to have the toolset enter it when pydantic-ai enters the toolset (at each run, or once
            for many runs under `async with agent:`) and close it when the last one exits.
        own: Whether the toolset enters and closes `code_mode`.
        id: The toolset's id, unique among the agent's toolsets.
        max_retries: Retries pydantic-ai allows when the model's arguments do not validate.

    Example:
        ```python
        async with CodeMode(catalog) as cm:
            agent = Agent("anthropic:claude-sonnet-4-5", toolsets=[CodeModeToolset(cm)])
            result = await agent.run("Which Berlin customers have overdue invoices?")
        ```
    """

    def __init__(self, code_mode: CodeMode, *, own: bool = False, id: str = "codemode", max_retries: int = 1) -> None:
        self.code_mode = code_mode
        self.own = own
        self.max_retries = max_retries
        self._id = id
        self._lifecycle = _Lifecycle()
        self._state: DiscoveryState | None = None

    @property
    def id(self) -> str:
        """The toolset's id."""
        return self._id

    async def for_run(self, ctx: RunContext[Any]) -> Self:
        """A copy with its own discovery state for this run."""
        run = copy.copy(self)
        run._state = None
        return run

    async def __aenter__(self) -> Self:
        if self.own:
            async with self._lifecycle.lock:
                if self._lifecycle.entered == 0:
                    await self.code_mode.__aenter__()
                self._lifecycle.entered += 1
        return self

    async def __aexit__(self, *args: object) -> bool | None:
        if self.own:
            async with self._lifecycle.lock:
                self._lifecycle.entered -= 1
                if self._lifecycle.entered == 0:
                    await self.code_mode.aclose()
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The `code` tool, as `code_mode.tool` defines it."""
        tool = self.code_mode.tool
        definition = ToolDefinition(
            name=tool.name, description=tool.description, parameters_json_schema=copy.deepcopy(tool.input_schema)
        )
        return {
            tool.name: ToolsetTool(
                toolset=self, tool_def=definition, max_retries=self.max_retries, args_validator=_ARGS_VALIDATOR
            )
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        """Run the model's code; the result text ends with the announcement of any newly discovered tools."""
        code = tool_args.get("code")
        if not isinstance(code, str):
            return MISSING_CODE
        if self._state is None:
            self._state = self.code_mode.state_from_history(texts_of(ctx.messages))
        return tool_output(await self.code_mode.execute(code, self._state))
