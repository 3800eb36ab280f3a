"""`codemode exec FILE|- --config FILE`: run a script against a catalog, as the model's code would run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from codemode.cli._catalogs import (
    add_allow_missing_argument,
    add_config_argument,
    add_isolation_argument,
    add_log_argument,
    add_search_argument,
    add_verbose_argument,
    opened_catalog,
    print_call,
    search_unavailable,
)
from codemode.code_mode import CodeMode

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `exec` subcommand."""
    parser = subparsers.add_parser("exec", help="run a script in the sandbox against the configured catalog")
    parser.add_argument("script", metavar="FILE|-", help="Python file to run, or - for standard input")
    add_config_argument(parser)
    add_allow_missing_argument(parser)
    add_verbose_argument(parser)
    add_isolation_argument(parser)
    add_search_argument(parser)
    add_log_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the script; exit 0 when it succeeded, 1 when it failed, 2 on bad input."""
    if search_unavailable(args):
        return 2
    try:
        code = sys.stdin.read() if args.script == "-" else Path(args.script).read_text(encoding="utf-8")
    except OSError as error:
        print(f"codemode: cannot read {args.script!r}: {error.strerror}", file=sys.stderr)
        return 2

    async def main() -> int:
        async with opened_catalog(args) as catalog:
            if catalog is None:
                return 2
            async with CodeMode(
                catalog, isolation=args.isolation, max_runs=args.max_runs, search=args.search, log=args.log
            ) as cm:
                result = await cm.execute(code, cm.new_state(), on_event=print_call if args.verbose else None)
        print(result.text)
        if result.announcement:  # what a model would be told of the tools used: not the script's output
            print(result.announcement, file=sys.stderr)
        return 0 if result.ok else 1

    return anyio.run(main)
