"""What the model has been shown: `DiscoveryState`, and the announcements that extend it.

An announcement is conversation content: the Python stubs of tools new to this conversation, stubs of tools
whose definition changed, and the names of tools removed. Each stub is preceded by a marker line naming the
tool and a short hash of its stub, so the state can be rebuilt from a stored history by reading the markers
back: the history is the state, and no server-side session is needed.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from codemode._json import JsonValue

OPEN_TAG = "<tools-discovered>"
CLOSE_TAG = "</tools-discovered>"
_MARKER = re.compile(r"^# (new|updated|removed) tool: (.+?)(?: \[([0-9a-f]{12})\])?$", re.MULTILINE)
_HEADER = (
    "Tools discovered in the last `code` run, now callable as `await tools.<name>(...)` "
    "(keyword arguments) in later runs:"
)


def _is_variable_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def stub_hash(stub: str) -> str:
    """A short, stable fingerprint of a stub's text."""
    return hashlib.sha256(stub.encode("utf-8")).hexdigest()[:12]


@dataclass
class DiscoveryState:
    """What one conversation carries between `code` runs: tools announced, a pending approval, kept variables.

    Plain data: `to_json` / `from_json` round-trip it, and `from_history` rebuilds the announced tools from
    announcements (variables live only here, so carry the state itself to keep them). Optional parts appear in
    `to_json` only when set, each under its own key.
    """

    announced: dict[str, str] = field(default_factory=dict)
    """Original tool name -> `stub_hash` of the announced stub."""
    approval: dict[str, JsonValue] | None = None
    """The signed record of a run stopped at a call that needs approval (see `codemode.policy`), or None."""
    variables: dict[str, JsonValue] = field(default_factory=dict)
    """Top-level variables kept for the next run (`CodeMode(persist_variables=True)`), as JSON values."""
    assigned: list[str] = field(default_factory=list, compare=False)
    """Top-level names earlier runs assigned, most recent last (bounded), to explain a `NameError` for one. A
    hint, not what the model was shown, so two states that differ only here are equal."""

    @property
    def approval_id(self) -> str | None:
        """The id of the call waiting for approval (`PendingApproval.id`; a decision names it), or None.

        Read from the record as it stands: `CodeMode.resume` checks its signature.
        """
        signature = self.approval.get("signature") if self.approval is not None else None
        return signature[:16] if isinstance(signature, str) else None

    @property
    def paused_code(self) -> str | None:
        """The code of the run waiting for approval (a decision resumes only that code), or None.

        Read from the record as it stands: `CodeMode.resume` checks its signature.
        """
        record = self.approval.get("record") if self.approval is not None else None
        code = record.get("code") if isinstance(record, dict) else None
        return code if isinstance(code, str) else None

    def to_json(self) -> dict[str, JsonValue]:
        """This state as JSON data."""
        data: dict[str, JsonValue] = {"announced": dict(sorted(self.announced.items()))}
        if self.approval is not None:
            data["approval"] = self.approval
        if self.variables:
            data["variables"] = dict(self.variables)
        if self.assigned:
            data["assigned"] = list(self.assigned)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JsonValue]) -> DiscoveryState:
        """A state from `to_json` output; `TypeError` or `ValueError` for data it cannot have written.

        Its approval record is checked when a run resumes from it.
        """
        announced = data.get("announced") or {}
        if not isinstance(announced, dict):
            raise TypeError("`announced` must be an object of tool name -> hash")
        approval = data.get("approval")
        if approval is not None and not isinstance(approval, dict):
            raise TypeError("`approval` must be an object (a signed approval record) or absent")
        variables = data.get("variables") or {}
        if not isinstance(variables, dict) or not all(_is_variable_name(name) for name in variables):
            raise ValueError("`variables` must be an object whose keys are identifiers not starting with `_`")
        assigned = data.get("assigned") or []
        if not isinstance(assigned, list) or not all(isinstance(name, str) for name in assigned):
            raise TypeError("`assigned` must be a list of names")
        return cls(
            announced={str(name): str(digest) for name, digest in announced.items()},
            approval=approval,
            variables=dict(variables),
            assigned=[str(name) for name in assigned],
        )

    @classmethod
    def from_history(cls, texts: Iterable[str]) -> DiscoveryState:
        """The state a conversation reached, from the texts of its messages in order."""
        state = cls()
        for text in texts:
            if OPEN_TAG not in text:
                continue
            for kind, name, digest in _MARKER.findall(text):
                if kind == "removed":
                    state.announced.pop(name, None)
                elif digest:
                    state.announced[name] = digest
        return state


@dataclass(frozen=True, kw_only=True)
class Announcement:
    """Stubs to tell the model about, in the order they were discovered."""

    new: tuple[tuple[str, str], ...] = ()
    """(original name, stub) of tools the model has not seen."""
    updated: tuple[tuple[str, str], ...] = ()
    """(original name, stub) of tools whose definition changed since the model saw them."""
    removed: tuple[str, ...] = ()
    """Original names of announced tools that are gone."""

    def __bool__(self) -> bool:
        return bool(self.new or self.updated or self.removed)

    def apply(self, state: DiscoveryState) -> None:
        """Record this announcement in `state`."""
        for name, stub in (*self.new, *self.updated):
            state.announced[name] = stub_hash(stub)
        for name in self.removed:
            state.announced.pop(name, None)

    def text(self) -> str:
        """The announcement as conversation content."""
        parts = [OPEN_TAG, _HEADER]
        for kind, entries in (("new", self.new), ("updated", self.updated)):
            for name, stub in entries:
                parts.append(f"\n# {kind} tool: {name} [{stub_hash(stub)}]\n{stub}")
        if self.removed:
            parts.append("")
            parts.extend(f"# removed tool: {name}" for name in self.removed)
        parts.append(CLOSE_TAG)
        return "\n".join(parts)

    def summary(self) -> str:
        """A one-line account for people (logs, the CLI)."""
        bits = []
        if self.new:
            bits.append(f"{len(self.new)} new: " + ", ".join(name for name, _ in self.new))
        if self.updated:
            bits.append(f"{len(self.updated)} updated: " + ", ".join(name for name, _ in self.updated))
        if self.removed:
            bits.append(f"{len(self.removed)} removed: " + ", ".join(self.removed))
        return "; ".join(bits) or "nothing new"


def plan_announcement(
    state: DiscoveryState, discovered: Iterable[str], stubs: Mapping[str, str], *, exclude: Iterable[str] = ()
) -> Announcement:
    """What to announce after a run: `discovered` tools not yet seen, and changes to tools already announced.

    Args:
        state: What the model has seen.
        discovered: Original names of tools the run found or used, in order.
        stubs: Current stub of every tool in the catalog that might be announced, by original name.
        exclude: Tools the model always sees (in the `code` tool's own description).
    """
    skip = set(exclude)
    new: dict[str, str] = {}
    for name in discovered:
        if name in skip or name in state.announced or name in new or name not in stubs:
            continue
        new[name] = stubs[name]
    updated = []
    removed = []
    for name, digest in state.announced.items():
        stub = stubs.get(name)
        if stub is None:
            removed.append(name)
        elif stub_hash(stub) != digest:
            updated.append((name, stub))
    return Announcement(new=tuple(new.items()), updated=tuple(updated), removed=tuple(removed))
