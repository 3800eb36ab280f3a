"""Printing a conversation for a person: each step's code, its output, announcements in brief, and usage."""

from __future__ import annotations

import sys
import textwrap
from typing import TYPE_CHECKING, TextIO

from codemode.agent import AgentEvents

if TYPE_CHECKING:
    from codemode.agent import AgentResult
    from codemode.code_mode import ExecuteResult
    from codemode.providers.base import CodeCall

_RULE = "-" * 78


class Transcript:
    """Agent events printed as they happen."""

    def __init__(self, out: TextIO | None = None, *, max_lines: int = 40) -> None:
        self._out = out
        self.max_lines = max_lines
        self.step = 0

    @property
    def out(self) -> TextIO:
        """Where to print: the stream given, else whatever `sys.stdout` is now (tests redirect it)."""
        return self._out or sys.stdout

    def events(self) -> AgentEvents:
        """The callbacks to give `Agent`."""
        return AgentEvents(on_text=self.text, on_code=self.code, on_result=self.result)

    def text(self, chunk: str) -> None:
        """Streamed assistant text."""
        self.out.write(chunk)
        self.out.flush()

    def code(self, call: CodeCall) -> None:
        """A `code` call about to run."""
        self.step += 1
        print(f"\n[code #{self.step}]", file=self.out)
        print(textwrap.indent(call.code.rstrip(), "  | ", lambda _: True), file=self.out)

    def result(self, call: CodeCall, result: ExecuteResult) -> None:
        """What the run gave back, and what it announced."""
        lines = result.text.splitlines()
        shown = lines[: self.max_lines] + (
            [f"... ({len(lines) - self.max_lines} more lines)"] if len(lines) > self.max_lines else []
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
