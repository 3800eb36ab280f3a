"""What the model has been shown: `DiscoveryState`, and the announcements that extend it.

An announcement is conversation content, announcing what the model will use: the full stub of each tool the
code called or described (once; its types written once per conversation, then referred to by name), one line for
each tool the code only found (`codemode.schema.stubs`), stubs of tools whose definition changed, and the names
of tools removed. Each full stub is preceded by a marker line naming the tool and a short hash of its stub, and each
line ends with the same as a comment, so the state can be rebuilt from a stored history by reading the markers
back, the same decisions included (which tools were shown as a line, which types are defined): the history is the
state, and no server-side session is needed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codemode._naming import is_python_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sandbox import JsonValue

OPEN_TAG = "<tools-discovered>"
CLOSE_TAG = "</tools-discovered>"
_MARKER = re.compile(r"^# (new|updated|removed) tool: (.+?)(?: \[([0-9a-f]{12})\])?$", re.MULTILINE)
_SEEN_LINE = re.compile(r"^async def (\w+)\(.*  # \[([0-9a-f]{12})\](?: (.+))?$", re.MULTILINE)
"""A one-line stub, its marker a trailing comment: the full stub's hash, then the original name if not the alias."""
_BLOCK = re.compile(re.escape(OPEN_TAG) + r"\n(.*?)" + re.escape(CLOSE_TAG), re.DOTALL)
_BLOCK_GAP = "\n\n\n"
"""Between the blocks of a full stub (types, then the `async def`): no block holds it (`codemode.schema.stubs`)."""
_TYPE_NAME = re.compile(r"\A(?:# .*\n)?(?:class (\w+)\(TypedDict|(\w+) = TypedDict\()")
_HEADER = (
    "Tools discovered in the last `code` run, now callable as `await tools.<name>(...)` "
    "(keyword arguments) in later runs:"
)
_SEEN_HEADER = "# Found by search, shown as one line each; calling one or `tools.describe(name)` gives its full stub:"


def stub_hash(stub: str) -> str:
    """A short, stable fingerprint of a stub's text."""
    return hashlib.sha256(stub.encode("utf-8")).hexdigest()[:12]


@dataclass
class DiscoveryState:
    """What one conversation carries between `code` runs: tools announced, a pending approval, kept variables.

    Plain data: `to_json` / `from_json` round-trip it, and `from_history` rebuilds the announced tools, those shown
    only as a line and the types defined from announcements (variables live only here, so carry the state itself
    to keep them). Optional parts appear in
    `to_json` only when set, each under its own key.
    """

    announced: dict[str, str] = field(default_factory=dict)
    """Original tool name -> `stub_hash` of its full stub, for every tool announced (in full or as a line)."""
    compact: set[str] = field(default_factory=set)
    """The announced tools the model has seen only as a one-line stub: using one announces it in full."""
    types: dict[str, str] = field(default_factory=dict)
    """Type name -> `stub_hash` of its definition, for the types announcements defined: written once, then
    referenced by name."""
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
        if self.compact:
            compact: list[JsonValue] = [*sorted(self.compact)]
            data["compact"] = compact
        if self.types:
            data["types"] = dict(sorted(self.types.items()))
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
        if not isinstance(variables, dict) or not all(is_python_name(name, underscore_ok=False) for name in variables):
            raise ValueError("`variables` must be an object whose keys are identifiers not starting with `_`")
        assigned = data.get("assigned") or []
        if not isinstance(assigned, list) or not all(isinstance(name, str) for name in assigned):
            raise TypeError("`assigned` must be a list of names")
        compact = data.get("compact") or []
        if not isinstance(compact, list) or not all(isinstance(name, str) for name in compact):
            raise TypeError("`compact` must be a list of tool names")
        types = data.get("types") or {}
        if not isinstance(types, dict):
            raise TypeError("`types` must be an object of type name -> hash")
        return cls(
            announced={str(name): str(digest) for name, digest in announced.items()},
            compact={str(name) for name in compact},
            types={str(name): str(digest) for name, digest in types.items()},
            approval=approval,
            variables=dict(variables),
            assigned=[str(name) for name in assigned],
        )

    @classmethod
    def from_history(cls, texts: Iterable[str]) -> DiscoveryState:
        """The state a conversation reached, from the texts of its messages in order.

        Makes the same announcement decisions as the live state: which tools were seen in full or as a line, and
        which types are already defined.
        """
        state = cls()
        for text in texts:
            if OPEN_TAG not in text:
                continue
            for block in _BLOCK.findall(text):
                state._read(block)
        return state

    def _read(self, block: str) -> None:
        """Apply one announcement's text: its markers, the types its full stubs define, and its one-line stubs."""
        head, _, tail = block.partition(f"\n{_SEEN_HEADER}\n")
        pieces = _MARKER.split(head)
        for at in range(1, len(pieces), 4):
            kind, name, digest, body = pieces[at : at + 4]
            if kind == "removed":
                self._remove(name)
            elif digest:
                self.announced[name] = digest
                self.compact.discard(name)
                self.types.update((type_name, stub_hash(source)) for type_name, source in type_blocks(body.strip("\n")))
        for alias, digest, name in _SEEN_LINE.findall(tail):
            self.announced[name or alias] = digest
            self.compact.add(name or alias)
        for kind, name, _digest in _MARKER.findall(tail):
            if kind == "removed":
                self._remove(name)

    def _remove(self, name: str) -> None:
        self.announced.pop(name, None)
        self.compact.discard(name)


@dataclass(frozen=True, kw_only=True)
class Announcement:
    """What to tell the model about, in the order it was discovered: full stubs, one-line stubs, removals."""

    new: tuple[tuple[str, str], ...] = ()
    """(original name, full stub) of tools the code used (called or described) that the model has not seen in full."""
    updated: tuple[tuple[str, str], ...] = ()
    """(original name, full stub) of tools seen in full whose definition changed since."""
    seen: tuple[tuple[str, str, str], ...] = ()
    """(original name, one-line stub, `stub_hash` of the full stub) of tools the code only found: new ones, and
    changed ones the model has only seen as a line."""
    removed: tuple[str, ...] = ()
    """Original names of announced tools that are gone."""
    known_types: Mapping[str, str] = field(default_factory=dict)
    """Type name -> hash of its definition, for the types the conversation already defines: not written again."""

    def __bool__(self) -> bool:
        return bool(self.new or self.updated or self.seen or self.removed)

    def apply(self, state: DiscoveryState) -> None:
        """Record this announcement in `state`."""
        for name, stub in (*self.new, *self.updated):
            state.announced[name] = stub_hash(stub)
            state.compact.discard(name)
            state.types.update((type_name, stub_hash(source)) for type_name, source in type_blocks(stub))
        for name, _line, digest in self.seen:
            state.announced[name] = digest
            state.compact.add(name)
        for name in self.removed:
            state.announced.pop(name, None)
            state.compact.discard(name)

    def text(self) -> str:
        """The announcement as conversation content: each type defined once, then referenced by name."""
        parts = [OPEN_TAG, _HEADER]
        written = dict(self.known_types)
        for kind, entries in (("new", self.new), ("updated", self.updated)):
            for name, stub in entries:
                parts.append(f"\n# {kind} tool: {name} [{stub_hash(stub)}]\n{_unwritten(stub, written)}")
        if self.seen:
            parts.append(f"\n{_SEEN_HEADER}")
            parts.extend(_seen_line(name, line, digest) for name, line, digest in self.seen)
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
        if self.seen:
            bits.append(f"{len(self.seen)} seen: " + ", ".join(name for name, _, _ in self.seen))
        if self.removed:
            bits.append(f"{len(self.removed)} removed: " + ", ".join(self.removed))
        return "; ".join(bits) or "nothing new"


def _seen_line(name: str, line: str, digest: str) -> str:
    """A one-line stub with its marker: `  # [hash]`, and the original name when the line's alias differs."""
    alias = line[len("async def ") : line.index("(")]
    return f"{line}  # [{digest}]" + ("" if alias == name else f" {name}")


def type_blocks(stub: str) -> list[tuple[str, str]]:
    """(name, source) of each type a full stub defines before its `async def` (blocks three newlines apart)."""
    blocks = stub.rstrip("\n").split(_BLOCK_GAP)[:-1]
    named = [(_TYPE_NAME.search(block), block) for block in blocks]
    return [(match.group(1) or match.group(2), block) for match, block in named if match is not None]


def _unwritten(stub: str, written: dict[str, str]) -> str:
    """`stub` without the type blocks `written` already holds (name and hash alike); records those it writes."""
    blocks = stub.rstrip("\n").split(_BLOCK_GAP)
    kept = []
    for block in blocks[:-1]:
        match = _TYPE_NAME.search(block)
        name = (match.group(1) or match.group(2)) if match is not None else None
        digest = stub_hash(block)
        if name is not None and written.get(name) == digest:
            continue
        if name is not None:
            written[name] = digest
        kept.append(block)
    return _BLOCK_GAP.join([*kept, blocks[-1]]) + "\n"


def plan_announcement(
    state: DiscoveryState,
    discovered: Iterable[str],
    stubs: Mapping[str, str],
    *,
    lines: Mapping[str, str] | None = None,
    used: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> Announcement:
    """What to announce after a run: what the model will use in full, what it only saw as a line, and changes.

    Args:
        state: What the model has seen.
        discovered: Original names of tools the run found or used, in order.
        stubs: Current full stub of every tool in the catalog that might be announced, by original name.
        lines: Current one-line stub of each tool, by original name; without it every tool is announced in full.
        used: Tools the run called or described: announced in full (again in full when seen only as a line).
        exclude: Tools the model always sees (in the `code` tool's own description).
    """
    skip, full = set(exclude), set(used)
    new: dict[str, str] = {}
    seen: dict[str, tuple[str, str, str]] = {}
    for name in discovered:
        if name in skip or name in new or name in seen or name not in stubs:
            continue
        in_full = lines is None or name in full or name not in lines
        if name in state.announced and not (in_full and name in state.compact):
            continue
        if in_full:
            new[name] = stubs[name]
        else:
            assert lines is not None
            seen[name] = (name, lines[name], stub_hash(stubs[name]))
    updated = []
    removed = []
    for name, digest in state.announced.items():
        stub = stubs.get(name)
        if stub is None:
            removed.append(name)
        elif name in new or stub_hash(stub) == digest:
            continue
        elif name in state.compact and lines is not None and name in lines:
            seen[name] = (name, lines[name], stub_hash(stub))
        else:
            updated.append((name, stub))
    return Announcement(
        new=tuple(new.items()),
        updated=tuple(updated),
        seen=tuple(seen.values()),
        removed=tuple(removed),
        known_types=dict(state.types),
    )
