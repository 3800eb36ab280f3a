"""What each `[[tools]]` table of a config is, as typed values: a source of tools, and the config that lists them.

Reading TOML into these is `codemode.config._read`'s job; loading them into a catalog, `codemode.config`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from pathlib import Path

    from codemode.config._serve import ServeSettings


@dataclass(frozen=True, kw_only=True)
class _SourceTable:
    """What every source has: its place in the config."""

    table: str
    """Where the source is in the config, for messages: `tools[0]`."""
    approval: tuple[str, ...] = ()
    """Patterns of the source's own tool names (before any prefix) whose calls need a person's approval."""


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
    serve: ServeSettings | None = None
    """The `[serve]` table, if any: who may call `codemode serve` over HTTP (`codemode.config._serve`)."""
