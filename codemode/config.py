"""TOML config: where a catalog's tools come from, read into typed sources and built into a `Catalog`.

A config is a list of `[[tools]]` tables, each naming one source:

```toml
[[tools]]
python = "tools/weather.py"          # a file that defines `catalog` (a `codemode.Catalog`)
[[tools]]
module = "myapp.tools"               # an importable module that defines `catalog`
[[tools]]
jsonl = "data/tools.jsonl"           # definitions without handlers
prefix = "bfcl."                     # optional on python, module and jsonl: prepended to every name
aliases = { "car.rental" = "car_rental_dotted" }   # optional: aliases for names whose aliases clash
[[tools]]
mcp = ["uvx", "some-mcp-server"]     # an MCP server over stdio (optional: name, env, cwd)
[[tools]]
mcp_url = "http://127.0.0.1:8000/mcp"   # an MCP server over streamable HTTP (optional: name, headers)
approval = ["delete_*", "send_email"]   # optional on every source: calls of these tools (or `true`: all) need
                                        # a person's approval; patterns match the source's own tool names
```

Relative paths are relative to the config file. Reading (`load_config`) checks the shape of every table;
building (`build_catalog`) imports and loads the sources, in order, into one catalog.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import importlib
import importlib.util
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from codemode.catalog import Catalog
from codemode.errors import CatalogError, ConfigError

if TYPE_CHECKING:
    from types import ModuleType

    from codemode.tools import Tool

_KINDS: Final = ("python", "module", "jsonl", "mcp", "mcp_url")
_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"prefix", "aliases", "approval"}),
    "module": frozenset({"prefix", "aliases", "approval"}),
    "jsonl": frozenset({"prefix", "aliases", "approval"}),
    "mcp": frozenset({"name", "env", "cwd", "approval"}),
    "mcp_url": frozenset({"name", "headers", "approval"}),
}


def needs_approval(patterns: tuple[str, ...], name: str) -> bool:
    """Whether a tool named `name` matches one of a source's `approval` patterns (shell-style, `*` for all)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@dataclass(frozen=True, kw_only=True)
class PythonSource:
    """A Python file that defines `catalog`."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    path: Path
    """The file, resolved against the config's folder."""
    prefix: str = ""
    """Prepended to each tool name."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Hand-made aliases by (prefixed) tool name, for names whose derived aliases clash."""
    approval: tuple[str, ...] = ()
    """Patterns of the tool names (before the prefix) whose calls need approval."""


@dataclass(frozen=True, kw_only=True)
class ModuleSource:
    """An importable module that defines `catalog`."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    module: str
    """The dotted module name."""
    prefix: str = ""
    """Prepended to each tool name."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Hand-made aliases by (prefixed) tool name, for names whose derived aliases clash."""
    approval: tuple[str, ...] = ()
    """Patterns of the tool names (before the prefix) whose calls need approval."""


@dataclass(frozen=True, kw_only=True)
class JsonlSource:
    """A JSONL file of tool definitions without handlers."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    path: Path
    """The file, resolved against the config's folder."""
    prefix: str = ""
    """Prepended to each tool name."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Hand-made aliases by (prefixed) tool name, for names whose derived aliases clash."""
    approval: tuple[str, ...] = ()
    """Patterns of the tool names (before the prefix) whose calls need approval."""


@dataclass(frozen=True, kw_only=True)
class McpStdioSource:
    """An MCP server started as a subprocess and spoken to over stdio."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    command: tuple[str, ...]
    """The program and its arguments."""
    name: str | None = None
    """A name for the server."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables for the server."""
    cwd: Path | None = None
    """The server's working directory, resolved against the config's folder."""
    approval: tuple[str, ...] = ()
    """Patterns of the server's tool names whose calls need approval."""


@dataclass(frozen=True, kw_only=True)
class McpHttpSource:
    """An MCP server reached over streamable HTTP."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    url: str
    """The server's endpoint."""
    name: str | None = None
    """A name for the server."""
    headers: dict[str, str] = field(default_factory=dict)
    """HTTP headers sent with every request."""
    approval: tuple[str, ...] = ()
    """Patterns of the server's tool names whose calls need approval."""


Source: TypeAlias = PythonSource | ModuleSource | JsonlSource | McpStdioSource | McpHttpSource


@dataclass(frozen=True, kw_only=True)
class Config:
    """A parsed config file."""

    path: Path
    """The config file."""
    sources: tuple[Source, ...] = ()
    """The `[[tools]]` tables, in file order."""


def load_config(path: str | Path) -> Config:
    """Read and check a TOML config; nothing is imported or loaded yet.

    Raises:
        ConfigError: The file cannot be read, is not TOML (the message has the line), or a table is invalid
            (the message names the table, `tools[2]`).

    Example:
        ```python
        catalog = build_catalog(load_config("codemode.toml"))
        ```
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"Cannot read the config {str(path)!r}: {e}") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    unknown = sorted(set(data) - {"tools"})
    if unknown:
        raise ConfigError(f"{path}: unknown top-level keys {unknown}; a config has only `[[tools]]` tables.")
    tables = data.get("tools", [])
    if not isinstance(tables, list):
        raise ConfigError(f"{path}: `tools` must be an array of tables, written `[[tools]]`.")
    sources = tuple(_parse_source(table, f"tools[{i}]", path) for i, table in enumerate(tables))
    return Config(path=path, sources=sources)


def build_catalog(config: Config, *, skip_mcp: bool = False) -> Catalog:
    """Load every source of `config`, in order, into a new catalog.

    MCP servers need connections that someone owns: `codemode.mcp.sources_from_config(config)` builds the
    catalog with them (calling this with `skip_mcp=True` for the other sources).

    Raises:
        ConfigError: A source cannot be loaded, or its tools clash with those of an earlier source, or the
            config has MCP sources and `skip_mcp` is false.
    """
    catalog = Catalog()
    for source in config.sources:
        where = f"{config.path}: {source.table}"
        try:
            match source:
                case PythonSource() | ModuleSource():
                    tools = _load_catalog_from(source, where)
                    catalog.extend(_approved(tools, source.approval), prefix=source.prefix, aliases=source.aliases)
                case JsonlSource() if source.approval:
                    loaded = Catalog()
                    loaded.load_jsonl(source.path)
                    catalog.extend(_approved(loaded, source.approval), prefix=source.prefix, aliases=source.aliases)
                case JsonlSource():
                    catalog.load_jsonl(source.path, prefix=source.prefix, aliases=source.aliases)
                case McpStdioSource() | McpHttpSource():
                    if not skip_mcp:
                        raise ConfigError(
                            f"{where}: MCP sources need connections: build this config's catalog with "
                            "`async with codemode.mcp.sources_from_config(config) as sources` (the `mcp` extra)."
                        )
        except CatalogError as e:
            raise ConfigError(f"{where}: {e}") from e
    return catalog


def _approved(tools: Catalog, patterns: tuple[str, ...]) -> list[Tool]:
    """`tools`, those matching `patterns` marked as needing approval."""
    return [dataclasses.replace(tool, approval=True) if needs_approval(patterns, tool.name) else tool for tool in tools]


def _parse_source(table: object, name: str, path: Path) -> Source:
    where = f"{path}: {name}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, written `[[tools]]`.")
    kinds = [kind for kind in _KINDS if kind in table]
    if len(kinds) != 1:
        raise ConfigError(f"{where}: a tools table has exactly one of the keys {list(_KINDS)}, got {sorted(table)}.")
    kind = kinds[0]
    unknown = sorted(set(table) - {kind} - _OPTIONS[kind])
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}; a `{kind}` source takes {sorted(_OPTIONS[kind])}.")
    get = _Getter(table, where)
    base = path.parent
    prefix, aliases, approval = get.string("prefix", ""), get.string_table("aliases"), get.approval()
    match kind:
        case "python":
            return PythonSource(
                table=name, path=base / get.string(kind), prefix=prefix, aliases=aliases, approval=approval
            )
        case "module":
            return ModuleSource(table=name, module=get.string(kind), prefix=prefix, aliases=aliases, approval=approval)
        case "jsonl":
            return JsonlSource(
                table=name, path=base / get.string(kind), prefix=prefix, aliases=aliases, approval=approval
            )
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
        case _:
            return McpHttpSource(
                table=name,
                url=get.string(kind),
                name=get.optional_string("name"),
                headers=get.string_table("headers"),
                approval=approval,
            )


@dataclass(frozen=True)
class _Getter:
    """Typed reads of one table's values, with errors that name the table and key."""

    table: dict[str, Any]
    where: str

    def string(self, key: str, default: str | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str) or (default is None and not value):
            raise ConfigError(f"{self.where}: `{key}` must be a non-empty string, got {value!r:.80}.")
        return value

    def optional_string(self, key: str) -> str | None:
        return self.string(key) if key in self.table else None

    def strings(self, key: str) -> list[str]:
        value = self.table.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{self.where}: `{key}` must be a non-empty array of strings, got {value!r:.80}.")
        return value

    def approval(self) -> tuple[str, ...]:
        value = self.table.get("approval", False)
        if isinstance(value, bool):
            return ("*",) if value else ()
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise ConfigError(
                f"{self.where}: `approval` must be true, false or an array of tool name patterns, got {value!r:.80}."
            )
        return tuple(value)

    def string_table(self, key: str) -> dict[str, str]:
        value = self.table.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
            raise ConfigError(f"{self.where}: `{key}` must be a table of strings, got {value!r:.80}.")
        return dict(value)


def _load_catalog_from(source: PythonSource | ModuleSource, where: str) -> Catalog:
    """Run the file or import the module, and return the `catalog` it defines."""
    if isinstance(source, PythonSource) and not source.path.is_file():
        raise ConfigError(f"{where}: no Python file {str(source.path)!r}.")
    what = f"module {source.module!r}" if isinstance(source, ModuleSource) else f"file {str(source.path)!r}"
    try:
        module = importlib.import_module(source.module) if isinstance(source, ModuleSource) else _run_file(source.path)
    except Exception as e:  # the user's module can raise anything while it runs; report it with its location
        raise ConfigError(f"{where}: importing {what} failed: {type(e).__name__}: {e}") from e
    catalog = getattr(module, "catalog", None)
    if catalog is None:
        raise ConfigError(
            f"{where}: {what} defines no `catalog`; add `catalog = codemode.Catalog()` and register its tools "
            "with `@catalog.tool`."
        )
    if not isinstance(catalog, Catalog):
        raise ConfigError(f"{where}: `catalog` in {what} must be a `codemode.Catalog`, got {type(catalog).__name__}.")
    return catalog


def _run_file(path: Path) -> ModuleType:
    """Execute a Python file as a module of its own, whatever its folder."""
    resolved = path.resolve()
    # A module name per file (path digest), so that two files with one stem never replace each other.
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    module_name = f"_codemode_config_{resolved.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise ImportError(f"{str(path)!r} cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # registered first, as pydantic and dataclasses resolve names through it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
