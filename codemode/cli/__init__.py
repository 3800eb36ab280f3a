"""The `codemode` command line: one module a subcommand, each with `register(subparsers)` and a `run(args)`."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

# Subcommand modules, imported only when the command line is parsed so `import codemode` stays cheap.
COMMANDS: tuple[str, ...] = (
    "codemode.cli._demo",
    "codemode.cli._chat",
    "codemode.cli._exec",
    "codemode.cli._search",
    "codemode.cli._eval_search",
    "codemode.cli._serve",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="codemode", description="One fixed `code` tool for a whole tool catalog.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMANDS:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
