"""Reading a config's `[[tools]]` tables: each checked for its keys and their types, and `${VAR}` expanded.

Every mistake is a `ConfigError` that names the file, the table (`tools[2]`) and the key, and says what it takes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from codemode.config._sources import (
    JsonlSource,
    McpHttpSource,
    McpStdioSource,
    ModuleSource,
    OpenApiSource,
    PythonSource,
    Source,
)
from codemode.errors import ConfigError
from sandbox.limits import cut_end

if TYPE_CHECKING:
    from pathlib import Path

KINDS: Final = ("python", "module", "jsonl", "mcp", "mcp_url", "openapi")
"""The key that says what a table's source is; a table has exactly one."""
_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"prefix", "aliases", "approval"}),
    "module": frozenset({"prefix", "aliases", "approval"}),
    "jsonl": frozenset({"prefix", "aliases", "approval"}),
    "mcp": frozenset({"name", "env", "cwd", "approval"}),
    "mcp_url": frozenset({"name", "headers", "approval"}),
    "openapi": frozenset({"base_url", "name", "headers", "credentials", "include", "exclude", "prefix", "approval"}),
}
_VARIABLE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def parse_source(table: object, name: str, path: Path) -> Source:
    where = f"{path}: {name}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, written `[[tools]]`.")
    kinds = [kind for kind in KINDS if kind in table]
    if len(kinds) != 1:
        raise ConfigError(f"{where}: a tools table has exactly one of the keys {list(KINDS)}, got {sorted(table)}.")
    kind = kinds[0]
    unknown = sorted(set(table) - {kind} - _OPTIONS[kind])
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}; a `{kind}` source takes {sorted(_OPTIONS[kind])}.")
    get = _Getter(table, where)
    base = path.parent
    prefix, aliases, approval = get.string("prefix", ""), get.string_table("aliases"), get.approval()
    local = {"table": name, "prefix": prefix, "aliases": aliases, "approval": approval}
    match kind:
        case "python":
            return PythonSource(path=base / get.string(kind), **local)  # type: ignore[arg-type]  # typed just above
        case "module":
            return ModuleSource(module=get.string(kind), **local)  # type: ignore[arg-type]  # typed just above
        case "jsonl":
            return JsonlSource(path=base / get.string(kind), **local)  # type: ignore[arg-type]  # typed just above
        case "mcp":
            cwd = get.optional_string("cwd")
            return McpStdioSource(
                table=name,
                command=tuple(get.strings(kind)),
                name=get.optional_string("name"),
                env=get.string_table("env"),
                cwd=None if cwd is None else base / cwd,
                approval=approval,
            )
        case "mcp_url":
            return McpHttpSource(
                table=name,
                url=get.string(kind),
                name=get.optional_string("name"),
                headers=get.string_table("headers"),
                approval=approval,
            )
        case _:
            return _openapi_source(get, name, base)


def _openapi_source(get: _Getter, name: str, base: Path) -> OpenApiSource:
    spec = expand_env(get.string("openapi"), get.where)
    base_url = get.optional_string("base_url")
    return OpenApiSource(
        table=name,
        spec=spec if spec.startswith(("http://", "https://")) else str(base / spec),
        base_url=None if base_url is None else expand_env(base_url, get.where),
        name=get.optional_string("name"),
        headers={key: expand_env(value, get.where) for key, value in get.string_table("headers").items()},
        credentials={key: expand_env(value, get.where) for key, value in get.string_table("credentials").items()},
        include=tuple(get.strings("include")) if "include" in get.table else (),
        exclude=tuple(get.strings("exclude")) if "exclude" in get.table else (),
        prefix=get.string("prefix", ""),
        approval=get.approval(),
    )


def expand_env(value: str, where: str) -> str:
    """`value` with each `${VAR}` (or `${VAR:-default}`) replaced from the environment.

    Raises:
        ConfigError: A variable without a default is not set.
    """

    def lookup(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        found = os.environ.get(variable)
        if found is None and default is None:
            raise ConfigError(f"{where}: `${{{variable}}}` is not set; set {variable} in the environment.")
        return found if found is not None else (default or "")

    return _VARIABLE.sub(lookup, value)


@dataclass(frozen=True)
class _Getter:
    """Typed reads of one table's values, with errors that name the table and key."""

    table: dict[str, Any]
    where: str

    def string(self, key: str, default: str | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str) or (default is None and not value):
            raise ConfigError(f"{self.where}: `{key}` must be a non-empty string, got {cut_end(repr(value), 80)}.")
        return value

    def optional_string(self, key: str) -> str | None:
        return self.string(key) if key in self.table else None

    def strings(self, key: str) -> list[str]:
        value = self.table.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
            raise ConfigError(
                f"{self.where}: `{key}` must be a non-empty array of strings, got {cut_end(repr(value), 80)}."
            )
        return value

    def approval(self) -> tuple[str, ...]:
        value = self.table.get("approval", False)
        if isinstance(value, bool):
            return ("*",) if value else ()
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise ConfigError(
                f"{self.where}: `approval` must be true, false or an array of tool name patterns, "
                f"got {cut_end(repr(value), 80)}."
            )
        return tuple(value)

    def string_table(self, key: str) -> dict[str, str]:
        value = self.table.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
            raise ConfigError(f"{self.where}: `{key}` must be a table of strings, got {cut_end(repr(value), 80)}.")
        return dict(value)
