"""Watching one run's tool calls and searches as they happen, for progress events and tracing.

`Observer` wraps the run's `tools` namespace: each call and search is reported to the listeners when it starts
and when it ends. It records nothing itself: the end of a call carries the `ToolCall` the runtime recorded (the
one `ExecuteResult.calls` holds), and calls still in flight when the run stopped are ended from the run's final
record. A listener that raises is logged and skipped, so the model's run never sees a host callback fail.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Protocol

import anyio

from codemode.events import CallFinished, CallHeld, CallStarted
from codemode.run._helpers import HELPERS
from sandbox import FunctionError, Namespace

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from codemode.events import EventSink, ToolCall
    from codemode.run._runtime import ToolRuntime
    from sandbox import JsonText, JsonValue

logger = logging.getLogger("codemode.events")


class Listener(Protocol):
    """Told of each call and search of a run."""

    def call_started(self, event: CallStarted) -> None:
        """A tool call is about to run."""

    def call_finished(self, event: CallFinished) -> None:
        """A tool call ended, or was in flight when the run stopped."""

    def call_held(self, event: CallHeld) -> None:
        """A tool call was not made: the run paused for an approval."""

    def search_started(self, key: int, query: JsonValue) -> None:
        """`tools.search(query)` is about to run."""

    def search_finished(self, key: int, hits: int | None, error: str | None) -> None:
        """The search ended with `hits` results, or failed with `error`."""


class EventListener:
    """Passes call events to a user's `on_event` callback."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def call_started(self, event: CallStarted) -> None:
        """Forward the event."""
        self.sink(event)

    def call_finished(self, event: CallFinished) -> None:
        """Forward the event."""
        self.sink(event)

    def call_held(self, event: CallHeld) -> None:
        """Forward the event."""
        self.sink(event)

    def search_started(self, key: int, query: JsonValue) -> None:
        """Searches are not call events."""

    def search_finished(self, key: int, hits: int | None, error: str | None) -> None:
        """Searches are not call events."""


class Observer:
    """The `tools` namespace of one run, reporting each call and search to `listeners`."""

    def __init__(self, runtime: ToolRuntime, listeners: Sequence[Listener]) -> None:
        self.runtime = runtime
        self.listeners = tuple(listeners)
        self.started = time.monotonic()
        self._count = 0
        self._open: dict[int, tuple[str, dict[str, JsonValue]]] = {}
        self._claimed: set[int] = set()

    def namespace(self) -> Namespace:
        """What the model's code sees as `tools`."""
        return Namespace(self.resolve, names=self.runtime.names)

    def resolve(self, name: str) -> Callable[..., Awaitable[JsonValue | JsonText]]:
        """The runtime's function for `tools.<name>`, reporting as it runs."""
        function = self.runtime.resolve(name)
        if name in HELPERS:  # `search`, `describe`, `list`: helpers, not tool calls
            return self._searching(function) if name == "search" else function
        tool = self.runtime.catalog.get(name)
        tool_name = tool.name if tool is not None else name

        async def call(*args: JsonValue, **kwargs: JsonValue) -> JsonValue | JsonText:
            index = self._start(tool_name, kwargs)
            try:
                result = await function(*args, **kwargs)
            except anyio.get_cancelled_exc_class():
                raise  # in flight when the run stopped: ended by `finish`
            except FunctionError:
                self._end(index)
                raise
            self._end(index)
            return result

        return call

    def finish(self, calls: Sequence[ToolCall], *, paused: bool) -> None:
        """The run is over: end the calls still open with their in-flight records from `calls`.

        Calls with no record when the run `paused` for an approval were held, never made.
        """
        for index in sorted(self._open):
            record = self._record(index, [call for call in calls if call.in_flight])
            if record is not None:
                self._tell("call_finished", CallFinished(index=index, call=record, elapsed=self._elapsed()))
            elif paused:
                name, arguments = self._open[index]
                held = CallHeld(index=index, name=name, arguments=arguments, elapsed=self._elapsed())
                self._tell("call_held", held)
        self._open.clear()

    def _searching(
        self, function: Callable[..., Awaitable[JsonValue | JsonText]]
    ) -> Callable[..., Awaitable[JsonValue | JsonText]]:
        async def search(*args: JsonValue, **kwargs: JsonValue) -> JsonValue | JsonText:
            self._count += 1
            key = self._count
            self._tell("search_started", key, args[0] if args else kwargs.get("query"))
            try:
                found = await function(*args, **kwargs)
            except FunctionError as error:
                self._tell("search_finished", key, None, error.message)
                raise
            self._tell("search_finished", key, len(found) if isinstance(found, list) else None, None)
            return found

        return search

    def _start(self, name: str, arguments: dict[str, JsonValue]) -> int:
        self._count += 1
        self._open[self._count] = (name, arguments)
        self._tell(
            "call_started", CallStarted(index=self._count, name=name, arguments=arguments, elapsed=self._elapsed())
        )
        return self._count

    def _end(self, index: int) -> None:
        record = self._record(index, self.runtime.calls)
        if record is not None:
            del self._open[index]
            self._tell("call_finished", CallFinished(index=index, call=record, elapsed=self._elapsed()))

    def _record(self, index: int, calls: Sequence[ToolCall]) -> ToolCall | None:
        """The runtime's record of call `index`: the latest unclaimed one with its tool and arguments."""
        name, arguments = self._open[index]
        for call in reversed(calls):
            if id(call) not in self._claimed and call.name == name and call.arguments == arguments:
                self._claimed.add(id(call))
                return call
        return None

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _tell(self, method: str, *args: object) -> None:
        for listener in self.listeners:
            try:
                getattr(listener, method)(*args)
            except Exception:  # the host's own callback failed: its bug, logged; the model's run goes on
                logger.exception("a run-event listener failed in %s", method)
