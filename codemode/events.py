"""Progress of one `execute` while it runs: an event when each tool call starts, and when it ends.

`CodeMode.execute(code, state, on_event=...)` calls the callback with these as they happen, so a long run can
be shown live (`codemode chat` does, for runs over about a second). The end of a call carries the same
`ToolCall` record that `ExecuteResult.calls` holds; a call still in flight when the run stopped ends with a
record marked `in_flight`. A call the run stopped before making, because it (or another) waits for a person's
approval, ends with `CallHeld` instead: it has no record, and `ExecuteResult.pending` says what waits.

Example:
    ```python
    def show(event: RunEvent) -> None:
        if isinstance(event, CallStarted):
            print(f"-> {event.name}")
        elif isinstance(event, CallFinished):
            print(f"<- {event.call.name} {'ok' if event.call.ok else 'failed'} in {event.call.duration:.2f}s")

    result = await cm.execute(code, state, on_event=show)
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from codemode._json import JsonValue
    from codemode._runtime import ToolCall


@dataclass(frozen=True, kw_only=True)
class CallStarted:
    """A tool call is about to run."""

    index: int
    """The call's number in this run, from 1, in the order calls started."""
    name: str
    """The tool's original name."""
    arguments: dict[str, JsonValue]
    """The arguments as the model passed them."""
    elapsed: float
    """Seconds since the run started."""


@dataclass(frozen=True, kw_only=True)
class CallFinished:
    """A tool call ended (or was still in flight when the run stopped)."""

    index: int
    """The number its `CallStarted` had."""
    call: ToolCall
    """The call's record, as in `ExecuteResult.calls`."""
    elapsed: float
    """Seconds since the run started."""


@dataclass(frozen=True, kw_only=True)
class CallHeld:
    """A tool call that was not made: the run paused for a person's approval (`ExecuteResult.pending`)."""

    index: int
    """The number its `CallStarted` had."""
    name: str
    """The tool's original name."""
    arguments: dict[str, JsonValue]
    """The arguments as the model passed them."""
    elapsed: float
    """Seconds since the run started."""


RunEvent: TypeAlias = CallStarted | CallFinished | CallHeld
"""What `on_event` receives."""

EventSink: TypeAlias = Callable[[RunEvent], None]
"""A callback for run events; it runs on the event loop, so it must return quickly."""
