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
    from sandbox import JsonValue


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call a run made (also `codemode.ToolCall`)."""

    name: str
    """The tool's original name."""
    arguments: dict[str, JsonValue]
    """The arguments as the model passed them."""
    duration: float
    """Seconds the call took."""
    ok: bool
    """Whether it returned a result."""
    error: str | None = None
    """The message the model saw, when it failed."""
    in_flight: bool = False
    """Cut off before it answered: still running when the run stopped (a timeout, a crash, a cancellation), past
    its `ToolLimits` timeout, or failed with a `CutOffError` (an MCP call's timeout or lost connection, an HTTP
    request that changes data and timed out). It may have taken effect."""
    result: JsonValue = None
    """What the code got, when it succeeded (after any `after` hook's replacement)."""
    replayed: bool = False
    """Whether the result came from an approval record rather than the handler (a resumed run)."""


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
