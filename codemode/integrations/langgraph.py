"""Approvals for the LangChain `code` tool inside a LangGraph graph, through `interrupt` (the `langgraph` extra).

`codemode.integrations.langchain.code_tool` imports this module when it runs inside a graph. A run of the code
that stops at a call needing approval calls `interrupt(value)`, where `value` is the paused run as JSON (the
call, its arguments, why, the calls made with their results, and the signed record under `"codemode/approval"`),
so the graph stops and its checkpointer keeps the value. Resume with
`Command(resume=decision(value, approved=True))` (or `approved=False, reason="..."`): LangGraph runs the tool
node again from its start, the tool finds the decision before running anything, and resumes the code through
`CodeMode.resume`, so calls already made are replayed, not made again. A resumed run that needs another
approval interrupts again, with a new value.

The tool learns whether it is being resumed by asking `interrupt` for each resume value it holds, in order,
until one raises `GraphInterrupt`, which it swallows: that peek surfaces nothing, and only the newest decision
counts (its record holds everything before it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NoReturn

from codemode.errors import ApprovalError
from codemode.integrations._approvals import RECORD_KEY, record_of

try:
    from langgraph.config import get_config
    from langgraph.errors import GraphInterrupt
    from langgraph.runtime import get_runtime
    from langgraph.types import interrupt
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `langgraph` extra: pip install "codemode[langgraph]"') from e

if TYPE_CHECKING:
    from sandbox import JsonObject

__all__ = ["decision"]

_PEEK: Final = {"codemode": "looking for a decision; never surfaced"}
"""The value of the peeking `interrupt` calls (swallowed, so no client sees it)."""


def decision(value: Mapping[str, Any], *, approved: bool, reason: str | None = None) -> JsonObject:
    """The resume value that answers a `code` interrupt: `Command(resume=decision(interrupt.value, ...))`.

    Args:
        value: The interrupt's value, as the graph surfaced it (or as saved, as JSON).
        approved: Make the call (True), or deny it: the code gets a `ToolError` with `reason`.
        reason: Why it was denied.

    Example:
        ```python
        state = await graph.ainvoke({"messages": [("user", "Refund order A1.")]}, config)
        (pause,) = state["__interrupt__"]
        await graph.ainvoke(Command(resume=decision(pause.value, approved=True)), config)
        ```
    """
    return {"approved": approved, "reason": reason, RECORD_KEY: record_of(value)}


def in_graph() -> bool:
    """Whether the caller runs as a task of a LangGraph graph (where `interrupt` works), not only with a config."""
    try:
        get_config()
    except RuntimeError:
        return False
    return get_runtime() is not None


def latest_decision() -> tuple[bool, str | None, JsonObject] | None:
    """The newest decision this tool call was resumed with (approved, reason, the payload), or None."""
    latest: object = None
    while True:
        try:
            latest = interrupt(_PEEK)
        except GraphInterrupt:
            break
    if latest is None:
        return None
    if not (isinstance(latest, Mapping) and isinstance(latest.get("approved"), bool)):
        raise ApprovalError(
            "a `code` interrupt was resumed with something other than a decision: resume it with "
            "`Command(resume=codemode.integrations.langgraph.decision(interrupt.value, approved=True))`"
        )
    reason = latest.get("reason")
    return latest["approved"], reason if isinstance(reason, str) and reason else None, dict(latest)


def ask(value: JsonObject) -> NoReturn:
    """Stop the graph with `value` for a person (`interrupt` raises; LangGraph runs the node again on resume)."""
    interrupt(value)
    raise AssertionError("a `code` interrupt returned a value the peek did not see")  # pragma: no cover
