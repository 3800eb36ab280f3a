"""What a definition must be to enter a catalog: a well-formed tool, under its (prefixed) name and alias.

Apart from `codemode.catalog` so that the catalog module holds what a catalog does, and these checks, shared
by every way in (`add`, `extend`, `load_jsonl`, `replace`), sit together with the messages they raise, and with
the one rule that settles a clash by itself (`numbered_aliases`, within one source).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from codemode._naming import is_portable_alias, portable_alias
from codemode.errors import CatalogError
from sandbox.limits import cut_end

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from codemode.tools import Tool


def renamed(tool: Tool, prefix: str, aliases: Mapping[str, str] | None) -> Tool:
    """The tool under its prefixed name, with the alias derived from it or given in `aliases`."""
    name = f"{prefix}{tool.name}"
    alias = (aliases or {}).get(name) or (portable_alias(name) if prefix else tool.alias)
    if (name, alias) == (tool.name, tool.alias):
        return tool
    return dataclasses.replace(tool, name=name, alias=alias)


def numbered_aliases(tools: list[Tool], taken: Callable[[str], bool]) -> list[Tool]:
    """One source's tools, each whose derived alias another of them already has numbered: `car_rental_2`.

    Names that differ only in punctuation (`car_rental`, `car.rental`) derive one alias. A tool whose name is the
    alias keeps it; the others, in order, get the first of `_2`, `_3`, ... that no tool of the source and nothing
    `taken` (the catalog's names and aliases) has. A hand-made alias is never changed.
    """
    names = {tool.name for tool in tools}
    used: set[str] = set()
    placed = []
    for tool in tools:
        alias = tool.alias
        if alias != tool.name and alias == portable_alias(tool.name) and (alias in names or alias in used):
            number = 2
            while f"{alias}_{number}" in names or f"{alias}_{number}" in used or taken(f"{alias}_{number}"):
                number += 1
            tool = dataclasses.replace(tool, alias=f"{alias}_{number}")
        used.add(tool.alias)
        placed.append(tool)
    return placed


def collision_message(tool: Tool, other: Tool, key: str) -> str:
    """What to do when `tool` would be found as `key`, which already names `other`."""
    if tool.name == other.name:
        return (
            f"Tool {tool.name!r} is already in the catalog. Give the new tool another name, use "
            "`catalog.replace(tool)` to change its definition, or load each source with its own `prefix`."
        )
    if key != tool.alias or key != other.alias:
        return (
            f"Tool {tool.name!r} and tool {other.name!r} would both be found as {key!r}, the name of one being "
            "the alias of the other. Rename one of them, or give it another hand-made alias."
        )
    return (
        f"Tool {tool.name!r} and tool {other.name!r} would both be called `tools.{key}`. Rename one of "
        "them, give one a hand-made alias (`aliases={...}` when loading, or `Tool(alias=...)`), or load each "
        "source with its own `prefix`."
    )


def check_definition(tool: Tool) -> None:
    """Raise `CatalogError` unless `tool` is a well-formed definition."""
    if not isinstance(tool.name, str) or not tool.name:
        raise CatalogError(f"A tool name must be a non-empty string, got {tool.name!r}.")
    check_alias(tool.name, tool.alias)
    if tool.handler is not None and not callable(tool.handler):
        raise CatalogError(f"Tool {tool.name!r}: `handler` must be callable, got {cut_end(repr(tool.handler), 80)}.")
    check_fields(tool.name, tool.description, tool.parameters, tool.returns)


def check_alias(name: str, alias: str) -> None:
    """Raise `CatalogError` unless `alias` can be written after `tools.`."""
    if not is_portable_alias(alias):
        raise CatalogError(
            f"Tool {name!r} has the alias {alias!r}, which the model cannot write after `tools.`; "
            f"use `portable_alias({name!r})` ({portable_alias(name)!r})."
        )


def check_fields(name: str, description: object, parameters: object, returns: object) -> None:
    """Raise `CatalogError` unless the description is a string and the schemas are JSON objects (of an object)."""
    if not isinstance(description, str):
        raise CatalogError(f"Tool {name!r}: `description` must be a string, got {cut_end(repr(description), 80)}.")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise CatalogError(
            f'Tool {name!r}: `parameters` must be a JSON Schema of type "object" (the keyword arguments), '
            f"got {cut_end(repr(parameters), 80)}."
        )
    if returns is not None and not isinstance(returns, dict):
        raise CatalogError(f"Tool {name!r}: `returns` must be a JSON Schema or None, got {cut_end(repr(returns), 80)}.")
