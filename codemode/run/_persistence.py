"""Variables across the runs of one conversation: what the state keeps after a run, and what the model is told.

With persistence on, the top-level variables a run leaves that convert to JSON go into the conversation's state
(never into a worker), so the next run starts with them wherever it runs; the names that could not be kept are
listed in one line of the result. With persistence off nothing is kept, but the state remembers the names
earlier runs assigned, so a `NameError` for one of them says why and what to do instead.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from codemode._naming import MAX_NAME, is_python_name

if TYPE_CHECKING:
    from codemode.discovery import DiscoveryState
    from sandbox import RunResult

MAX_ASSIGNED: Final = 100
"""Names of earlier runs' variables remembered for the `NameError` hint (the most recent)."""
MAX_NOTE: Final = 400
"""Characters of the one-line note about variables that were not kept, with reasons (past it, only the names)."""
MAX_NOTE_NAMES: Final = 200
"""Names the note lists when it is too long for the reasons: every name of a realistic run."""
_NOT_JSON = re.compile(r"^(?P<where>.+?) is (?P<what>an? .+?), not JSON data \((?P<advice>use [^()]+)\)$")
_MISSING = re.compile(r"^(?:NameError: name|UnboundLocalError: cannot access local variable) '(\w+)'")


def carry_over(state: DiscoveryState, run: RunResult, *, persist: bool) -> list[str]:
    """Update `state` after `run`; the lines to add to the model's result (a hint, a note), maybe none."""
    lines = [] if (hint := _name_error_hint(state, run, persist=persist)) is None else [hint]
    if persist and run.variables is not None:  # None: the run's end was never reached, so keep what was there
        state.variables = dict(run.variables)
    if persist and run.dropped_variables:
        lines.append(_dropped_note(run.dropped_variables))
    assigned = [name for name in run.assigned if _rememberable(name)]
    state.assigned = [*(name for name in state.assigned if name not in assigned), *assigned][-MAX_ASSIGNED:]
    return lines


def _rememberable(name: str) -> bool:
    """Whether an assigned name is one to remember: a plain identifier, of a length a `NameError` can quote."""
    return is_python_name(name, keyword_ok=True, underscore_ok=False) and len(name) <= MAX_NAME


def _name_error_hint(state: DiscoveryState, run: RunResult, *, persist: bool) -> str | None:
    error = run.error
    found = None if error is None else _MISSING.match(error.message)
    if found is None or found.group(1) not in state.assigned:
        return None
    name = found.group(1)
    if persist:
        return (
            f"Note: `{name}` from an earlier run was not kept: only variables holding JSON data (dict, list, str, "
            "numbers, bool, None) carry over. Define or compute it again in this run."
        )
    return (
        f"Note: `{name}` was assigned by an earlier run, but runs do not share variables: each run starts fresh. "
        "Compute it again in this run, or `return` the data from the run that makes it and write it into the "
        "next run's code."
    )


def _dropped_note(dropped: dict[str, str]) -> str:
    """Every dropped name, grouped by reason, the not-JSON advice once; past `MAX_NOTE` the names alone."""
    by_reason: dict[str, list[str]] = {}
    not_json: list[str] = []
    advice = ""
    for name, reason in dropped.items():
        found = _NOT_JSON.match(reason)
        if found is None:
            by_reason.setdefault(reason, []).append(name)
            continue
        where, what, advice = found.group("where", "what", "advice")
        not_json.append(f"{name} ({what})" if where == name else f"{name} ({where} is {what})")
    parts = [f"{', '.join(names)} ({reason})" for reason, names in by_reason.items()]
    if not_json:
        parts.append(f"{', '.join(not_json)}: not JSON data ({advice})")
    note = "Not kept for the next run: " + "; ".join(parts)
    if len(note) <= MAX_NOTE:
        return note
    return _names_only(list(dropped))


def _names_only(names: list[str]) -> str:
    """The note cut to the names (each one, up to `MAX_NOTE_NAMES`): the reasons go, never a name."""
    shown = names[:MAX_NOTE_NAMES]
    more = f" and {len(names) - len(shown):,} more" if len(names) > len(shown) else ""
    return (
        f"Not kept for the next run: {', '.join(shown)}{more} (only JSON data carries over: dict, list, str, "
        "numbers, bool, None; define, import or convert the others again)"
    )
