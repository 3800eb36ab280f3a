"""A tool's argument schema as a validator: the JSON Schema draft it is read under, and its errors worded to act on.

A schema without `$schema` is read under the newest draft it is valid under; one valid under none is checked
loosely (`required`, and each property whose own schema is valid), and logged once. `jsonschema` is imported at
the first schema checked, not with this module.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from codemode.schema._errors import readable
from codemode.schema._jsonschema import as_schema, openapi_nullable

if TYPE_CHECKING:
    from sandbox import JsonObject, JsonValue

FIRST_ERRORS: Final = 64
"""The most validation errors collected for one instance (the message names the first by path)."""

logger = logging.getLogger("codemode.schema")
_reported: set[tuple[str, str]] = set()


def report_problem(tool_name: str, problem: str) -> None:
    """Log, once per process, that a tool's schema is valid under no draft and is checked loosely."""
    if (tool_name, problem) not in _reported:
        _reported.add((tool_name, problem))
        logger.warning(
            "tool %r: its argument schema is valid under no JSON Schema draft (%s); its arguments are checked "
            "only where the schema can be read",
            tool_name,
            problem,
        )


@functools.cache
def _drafts() -> tuple[Any, ...]:
    """The drafts' validators, newest first: a schema without `$schema` is read under the newest it is valid under.

    `jsonschema` is imported here, at the first schema checked, not with this module: reading a catalog and
    rendering stubs need none of it, and it is a fifth of a CLI start.
    """
    import jsonschema  # type: ignore[import-untyped]  # no stubs in the dev extra

    return (
        jsonschema.Draft202012Validator,
        jsonschema.Draft201909Validator,
        jsonschema.Draft7Validator,
        jsonschema.Draft6Validator,
        jsonschema.Draft4Validator,
    )


@dataclass(frozen=True, kw_only=True)
class CheckedSchema:
    """A schema's validator, under the draft it declares or the newest it is valid under."""

    draft: str
    """The draft's name (`"draft-04"`), or `"relaxed"` when the schema is valid under none."""
    problem: str | None
    """Why the schema is valid under no draft (then only the parts that are valid are checked)."""
    validator: Any
    """The `jsonschema` validator (of the relaxed schema, when there is a problem)."""

    def errors(self, instance: JsonValue) -> list[Any]:
        """The first validation errors of `instance`, first by path, worded to act on (`_errors`).

        A reference that cannot be followed is skipped.

        The walk stops after `FIRST_ERRORS`: a million bad items would each build an error, for one message.
        """
        from referencing.exceptions import Unresolvable  # loaded with `jsonschema`, by `_drafts`

        root = as_schema(self.validator.schema)
        try:
            found = list(itertools.islice(self.validator.iter_errors(instance), FIRST_ERRORS))
        except Unresolvable:  # a remote or broken `$ref`: check what can be checked without it
            found = list(itertools.islice(_relaxed(root).iter_errors(instance), FIRST_ERRORS))
        return sorted((readable(e, root) for e in found), key=lambda e: list(e.absolute_path))


def checked_schema(schema: JsonObject) -> CheckedSchema:
    """The validator of a tool's argument schema, with OpenAPI `nullable` honoured; cached by the schema's JSON."""
    try:
        canonical = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        return CheckedSchema(draft="relaxed", problem=f"it is not plain JSON ({e})", validator=_relaxed({}))
    return _checked(canonical)


def schema_problem(schema: JsonObject) -> str | None:
    """Why `schema` is valid under no JSON Schema draft (the declared one if it declares one), or `None`."""
    return checked_schema(schema).problem


@functools.lru_cache(maxsize=4096)
def _checked(canonical: str) -> CheckedSchema:
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]  # loaded by `_drafts`

    schema = as_schema(openapi_nullable(json.loads(canonical)))
    problem = None
    for draft in _candidates(schema):
        try:
            draft.check_schema(schema)
        except SchemaError as e:
            problem = problem or _describe(e)
            continue
        return CheckedSchema(draft=_draft_name(draft), problem=None, validator=draft(schema))
    return CheckedSchema(draft="relaxed", problem=problem, validator=_relaxed(schema))


def _candidates(schema: JsonObject) -> tuple[Any, ...]:
    drafts = _drafts()
    declared = schema.get("$schema")
    if isinstance(declared, str):
        from jsonschema.validators import validator_for  # type: ignore[import-untyped]  # loaded by `_drafts`

        draft = validator_for(schema, default=None)
        if draft is not None and draft in drafts:
            return (draft,)
    return drafts


def _draft_name(draft: Any) -> str:
    name: str = draft.__name__.removesuffix("Validator").removeprefix("Draft")
    return f"draft-{int(name):02d}" if len(name) == 1 else f"draft-{name[:4]}-{name[4:]}"


def _describe(error: Any) -> str:
    where = "/".join(str(part) for part in error.path)
    return f"{error.message}" + (f" (at `{where}`)" if where else "")


def _relaxed(schema: JsonObject) -> Any:
    """A validator of what can be checked: `required`, and each property whose own schema is valid and whole."""
    properties = {key: _whole(sub) for key, sub in as_schema(schema.get("properties")).items()}
    required = schema.get("required")
    relaxed: JsonObject = {"type": "object", "properties": properties}
    if isinstance(required, list) and all(isinstance(name, str) for name in required):
        relaxed["required"] = required
    return _drafts()[0](relaxed)


def _whole(sub: JsonValue) -> JsonValue:
    """`sub` if it is valid on its own under the newest draft (and has no `$ref` out of it), else `{}` (anything)."""
    if not isinstance(sub, dict) or '"$ref"' in json.dumps(sub):
        return {}
    return sub if _meta_2020().is_valid(sub) else {}


@functools.cache
def _meta_2020() -> Any:
    """A validator of schemas under the newest draft."""
    newest = _drafts()[0]
    return newest(newest.META_SCHEMA)
