"""Shared by the subcommands: `--config FILE` to a catalog, with config errors printed for a person; `--search`.

A config with MCP servers or OpenAPI descriptions needs connections: `opened_catalog` keeps them open for a
command's whole run (`exec`, `chat`), `sources_from_args` gives the owning `ConfigSources` (for `serve`), and
`catalog_from_args` connects once to list the tools, after which each call opens a connection of its own
(`search`, which only reads definitions).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING, Self

import anyio

from codemode.config import McpHttpSource, McpStdioSource, OpenApiSource, build_catalog, load_config
from codemode.errors import CodemodeError
from codemode.events import CallFinished
from codemode.run._text import summary

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from types import TracebackType

    from codemode.catalog import Catalog
    from codemode.config import Config
    from codemode.events import RunEvent
    from codemode.mcp import McpSources
    from codemode.openapi import OpenApiSources


def add_config_argument(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Add `--config FILE`."""
    parser.add_argument("--config", required=required, metavar="FILE", help="TOML config describing the catalog")


def add_search_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--search bm25|hybrid`."""
    parser.add_argument(
        "--search",
        choices=("bm25", "hybrid"),
        default="bm25",
        help="how tools.search ranks: bm25 (default) or hybrid, BM25F fused with embeddings (the `semantic` extra)",
    )


def add_isolation_argument(parser: argparse.ArgumentParser, *, max_runs: bool = True) -> None:
    """Add `--isolation process|inline`, and `--max-runs N` unless told not to."""
    parser.add_argument(
        "--isolation",
        choices=["process", "inline"],
        default="process",
        help="process (default): each run in a confined process of its own; inline: no boundary at all, for trusted "
        "code and tests",
    )
    if max_runs:
        parser.add_argument(
            "--max-runs",
            type=whole_number,
            default=None,
            metavar="N",
            help="runs in flight at once (default 64); more wait their turn. In process isolation each costs a "
            "process of a few MB while it waits on its tools",
        )


def whole_number(text: str) -> int:
    """An option's value that must be a whole number of at least 1, for `argparse`'s `type=`."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def add_log_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--log FILE`."""
    parser.add_argument(
        "--log",
        metavar="FILE",
        help="append one JSON line per run (the code, each tool call with arguments, duration, outcome) to FILE",
    )


def add_persist_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--persist-variables`."""
    parser.add_argument(
        "--persist-variables",
        action="store_true",
        help="keep the top-level variables a run leaves (JSON data only) for the next run of the conversation",
    )


def search_unavailable(args: argparse.Namespace) -> bool:
    """True, after printing the install command, when `--search hybrid` was asked for without its extra."""
    if args.search != "hybrid":
        return False
    try:
        import codemode.search.hybrid  # noqa: F401  # the optional `semantic` extra
    except ImportError as error:
        print(f"codemode: {error}", file=sys.stderr)
        return True
    return False


def catalog_from_args(args: argparse.Namespace) -> Catalog | None:
    """The catalog the config describes, or None after printing why it cannot be built."""
    try:
        config = load_config(args.config)
        if not _needs_connections(config):
            return build_catalog(config)
    except (CodemodeError, OSError) as error:
        print(f"codemode: {error}", file=sys.stderr)
        return None
    sources = sources_from_args(args, config)
    if sources is None:
        return None

    async def list_tools() -> bool:
        async with sources:
            return refused(args, sources)

    return None if anyio.run(list_tools) else sources.catalog


@contextlib.asynccontextmanager
async def opened_catalog(args: argparse.Namespace) -> AsyncIterator[Catalog | None]:
    """The config's catalog with its MCP servers connected for the duration, or None after printing why not."""
    try:
        config = load_config(args.config)
        if not _needs_connections(config):
            catalog = build_catalog(config)
    except (CodemodeError, OSError) as error:
        print(f"codemode: {error}", file=sys.stderr)
        yield None
        return
    if not _needs_connections(config):
        yield catalog
        return
    sources = sources_from_args(args, config)
    if sources is None:
        yield None
        return
    async with sources:
        yield None if refused(args, sources) else sources.catalog


def sources_from_args(args: argparse.Namespace, config: Config | None = None) -> ConfigSources | None:
    """The config's catalog, MCP servers and OpenAPI descriptions (not yet connected), or None after printing why."""
    try:
        return ConfigSources(config or load_config(args.config))
    except (CodemodeError, OSError, ImportError) as error:
        print(f"codemode: {error}", file=sys.stderr)
        return None


class ConfigSources:
    """A config's catalog with the sources that need connections: its MCP servers and its OpenAPI clients."""

    def __init__(self, config: Config) -> None:
        self.catalog = build_catalog(config, skip_mcp=True, skip_openapi=True)
        self.mcp: McpSources | None = None
        self.openapi: OpenApiSources | None = None
        if any(isinstance(source, McpStdioSource | McpHttpSource) for source in config.sources):
            from codemode.mcp import McpSources, mcp_servers  # the `mcp` extra, needed only for MCP sources

            self.mcp = McpSources(self.catalog, mcp_servers(config))
        if any(isinstance(source, OpenApiSource) for source in config.sources):
            from codemode.openapi import OpenApiSources, openapi_apis

            self.openapi = OpenApiSources(self.catalog, openapi_apis(config))
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            for sources in (self.mcp, self.openapi):
                if sources is not None:
                    await stack.enter_async_context(sources)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()


def _needs_connections(config: Config) -> bool:
    return any(isinstance(source, McpStdioSource | McpHttpSource | OpenApiSource) for source in config.sources)


def report_failures(sources: ConfigSources) -> int:
    """How many servers, descriptions, tools or operations were left out (each was logged, once, as it happened).

    Tools kept with relaxed argument checks (`kept, but ...`) are not counted: they work.
    """
    reasons = [
        *(sources.mcp.failures.values() if sources.mcp else ()),
        *(sources.openapi.failures.values() if sources.openapi else ()),
    ]
    return sum(1 for reason in reasons if not reason.startswith("kept"))


def add_allow_missing_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--allow-missing`."""
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="go on without the sources (MCP servers, OpenAPI descriptions) that fail to load, instead of exiting 2",
    )


def add_verbose_argument(parser: argparse.ArgumentParser) -> None:
    """Add `-v`/`--verbose`."""
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show each tool call with its arguments, outcome and duration"
    )


def print_call(event: RunEvent) -> None:
    """One line on stderr for each tool call that ended (or was in flight when the run stopped)."""
    if isinstance(event, CallFinished):
        call = event.call
        outcome = "in flight" if call.in_flight else ("ok" if call.ok else "failed")
        error = f": {call.error}" if call.error else ""
        print(f"codemode: call {summary(call)} {outcome} {call.duration:.2f} s{error}", file=sys.stderr, flush=True)


def refused(args: argparse.Namespace, sources: ConfigSources) -> bool:
    """True, after saying so, when sources failed to load and `--allow-missing` was not given."""
    failed = report_failures(sources)
    if not failed or getattr(args, "allow_missing", False):
        return False
    what = "a source" if failed == 1 else f"{failed} sources"
    print(
        f"codemode: {what} failed to load (see above); fix the config, or pass --allow-missing to go on without it",
        file=sys.stderr,
    )
    return True
