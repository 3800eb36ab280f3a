"""`code_tool`: the one `code` tool as a LangChain `StructuredTool`, sync and async (the `langchain` extra).

Works with anything that binds LangChain tools: `model.bind_tools([...])`, LangGraph's `ToolNode` and prebuilt
agents. Announcements go in the tool result (the `ToolMessage` content), after the run's text.

Discovery state is per LangGraph thread (`config["configurable"]["thread_id"]`), so one tool serves many
conversations; without a thread id the tool keeps one state of its own (one tool per conversation). A tool only
sees its own call, not the history, so a thread resumed in a new process announces its tools once more.

Sync and async: from a `CodeMode` you entered (`async with`), `ainvoke` runs in your event loop, and `invoke`
works only from a worker thread of that loop (`anyio.to_thread.run_sync`). From a `BlockingCodeMode`, both work
anywhere: the code runs in its own event-loop thread.

Approvals: inside a LangGraph graph (with a checkpointer), a run that stops at a call needing approval calls
LangGraph's `interrupt` (`codemode.integrations.langgraph`, imported only then), and `Command(resume=...)`
continues it. Outside a graph no one can be asked: the call is not made, and the model reads so.
"""

from __future__ import annotations

import copy
import functools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import anyio.from_thread

from codemode.integrations import MISSING_CODE, BlockingCodeMode, code_argument, tool_output
from codemode.integrations._approvals import cannot_ask, execute, paused_data, record_of, resume_paused

try:
    from langchain_core.runnables import RunnableConfig  # noqa: TC002 - LangChain finds the `config` parameter by its evaluated annotation
    from langchain_core.tools import StructuredTool
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `langchain` extra: pip install "codemode[langchain]"') from e

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.discovery import DiscoveryState

__all__ = ["code_tool"]

MAX_THREADS = 10_000
"""Threads whose discovery state a tool keeps; the least recent is dropped first (it re-announces, no harm)."""


class _ThreadStates:
    """Discovery state per LangGraph thread id, with one state for calls that carry none."""

    def __init__(self, code_mode: CodeMode | BlockingCodeMode, state: DiscoveryState | None) -> None:
        self._default = state if state is not None else code_mode.new_state()
        self._new_state = code_mode.new_state
        self._threads: OrderedDict[str, DiscoveryState] = OrderedDict()

    def get(self, config: RunnableConfig | None) -> DiscoveryState:
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        if thread is None:
            return self._default
        key = str(thread)
        if key not in self._threads:
            self._threads[key] = self._new_state()
            if len(self._threads) > MAX_THREADS:
                self._threads.popitem(last=False)
        self._threads.move_to_end(key)
        return self._threads[key]


def _in_loop_thread(function: Callable[..., Any], *args: object) -> ExecuteResult:
    """`function(*args)` (an `execute` or `resume`) from a worker thread of the event loop that entered it."""
    try:
        anyio.from_thread.run_sync(lambda: None)
    except RuntimeError as e:
        raise RuntimeError(
            "this `code` tool runs in the event loop that entered its `CodeMode`: call `ainvoke`, or build it from "
            "`BlockingCodeMode(code_mode)` to call `invoke` from sync code"
        ) from e
    result: ExecuteResult = anyio.from_thread.run(function, *args)
    return result


@functools.cache
def _langgraph() -> ModuleType | None:
    """`codemode.integrations.langgraph`, or None without the `langgraph` extra."""
    try:
        from codemode.integrations import langgraph  # the `langgraph` extra, imported on the first call
    except ImportError:
        return None
    return langgraph


def _graph() -> ModuleType | None:
    """The LangGraph approval module when this call runs inside a graph, else None."""
    graph = _langgraph()
    return graph if graph is not None and graph.in_graph() else None


def _finish(result: ExecuteResult, state: DiscoveryState, graph: ModuleType | None) -> str:
    if result.pending is None:
        return tool_output(result)
    if graph is not None:
        graph.ask(paused_data(result, state))
    return cannot_ask(result.pending, "this tool runs outside a LangGraph graph")


def code_tool(code_mode: CodeMode | BlockingCodeMode, *, state: DiscoveryState | None = None) -> StructuredTool:
    """The `code` tool as a `StructuredTool`; its name, description and args schema are `code_mode.tool`'s.

    Args:
        code_mode: A `CodeMode` you enter yourself (`async with`), for async use, or a `BlockingCodeMode`,
            for sync and async use (close it when done).
        state: The discovery state of calls without a LangGraph thread id (default: a fresh one).

    Example:
        ```python
        async with CodeMode(catalog) as cm:
            tool = code_tool(cm)
            model = ChatAnthropic(model="claude-sonnet-4-5").bind_tools([tool])
            reply = await model.ainvoke("Which Berlin customers have overdue invoices?")
            messages = [await tool.ainvoke(call) for call in reply.tool_calls]
        ```
    """
    states = _ThreadStates(code_mode, state)
    if isinstance(code_mode, BlockingCodeMode):
        blocking = code_mode
        sync_execute: Callable[[str, DiscoveryState], ExecuteResult] = blocking.execute
        sync_resume: Callable[..., ExecuteResult] = blocking.resume
    else:
        async_mode = code_mode
        sync_execute = functools.partial(_in_loop_thread, async_mode.execute)

        def sync_resume(state: DiscoveryState, *, approved: bool, reason: str | None) -> ExecuteResult:
            return _in_loop_thread(functools.partial(async_mode.resume, state, approved=approved, reason=reason))

    def run(config: RunnableConfig, **arguments: Any) -> str:
        code = code_argument(arguments)
        if code is None:
            return MISSING_CODE
        state, graph = states.get(config), _graph()
        decided = graph.latest_decision() if graph is not None else None
        if decided is None:
            result = sync_execute(code, state)
        else:
            state.approval = record_of(decided[2])
            result = sync_resume(state, approved=decided[0], reason=decided[1])
        return _finish(result, state, graph)

    async def arun(config: RunnableConfig, **arguments: Any) -> str:
        code = code_argument(arguments)
        if code is None:
            return MISSING_CODE
        state, graph = states.get(config), _graph()
        decided = graph.latest_decision() if graph is not None else None
        if decided is None:
            result = await execute(code_mode, code, state)
        else:
            result = await resume_paused(code_mode, state, decided[2], approved=decided[0], reason=decided[1])
        return _finish(result, state, graph)

    definition = code_mode.tool
    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=definition.name,
        description=definition.description,
        args_schema=copy.deepcopy(definition.input_schema),
        infer_schema=False,
    )
