"""`code_tool`: the one `code` tool as an OpenAI Agents SDK `FunctionTool` (the `openai-agents` extra).

Announcements go in the tool result (a `function_call_output` item), after the run's text: the SDK has no
mid-conversation system message, and the tool result is content the SDK already replays in every later request.

Discovery state is per agent run: at a run's first `code` call it is rebuilt from the run's input (the
conversation so far, which carries every earlier announcement), so a conversation continued with
`result.to_input_list()`, a session, or a stored history never re-announces a tool, and concurrent runs sharing
one tool never share state. The run is recognised by its `RunContextWrapper.usage`, one object per run that every
`ToolContext` of the run shares.
"""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from codemode.integrations import MISSING_CODE, code_argument, texts_of, tool_output

try:
    from agents import FunctionTool
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `openai-agents` extra: pip install "codemode[openai-agents]"') from e

if TYPE_CHECKING:
    from agents import ToolContext

    from codemode.code_mode import CodeMode
    from codemode.discovery import DiscoveryState

__all__ = ["code_tool"]


class _RunStates:
    """Discovery state per agent run, keyed by the identity of the run's `usage` and dropped with it."""

    def __init__(self, code_mode: CodeMode) -> None:
        self._code_mode = code_mode
        self._states: dict[int, DiscoveryState] = {}

    def get(self, ctx: ToolContext[Any]) -> DiscoveryState:
        run = ctx.usage  # a mutable dataclass: unhashable, so keyed by id and dropped by a finalizer
        state = self._states.get(id(run))
        if state is None:
            state = self._code_mode.state_from_history(texts_of(ctx.turn_input))
            self._states[id(run)] = state
            weakref.finalize(run, self._states.pop, id(run), None)
        return state


def code_tool(code_mode: CodeMode) -> FunctionTool:
    """The `code` tool of `code_mode`, for `Agent(tools=[...])`; enter `code_mode` yourself (`async with`).

    Its name, description and parameters schema are `code_mode.tool`'s, byte for byte (the schema is already
    strict, so the SDK's strict mode leaves it as it is).

    Example:
        ```python
        async with CodeMode(catalog) as cm:
            agent = Agent(name="assistant", tools=[code_tool(cm)])
            result = await Runner.run(agent, "Which Berlin customers have overdue invoices?")
        ```
    """
    states = _RunStates(code_mode)

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        code = code_argument(arguments)
        if code is None:
            return MISSING_CODE
        return tool_output(await code_mode.execute(code, states.get(ctx)))

    tool = code_mode.tool
    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=copy.deepcopy(tool.input_schema),
        on_invoke_tool=invoke,
        strict_json_schema=True,
    )
