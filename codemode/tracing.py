"""OpenTelemetry spans for code mode: one per `execute`, with a child per tool call, search and approval wait.

Needs only `opentelemetry-api` (the `otel` extra); you bring the SDK and exporters (or Logfire), so spans go
wherever your other spans go. The span of an `execute` is a child of the caller's current span, so a
pydantic-ai or Logfire user sees code-mode spans nested in the agent's. Tool arguments and results are not
recorded unless you opt in: they are your users' data.

Example:
    ```python
    from codemode.tracing import Tracing

    cm = CodeMode(catalog, tracing=Tracing(record_arguments=True))  # or tracing=True for the defaults
    ```

Spans and attributes:

- `codemode execute`: `codemode.code` (unless `record_code=False`), `codemode.ok`, `codemode.error.kind`,
  `codemode.calls`, `codemode.announced` (tools newly announced), `codemode.approval.pending` (the tool a
  paused run waits on), `enduser.id` (the authenticated caller's subject, when a server knows it) and
  `codemode.approval.decided_by` (who decided, on a resumed run).
- `execute_tool {name}` (the GenAI semantic conventions' name): `gen_ai.operation.name`, `gen_ai.tool.name`,
  `codemode.tool.ok`, `codemode.tool.duration`, `codemode.tool.in_flight`, `codemode.tool.held` (not made: the
  run paused for approval), `error.type` on failure, and
  `gen_ai.tool.call.arguments` (JSON) with `record_arguments=True`.
- `codemode search`: `codemode.search.query`, `codemode.search.hits`.
- `codemode approval wait`: `gen_ai.tool.name`, `codemode.approval.approved`; see `approval_wait`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `otel` extra for tracing: pip install "codemode[otel]"') from error

from sandbox.limits import cut_end

if TYPE_CHECKING:
    from collections.abc import Iterator

    from codemode.code_mode import ExecuteResult
    from codemode.events import CallFinished, CallHeld, CallStarted
    from sandbox import JsonValue

INSTRUMENTATION: Final = "codemode"
"""The instrumentation scope name of every span."""
MAX_ATTRIBUTE: Final = 8_192
"""Characters of the code or of a call's arguments recorded in one attribute; more is cut with a marker."""
_ERROR_TYPE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")


@dataclass(frozen=True, kw_only=True)
class Tracing:
    """How `CodeMode` traces: which tracer provider, and what content goes into spans."""

    tracer_provider: trace.TracerProvider | None = None
    """Where spans go; None uses the global provider (`trace.set_tracer_provider`, or Logfire's)."""
    record_arguments: bool = False
    """Record each tool call's arguments (as JSON) on its span, and a failed call's error message as its status
    (error messages quote arguments often); without it the status says only the error's type."""
    record_code: bool = True
    """Record the model's code on the `execute` span (the code spells out any literal arguments it passes)."""

    @functools.cached_property
    def tracer(self) -> trace.Tracer:
        """The tracer spans are made with (made once; with the global provider it follows later changes)."""
        return trace.get_tracer(INSTRUMENTATION, tracer_provider=self.tracer_provider)


class RunTrace:
    """The spans of one `execute`: its own, current while the run lasts, and a child per call and search."""

    def __init__(self, tracing: Tracing, code: str) -> None:
        self.tracing = tracing
        self.tracer = tracing.tracer
        attributes = {"codemode.code": cut_end(code, MAX_ATTRIBUTE)} if tracing.record_code else {}
        self.span = self.tracer.start_span("codemode execute", attributes=attributes)  # parent: the caller's span
        self.context = trace.set_span_in_context(self.span)
        self._calls: dict[int, trace.Span] = {}
        self._searches: dict[int, trace.Span] = {}

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """Make the `execute` span current (for spans the tools themselves make), ending it on the way out."""
        token = otel_context.attach(self.context)
        try:
            yield
        finally:
            otel_context.detach(token)
            for span in (*self._calls.values(), *self._searches.values()):
                span.end()  # left open by a run that was cancelled
            self.span.end()

    def finish(self, result: ExecuteResult) -> None:
        """Describe the run's outcome on its span (ended by `current`)."""
        self.span.set_attribute("codemode.ok", result.ok)
        self.span.set_attribute("codemode.calls", len(result.calls))
        if result.caller is not None:  # OpenTelemetry's semantic convention for the authenticated user
            self.span.set_attribute("enduser.id", result.caller.subject)
        if result.decision is not None and result.decision.decided_by is not None:
            self.span.set_attribute("codemode.approval.decided_by", result.decision.decided_by)
        if result.pending is not None:
            self.span.set_attribute("codemode.approval.pending", result.pending.tool)
        if result.announced.new:
            self.span.set_attribute("codemode.announced", [name for name, _ in result.announced.new])
        if result.run.error is not None and result.pending is None:
            self.span.set_attribute("codemode.error.kind", result.run.error.kind)
            self.span.set_attribute("error.type", result.run.error.type_name or result.run.error.kind)
            self.span.set_status(trace.StatusCode.ERROR, result.run.error.message[:200])

    def call_started(self, event: CallStarted) -> None:
        """Open the call's span."""
        attributes: dict[str, str] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.name}
        if self.tracing.record_arguments:
            attributes["gen_ai.tool.call.arguments"] = cut_end(
                json.dumps(event.arguments, ensure_ascii=False), MAX_ATTRIBUTE
            )
        span = self.tracer.start_span(f"execute_tool {event.name}", context=self.context, attributes=attributes)
        self._calls[event.index] = span

    def call_finished(self, event: CallFinished) -> None:
        """Close the call's span with its outcome."""
        span = self._calls.pop(event.index, None)
        if span is None:
            return
        call = event.call
        span.set_attribute("codemode.tool.ok", call.ok)
        span.set_attribute("codemode.tool.duration", call.duration)
        span.set_attribute("codemode.tool.in_flight", call.in_flight)
        if not call.ok:
            kind = "InFlight" if call.in_flight else _error_type(call.error)
            span.set_attribute("error.type", kind)
            described = (call.error or "in flight when the run stopped") if self.tracing.record_arguments else kind
            span.set_status(trace.StatusCode.ERROR, described[:200])
        span.end()

    def call_held(self, event: CallHeld) -> None:
        """Close the span of a call the run paused before making."""
        span = self._calls.pop(event.index, None)
        if span is not None:
            span.set_attribute("codemode.tool.held", True)
            span.end()

    def search_started(self, key: int, query: JsonValue) -> None:
        """Open the search's span."""
        shown = [str(q) for q in query] if isinstance(query, list) else str(query)
        span = self.tracer.start_span(
            "codemode search", context=self.context, attributes={"codemode.search.query": shown}
        )
        self._searches[key] = span

    def search_finished(self, key: int, hits: int | None, error: str | None) -> None:
        """Close the search's span with its hit count."""
        span = self._searches.pop(key, None)
        if span is None:
            return
        if hits is not None:
            span.set_attribute("codemode.search.hits", hits)
        if error is not None:
            span.set_attribute("error.type", "ToolError")
            span.set_status(trace.StatusCode.ERROR, error[:200])
        span.end()


@contextlib.contextmanager
def approval_wait(tool_name: str, *, tracer_provider: trace.TracerProvider | None = None) -> Iterator[trace.Span]:
    """A span around waiting for a person's decision on a call, a child of the current span.

    Set `codemode.approval.approved` on the yielded span when the decision is known.

    Example:
        ```python
        with approval_wait("refund") as span:
            approved = await ask_a_person(...)
            span.set_attribute("codemode.approval.approved", approved)
        ```
    """
    tracer = trace.get_tracer(INSTRUMENTATION, tracer_provider=tracer_provider)
    with tracer.start_as_current_span("codemode approval wait", attributes={"gen_ai.tool.name": tool_name}) as span:
        yield span


def _error_type(message: str | None) -> str:
    """The exception name a handler's failure starts with (`ValueError: ...`), else `ToolError`."""
    found = _ERROR_TYPE.match(message or "")
    return found.group(1) if found else "ToolError"
