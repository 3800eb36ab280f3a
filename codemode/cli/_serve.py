"""`codemode serve --config FILE`: the `code` tool as an MCP server, over stdio (default) or streamable HTTP."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import anyio

from codemode.cli._catalogs import (
    add_config_argument,
    add_isolation_argument,
    add_log_argument,
    add_persist_argument,
    add_search_argument,
    report_failures,
    search_unavailable,
    sources_from_args,
)
from codemode.cli._serve_auth import add_auth_arguments, serve_settings
from codemode.code_mode import CodeMode
from codemode.config import load_config
from codemode.errors import CodemodeError
from codemode.policy import Policy

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `serve` subcommand."""
    parser = subparsers.add_parser("serve", help="expose the `code` tool as an MCP server")
    add_config_argument(parser)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (http; default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (http; default 8000)")
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="keep no session state (http): discovery state travels in each request's `_meta`",
    )
    add_isolation_argument(parser)
    add_persist_argument(parser)
    add_search_argument(parser)
    add_log_argument(parser)
    add_auth_arguments(parser)
    parser.epilog = (
        "Set CODEMODE_APPROVAL_KEY to the same secret on every replica so that a paused run (a call that needs "
        "approval) can be resumed by any of them; by default each process signs with its own random key."
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or the process is interrupted (http); 2 on bad input."""
    try:
        from codemode.mcp import serve_http, serve_stdio  # the `mcp` extra, needed only by this command
        from codemode.mcp._auth import check_exposure, describe_access
    except ImportError as error:
        print(f"codemode: {error}", file=sys.stderr)
        return 2
    if search_unavailable(args):
        return 2
    try:
        config = load_config(args.config)
        settings = serve_settings(args, config)
        if args.transport == "http":
            check_exposure(args.host, settings, allow_unauthenticated=args.allow_unauthenticated)
    except CodemodeError as error:
        print(f"codemode: {error}", file=sys.stderr)
        return 2
    sources = sources_from_args(args, config)
    if sources is None:
        return 2

    async def main() -> int:
        async with sources:
            report_failures(sources)
            async with CodeMode(
                sources.catalog,
                isolation=args.isolation,
                max_runs=args.max_runs,
                search=args.search,
                persist_variables=args.persist_variables,
                log=args.log,
                policy=Policy(secret=os.environ.get("CODEMODE_APPROVAL_KEY") or None),
            ) as cm:
                print(f"codemode: sandbox {cm.sandbox.layers}", file=sys.stderr, flush=True)
                if args.transport == "http":
                    print(f"codemode: serving MCP at http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
                    for line in describe_access(args.host, args.port, "/mcp", settings):
                        print(f"codemode: {line}", file=sys.stderr, flush=True)
                    await serve_http(
                        cm,
                        host=args.host,
                        port=args.port,
                        stateless=args.stateless,
                        settings=settings,
                        allow_unauthenticated=args.allow_unauthenticated,
                    )
                else:
                    await serve_stdio(cm, stateless=args.stateless)
        return 0

    return anyio.run(main)
