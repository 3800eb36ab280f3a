r"""How `codemode chat` asks a person about a tool call that needs approval: in the terminal, y/N and a reason.

The question goes to stdout with the transcript; the answer is read line by line from stdin, so a script can
pipe its answers in (`printf 'y\nn\ntoo big\n' | codemode chat ...`). When stdin ends, every call still asked
about is denied, and the model is told no one answered.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import anyio

from codemode import Decision

if TYPE_CHECKING:
    from codemode import PendingApproval

NO_ANSWER = "no one answered (the input ended)"


async def ask_in_terminal(pending: PendingApproval) -> Decision:
    """Show the call and its arguments, read `y` or `n`, and on `n` an optional reason."""
    why = f" ({pending.reason})" if pending.reason else ""
    made = ", ".join(call.name for call in pending.calls)
    print(f"\n[approval] the code wants to call {pending.describe()}{why}", flush=True)
    if made:
        print(f"  already made in this run: {made}", flush=True)
    answer = await _read_line("Approve? [y/N] ")
    if answer is None:
        print(f"\n  denied: {NO_ANSWER}", flush=True)
        return Decision(approved=False, reason=NO_ANSWER)
    if answer.strip().lower() in ("y", "yes"):
        return Decision(approved=True)
    reason = await _read_line("Reason (optional): ")
    return Decision(approved=False, reason=(reason or "").strip() or "denied by the user")


async def _read_line(prompt: str) -> str | None:
    """One line from stdin (without its newline), or None at the end of the input."""
    print(prompt, end="", flush=True)
    line: str = await anyio.to_thread.run_sync(sys.stdin.readline)
    if not line:
        return None
    if not sys.stdin.isatty():  # echo piped answers, so the transcript reads like a session
        print(line.rstrip("\n"), flush=True)
    return line.rstrip("\n")
