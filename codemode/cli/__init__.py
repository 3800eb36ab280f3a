"""The `codemode` command line: one module a subcommand, each with `register(subparsers)` and a `run(args)`."""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import select
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

# Subcommand modules by name, in the order help lists them. Only the module of the command being run is
# imported, so `codemode search` does not load the sandbox, the MCP SDK or the providers that others need.
COMMANDS: dict[str, str] = {
    "demo": "codemode.cli._demo",
    "chat": "codemode.cli._chat",
    "exec": "codemode.cli._exec",
    "search": "codemode.cli._search",
    "check": "codemode.cli._check",
    "eval-search": "codemode.cli._eval_search",
    "serve": "codemode.cli._serve",
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: only the subcommand `argv` starts with, or every subcommand (for help and errors)."""
    parser = argparse.ArgumentParser(prog="codemode", description="One fixed `code` tool for a whole tool catalog.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = COMMANDS.get(argv[0]) if argv else None
    for module_name in [chosen] if chosen else COMMANDS.values():
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
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    status: int = args.run(args)
    return status


ONE_SHOT_COMMANDS = frozenset({"search", "check"})
"""Commands that run no model code and exit: the `codemode` program runs them with the cyclic collector off."""


def console() -> int:
    """The `codemode` program: `main` on `sys.argv`.

    It ends quietly when what reads its output stops (`| head`), and on Ctrl-C says so in one line (status 130).
    """
    argv = sys.argv[1:]
    if argv[:1] and argv[0] in ONE_SHOT_COMMANDS:
        # after reading 10,000 tools, collections walking them cost a third of the start; nothing here outlives the exit
        gc.disable()
    try:
        status = main(argv)
        sys.stdout.flush()
    except KeyboardInterrupt:  # Ctrl-C: the runs were cancelled and their processes stopped on the way out
        print("codemode: interrupted", file=sys.stderr, flush=True)
        if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()[1:]):
            sys.stdout.flush()
            os._exit(130)  # a sync tool still running in its thread cannot be stopped: exit without waiting for it
        return 130
    except BaseException as error:
        if not (_broken_pipe(error) and _stdout_closed()):
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the flush at exit writes nowhere
        return 1
    return status


def _broken_pipe(error: BaseException) -> bool:
    """Whether `error` is a `BrokenPipeError`, or a group (from a task group) of nothing else."""
    if isinstance(error, BaseExceptionGroup):
        return all(_broken_pipe(inner) for inner in error.exceptions)
    return isinstance(error, BrokenPipeError)


def _stdout_closed() -> bool:
    """Whether the reader of stdout has gone: a pipe whose other end is closed (not an MCP server's, say)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


if __name__ == "__main__":
    sys.exit(console())
