"""Adapters that put the one `code` tool into other agent frameworks, each an optional extra.

`codemode.integrations.pydantic_ai`, `.openai_agents`, `.langchain` and `.smolagents` each import their framework
at their top; this package imports none of them, so `import codemode.integrations` costs nothing. What they share
lives here: `tool_output` (the text a framework hands back as the tool result: the run's text, then the
announcement, so discoveries reach the model through the history the framework already keeps, and the tool list
never changes), `texts_of` (message texts, to rebuild a `DiscoveryState` from that history), and
`BlockingCodeMode`, the sync edge for frameworks that call tools from sync code.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Self

import anyio.from_thread
import anyio.to_thread

if TYPE_CHECKING:
    from types import TracebackType

    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.code_tool import CodeTool
    from codemode.discovery import DiscoveryState

__all__ = ["MISSING_CODE", "BlockingCodeMode", "code_argument", "texts_of", "tool_output"]


def tool_output(result: ExecuteResult) -> str:
    """The tool result for the model: the run's text, then the announcement of new tools (if any)."""
    if result.announcement is None:
        return result.text
    return f"{result.text}\n\n{result.announcement}"


def texts_of(items: Iterable[Any]) -> list[str]:
    """Every string found in a framework's message history (nested dicts, lists, objects with `content`).

    Only the announcements' marker lines matter to `DiscoveryState.from_history`, so a broad walk is enough and
    keeps each adapter free of its framework's message classes.
    """
    texts: list[str] = []
    stack: list[Any] = list(items)[::-1]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif hasattr(item, "parts"):  # a pydantic-ai message
            stack.extend(reversed(list(item.parts)))
        elif hasattr(item, "content"):
            stack.append(item.content)
    return texts


def code_argument(arguments: str | Mapping[str, Any]) -> str | None:
    """The `code` string of a tool call's arguments (a JSON text or a mapping), or None if it has none."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, Mapping):
        return None
    code = arguments.get("code")
    return code if isinstance(code, str) else None


MISSING_CODE = 'Error: call `code` with one argument, `{"code": "<Python source>"}`.'
"""The tool result when a call carries no `code` string."""


class BlockingCodeMode:
    """A `CodeMode` driven from sync code: a dedicated event-loop thread enters it, runs `execute`, and closes it.

    The sandbox's worker pool belongs to the event loop that entered it, so sync callers (and async callers on
    other loops) all go through this one thread. Do not enter `code_mode` yourself.

    Example:
        ```python
        with BlockingCodeMode(CodeMode(catalog)) as blocking:
            state = blocking.new_state()
            print(blocking.execute('return await tools.search("weather")', state).text)
        ```
    """

    def __init__(self, code_mode: CodeMode) -> None:
        self.code_mode = code_mode
        self._lock = threading.Lock()
        with ExitStack() as stack:
            self._portal = stack.enter_context(anyio.from_thread.start_blocking_portal())
            # One task enters and exits the `CodeMode`: its worker pool's task group must close where it opened.
            stack.enter_context(self._portal.wrap_async_context_manager(code_mode))
            self._stack = stack.pop_all()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether `close` has run."""
        return self._closed

    @property
    def tool(self) -> CodeTool:
        """The `code` tool of the `CodeMode`."""
        return self.code_mode.tool

    def new_state(self) -> DiscoveryState:
        """A fresh discovery state, for a new conversation."""
        return self.code_mode.new_state()

    def execute(self, code: str, state: DiscoveryState) -> ExecuteResult:
        """Run the model's code from sync code; blocks until the run ends."""
        if self._closed:
            raise RuntimeError("this `BlockingCodeMode` is closed; make a new one")
        return self._portal.call(self.code_mode.execute, code, state)

    async def aexecute(self, code: str, state: DiscoveryState) -> ExecuteResult:
        """Run the model's code from another event loop, without blocking it."""
        return await anyio.to_thread.run_sync(self.execute, code, state)

    def resume(self, state: DiscoveryState, *, approved: bool, reason: str | None = None) -> ExecuteResult:
        """`CodeMode.resume` from sync code: continue the run `state` paused, with a person's decision."""
        if self._closed:
            raise RuntimeError("this `BlockingCodeMode` is closed; make a new one")
        return self._portal.call(functools.partial(self.code_mode.resume, state, approved=approved, reason=reason))

    async def aresume(self, state: DiscoveryState, *, approved: bool, reason: str | None = None) -> ExecuteResult:
        """`resume` from another event loop, without blocking it."""
        return await anyio.to_thread.run_sync(functools.partial(self.resume, state, approved=approved, reason=reason))

    def close(self) -> None:
        """Close the `CodeMode` and stop the event-loop thread; later calls do nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
