"""What the model reads of a call's arguments that do not fit: every problem of one call, at once.

The names the tool does not take (with "did you mean"), the values its schema refuses (with what was expected and
what was given), the required arguments left out. One owner of this wording for the run (`codemode.run._runtime`) and
for the check before it (`codemode.run._preflight`), so both say the same of the same mistake.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from codemode._naming import close_matches
from codemode.schema._jsonschema import accepts_null
from codemode.schema.stubs import render_signature
from sandbox.limits import one_line

if TYPE_CHECKING:
    from collections.abc import Mapping
    from collections.abc import Set as AbstractSet

    from codemode.tools import Tool
    from sandbox import JsonObject, JsonValue

_MAX_GIVEN: Final = 100
"""Characters of a value the model sent shown in an error about it; a longer one is cut with the marker."""


@dataclass(frozen=True, kw_only=True)
class Unexpected:
    """The keyword arguments a tool's schema does not name: what to tell the model, and the names it likely meant."""

    details: list[str]
    """One sentence per unexpected name, with "did you mean" where one is close."""
    meant: set[str]
    """The names suggested: not reported missing as well."""


def named_arguments(
    tool: Tool, names: dict[str, str], kwargs: Mapping[str, JsonValue]
) -> tuple[JsonObject, Unexpected]:
    """The arguments by their schema names (a `None` the schema does not take left out), and the unexpected ones.

    Args:
        tool: The tool called.
        names: Its stub-name -> schema-name map (`StubCache.validator`).
        kwargs: The keyword arguments as the code passed them.
    """
    properties = tool.parameters.get("properties")
    known = properties if isinstance(properties, dict) else {}
    closed = isinstance(properties, dict) and tool.parameters.get("additionalProperties", False) is False
    arguments: JsonObject = {}
    unexpected = Unexpected(details=[], meant=set())
    for key, value in kwargs.items():
        original = names.get(key, key)
        if closed and original not in known:  # the stub offers no `**kwargs`: refuse what it does not name
            matches = close_matches(key, names, limit=1)
            unexpected.meant.update(matches)
            hint = f"; did you mean `{matches[0]}`?" if matches else "."
            unexpected.details.append(f"unexpected argument `{key}`{hint}")
            continue
        if value is None and not accepts_null(known.get(original), tool.parameters):
            continue  # `x: int | None = None` in the stub means "leave it out"
        arguments[original] = value
    return arguments, unexpected


def call_message(tool: Tool, details: list[str]) -> str:
    """What the model reads of a call whose arguments do not fit: every problem, then the signature."""
    text = "; ".join(details)
    return f"tools.{tool.alias}(): {text}{'' if text.endswith(('?', '.')) else '.'} Signature: {render_signature(tool)}"


def validation_details(errors: list[Any], names: dict[str, str], *, meant: AbstractSet[str] = frozenset()) -> list[str]:
    """One sentence per argument that does not fit (its first error), and one per missing required argument."""
    stub_names = {original: stub for stub, original in names.items()}
    details: list[str] = []
    seen: set[str] = set()
    for error in errors:
        path = [stub_names.get(str(part), str(part)) for part in error.absolute_path]
        if path:
            if path[0] in seen:
                continue
            seen.add(path[0])
            details.append(f"argument `{'.'.join(path)}`: {error.message} (given {given_text(error.instance)})")
        elif error.validator == "required":
            message = str(error.message)
            missing = message.split("'")[1] if "'" in message else message
            shown = stub_names.get(missing, missing)
            if shown not in meant:
                details.append(missing_argument(shown))
        elif error.validator == "additionalProperties":
            details.append(f"unexpected argument: {error.message}")
        else:
            details.append(f"the arguments: {error.message} (given {given_text(error.instance)})")
    return details


def missing_argument(name: str) -> str:
    """The detail of a call that leaves out a required argument (by its name in the stub)."""
    return f"missing required argument `{name}`"


def given_text(value: object) -> str:
    """A value as the model wrote it (JSON), cut short."""
    return one_line(json.dumps(value, ensure_ascii=False, default=str), _MAX_GIVEN)
