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
[[tools]]
openapi = "petstore.json"            # an OpenAPI description, file or URL (optional: base_url, name, headers,
credentials = { api_key = "${PETSTORE_KEY}" }   # credentials, include, exclude, prefix); `${VAR}` reads the env
```

Python, module, JSONL and MCP tables also take `approval`: `true` (every call of the source's tools needs a
person's approval) or a list of shell-style patterns of the source's own tool names (`["delete_*", "refund"]`).

Relative paths are relative to the config file. Reading (`load_config`) checks the shape of every table;
building (`build_catalog`) imports and loads the sources, in order, into one catalog.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import importlib
import importlib.util
import os
import re
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

_KINDS: Final = ("python", "module", "jsonl", "mcp", "mcp_url", "openapi")
_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"prefix", "aliases", "approval"}),
    "module": frozenset({"prefix", "aliases", "approval"}),
    "jsonl": frozenset({"prefix", "aliases", "approval"}),
    "mcp": frozenset({"name", "env", "cwd", "approval"}),
    "mcp_url": frozenset({"name", "headers", "approval"}),
    "openapi": frozenset({"base_url", "name", "headers", "credentials", "include", "exclude", "prefix"}),
}
_VARIABLE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, kw_only=True)
class _SourceTable:
    """What every source has: its place in the config."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    approval: tuple[str, ...] = ()
    """Patterns of the source's own tool names (before any prefix) whose calls need a person's approval."""


def needs_approval(patterns: tuple[str, ...], name: str) -> bool:
    """Whether a tool named `name` matches one of a source's `approval` patterns (shell-style, `*` for all)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@dataclass(frozen=True, kw_only=True)
class _LocalSource(_SourceTable):
    """What the sources of local definitions have: a name prefix and hand-made aliases."""

    prefix: str = ""
    """Prepended to each tool name."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Hand-made aliases by (prefixed) tool name, for names whose derived aliases clash."""


@dataclass(frozen=True, kw_only=True)
class PythonSource(_LocalSource):
    """A Python file that defines `catalog`."""

    path: Path
    """The file, resolved against the config's folder."""


@dataclass(frozen=True, kw_only=True)
class ModuleSource(_LocalSource):
    """An importable module that defines `catalog`."""

    module: str
    """The dotted module name."""


@dataclass(frozen=True, kw_only=True)
class JsonlSource(_LocalSource):
    """A JSONL file of tool definitions without handlers."""

    path: Path
    """The file, resolved against the config's folder."""


@dataclass(frozen=True, kw_only=True)
class McpStdioSource(_SourceTable):
    """An MCP server started as a subprocess and spoken to over stdio."""

    command: tuple[str, ...]
    """The program and its arguments."""
    name: str | None = None
    """A name for the server."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables for the server."""
    cwd: Path | None = None
    """The server's working directory, resolved against the config's folder."""


@dataclass(frozen=True, kw_only=True)
class McpHttpSource(_SourceTable):
    """An MCP server reached over streamable HTTP."""

    url: str
    """The server's endpoint."""
    name: str | None = None
    """A name for the server."""
    headers: dict[str, str] = field(default_factory=dict)
    """HTTP headers sent with every request."""


@dataclass(frozen=True, kw_only=True)
class OpenApiSource(_SourceTable):
    """An HTTP API described by OpenAPI; each operation a tool (see `codemode.openapi`)."""

    spec: str
    """The description: a URL, or a file path resolved against the config's folder."""
    base_url: str | None = None
    """Where the API is, when not the description's first server."""
    name: str | None = None
    """A name for the API in messages."""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    """HTTP headers sent with every call (`${VAR}` read from the environment)."""
    credentials: dict[str, str] = field(default_factory=dict, repr=False)
    """A secret per security scheme of the description (`${VAR}` read from the environment)."""
    include: tuple[str, ...] = ()
    """Only the operations with one of these tags or operationIds."""
    exclude: tuple[str, ...] = ()
    """Leave out the operations with one of these tags or operationIds."""
    prefix: str = ""
    """Prepended to each tool name."""


Source: TypeAlias = PythonSource | ModuleSource | JsonlSource | McpStdioSource | McpHttpSource | OpenApiSource


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


def build_catalog(config: Config, *, skip_mcp: bool = False, skip_openapi: bool = False) -> Catalog:
    """Load every source of `config`, in order, into a new catalog.

    MCP servers need connections that someone owns: `codemode.mcp.sources_from_config(config)` builds the
    catalog with them (calling this with `skip_mcp=True` for the other sources). OpenAPI sources need HTTP
    clients: `codemode.openapi.OpenApiSources(catalog, openapi_apis(config))` adds them (`skip_openapi=True`).

    Raises:
        ConfigError: A source cannot be loaded, or its tools clash with those of an earlier source, or the
            config has MCP (OpenAPI) sources and `skip_mcp` (`skip_openapi`) is false.
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
                case OpenApiSource():
                    if not skip_openapi:
                        raise ConfigError(
                            f"{where}: OpenAPI sources need HTTP clients: add them with `async with "
                            "codemode.openapi.OpenApiSources(catalog, openapi_apis(config))`."
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
