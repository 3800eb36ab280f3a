"""The `codemode` command line: one module a subcommand, each with `register(subparsers)` and a `run(args)`."""

from __future__ import annotations

import argparse
import importlib
import logging
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


class _StderrHandler(logging.Handler):
    """Warnings as `codemode: <message>` lines on whatever `sys.stderr` is when they happen."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"codemode: {record.getMessage()}", file=sys.stderr)


def _log_to_stderr() -> None:
    """Print codemode's warnings once each, as lines a person reads (not logging's bare last-resort output)."""
    logger = logging.getLogger("codemode")
    if not any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
        logger.addHandler(_StderrHandler(logging.WARNING))  # found first, so logging's last resort stays silent


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    _log_to_stderr()
    parser = build_parser()
    args = parser.parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
