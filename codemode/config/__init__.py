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
approval = ["delete*", "refund*"]    # optional on every table: the calls that need a person's approval

[serve]                              # optional: who may call `codemode serve` over HTTP (`codemode.config._serve`)
api_keys = { ci-bot = "${CI_BOT_KEY}" }
```

Every table also takes `approval`: `true` (every call of the source's tools needs a person's approval) or a list
of shell-style patterns of the source's own tool names (`["delete_*", "refund"]`; an OpenAPI source's own names
are its operations' names, before `prefix`).

Relative paths are relative to the config file. Reading (`load_config`) checks the shape of every table;
building (`build_catalog`) imports and loads the sources, in order, into one catalog. The typed sources are
`codemode.config._sources`'s and the checks of each table `codemode.config._read`'s; both are re-exported here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from codemode.catalog import Catalog
from codemode.catalog._sources import approval_problem, needs_approval, shown_names
from codemode.config._read import expand_env, parse_source
from codemode.config._serve import parse_serve
from codemode.config._sources import (
    Config,
    JsonlSource,
    McpHttpSource,
    McpStdioSource,
    ModuleSource,
    OpenApiSource,
    PythonSource,
    Source,
)
from codemode.errors import CatalogError, ConfigError

if TYPE_CHECKING:
    from types import ModuleType

    from codemode.tools import Tool

__all__ = [
    "Config",
    "JsonlSource",
    "McpHttpSource",
    "McpStdioSource",
    "ModuleSource",
    "OpenApiSource",
    "PythonSource",
    "Source",
    "build_catalog",
    "expand_env",
    "load_config",
]


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
    unknown = sorted(set(data) - {"tools", "serve"})
    if unknown:
        raise ConfigError(f"{path}: unknown top-level keys {unknown}; a config has `[[tools]]` and `[serve]`.")
    tables = data.get("tools", [])
    if not isinstance(tables, list):
        raise ConfigError(f"{path}: `tools` must be an array of tables, written `[[tools]]`.")
    sources = tuple(parse_source(table, f"tools[{i}]", path) for i, table in enumerate(tables))
    serve = parse_serve(data["serve"], path) if "serve" in data else None
    return Config(path=path, sources=sources, serve=serve)


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
                    catalog.extend(_approved(tools, source), prefix=source.prefix, aliases=source.aliases)
                case JsonlSource() if source.approval:
                    loaded = Catalog()
                    loaded.load_jsonl(source.path)
                    catalog.extend(_approved(loaded, source), prefix=source.prefix, aliases=source.aliases)
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


def _approved(tools: Catalog, source: PythonSource | ModuleSource | JsonlSource) -> list[Tool]:
    """`tools`, those matching the source's `approval` patterns marked as needing it.

    Raises:
        CatalogError: A pattern matches none of the tools.
    """
    patterns, prefix = source.approval, source.prefix
    names = [shown_names(tool.name, prefix, source.aliases.get(f"{prefix}{tool.name}")) for tool in tools]
    problem = approval_problem(patterns, names)
    if problem is not None:
        raise CatalogError(problem)
    return [
        dataclasses.replace(tool, approval=True) if needs_approval(patterns, *shown) else tool
        for tool, shown in zip(tools, names, strict=True)
    ]


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
