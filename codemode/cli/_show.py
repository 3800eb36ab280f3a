"""Printing a conversation for a person: each step's code, its output, announcements in brief, and usage.

A `code` run that lasts longer than about a second shows its tool calls live as they start and end (the ones
before that moment at once), so a person watching a slow run sees what it is doing; a quick run shows none.
"""

from __future__ import annotations

import sys
import textwrap
import time
from typing import TYPE_CHECKING, TextIO

from codemode import ToolCall
from codemode.agent import AgentEvents
from codemode.events import CallHeld, CallStarted
from codemode.run._text import summary
from sandbox.limits import cut_marker

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemode.agent import AgentResult
    from codemode.code_mode import ExecuteResult
    from codemode.events import RunEvent
    from codemode.providers.base import CodeCall

_RULE = "-" * 78


class Transcript:
    """Agent events printed as they happen."""

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        max_lines: int = 40,
        progress_after: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._out = out
        self.max_lines = max_lines
        self.progress_after = progress_after
        """Seconds a run must last before its tool calls are shown live."""
        self.clock = clock
        self.step = 0
        self._run_started: float | None = None
        self._pending: list[str] = []
        self._live = False

    @property
    def out(self) -> TextIO:
        """Where to print: the stream given, else whatever `sys.stdout` is now (tests redirect it)."""
        return self._out or sys.stdout

    def events(self) -> AgentEvents:
        """The callbacks to give `Agent`."""
        return AgentEvents(on_text=self.text, on_code=self.code, on_result=self.result, on_call=self.call)

    def text(self, chunk: str) -> None:
        """Streamed assistant text."""
        self.out.write(chunk)
        self.out.flush()

    def code(self, call: CodeCall) -> None:
        """A `code` call about to run."""
        self.step += 1
        print(f"\n[code #{self.step}]", file=self.out)
        print(textwrap.indent(call.code.rstrip(), "  | ", lambda _: True), file=self.out)
        self._run_started, self._pending, self._live = self.clock(), [], False

    def call(self, event: RunEvent) -> None:
        """A tool call of the running code started or ended: shown now if the run is already long, else kept."""
        if isinstance(event, (CallStarted, CallHeld)):
            shown = ToolCall(name=event.name, arguments=event.arguments, duration=0.0, ok=True)
            what = "started" if isinstance(event, CallStarted) else "held"
            line = f"  ~ {event.elapsed:5.1f}s  {what:<8} {summary(shown)}"
        else:
            outcome = "in flight" if event.call.in_flight else ("ok" if event.call.ok else "failed")
            line = f"  ~ {event.elapsed:5.1f}s  {outcome:<8} {summary(event.call)} ({event.call.duration:.2f} s)"
        if self._live:
            print(line, file=self.out, flush=True)
        else:
            self._pending.append(line)
            self.tick()

    def tick(self) -> None:
        """Start showing calls live once the run has lasted `progress_after` seconds (call it now and then)."""
        if self._live or self._run_started is None or self.clock() - self._run_started < self.progress_after:
            return
        self._live = True
        for line in self._pending:
            print(line, file=self.out)
        self._pending.clear()
        self.out.flush()

    def result(self, call: CodeCall, result: ExecuteResult) -> None:
        """What the run gave back, and what it announced."""
        self._run_started, self._pending, self._live = None, [], False
        lines = result.text.splitlines()
        shown = lines[: self.max_lines] + (
            [cut_marker(len(lines) - self.max_lines, "lines")] if len(lines) > self.max_lines else []
        )
        status = "ok" if result.ok else f"error: {result.run.error.kind if result.run.error else ''}"
        print(f"[result: {status}, {len(result.calls)} tool calls, {result.run.duration * 1000:.0f} ms]", file=self.out)
        print(textwrap.indent("\n".join(shown), "  > "), file=self.out)
        if result.announcement:
            print(f"[announced: {result.announced.summary()}]", file=self.out)


def print_usage(result: AgentResult, out: TextIO | None = None) -> None:
    """The cache report: per request, cached and uncached input tokens as the provider reported them."""
    out = out or sys.stdout
    print(_RULE, file=out)
    print(f"{'request':>7}  {'cache read':>10}  {'cache write':>11}  {'uncached':>8}  {'output':>6}", file=out)
    for number, usage in enumerate(result.usage, 1):
        print(
            f"{number:>7}  {usage.cache_read_tokens:>10,}  {usage.cache_write_tokens:>11,}  "
            f"{usage.uncached_input_tokens:>8,}  {usage.output_tokens:>6,}",
            file=out,
        )
