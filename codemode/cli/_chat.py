"""`codemode chat PROMPT --provider P --model M`: the agent loop through a provider's official SDK."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

import anyio

from codemode.agent import DEFAULT_SYSTEM, Agent
from codemode.cli._approve import ask_in_terminal
from codemode.cli._catalogs import (
    add_allow_missing_argument,
    add_config_argument,
    add_isolation_argument,
    add_log_argument,
    add_persist_argument,
    add_search_argument,
    add_verbose_argument,
    opened_catalog,
    search_unavailable,
)
from codemode.cli._models import PROVIDERS, missing_key, model_for
from codemode.cli._show import Transcript, print_usage
from codemode.code_mode import CodeMode
from codemode.demo.catalog import build_demo_catalog

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.catalog import Catalog
    from codemode.providers.base import Model

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `chat` subcommand."""
    parser = subparsers.add_parser("chat", help="run the agent loop through a provider's SDK")
    parser.add_argument("prompt", help="what to ask")
    parser.add_argument("--provider", choices=sorted(PROVIDERS), required=True)
    parser.add_argument("--model", required=True, help="the provider's model name")
    add_config_argument(parser, required=False)
    add_allow_missing_argument(parser)
    add_verbose_argument(parser)
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--system", default=DEFAULT_SYSTEM, help="the system prompt")
    parser.add_argument("--no-stream", action="store_true", help="wait for whole responses")
    parser.add_argument(
        "--placement",
        choices=["tool_result", "user", "system"],
        default="tool_result",
        help="where announcements of discovered tools go: in the tool result (default), a user message, or a "
        "system message where the provider has one",
    )
    add_isolation_argument(parser)
    add_persist_argument(parser)
    add_search_argument(parser)
    add_log_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Chat until the model answers; exit 0 on an answer, 1 otherwise, 2 on bad input."""
    if search_unavailable(args):
        return 2
    missing = missing_key(args.provider)
    if missing is not None:
        print(missing, file=sys.stderr)
        return 2
    try:
        model = model_for(args.provider, stream=not args.no_stream)
    except ImportError as error:
        print(f"codemode: {error}", file=sys.stderr)
        return 2

    async def main() -> int:
        async with _catalog(args) as catalog:
            if catalog is None:
                return 2
            return await _chat(args, catalog, model)

    return anyio.run(main)


@contextlib.asynccontextmanager
async def _catalog(args: argparse.Namespace) -> AsyncIterator[Catalog | None]:
    if not args.config:
        yield build_demo_catalog()
        return
    async with opened_catalog(args) as catalog:
        yield catalog


async def _tick(transcript: Transcript) -> None:
    """Let the transcript start showing a long run's calls even while none starts or ends."""
    while True:
        await anyio.sleep(0.25)
        transcript.tick()


async def _chat(args: argparse.Namespace, catalog: Catalog, model: Model) -> int:
    transcript = Transcript(progress_after=0.0 if args.verbose else 1.0)
    async with CodeMode(
        catalog,
        isolation=args.isolation,
        max_runs=args.max_runs,
        search=args.search,
        persist_variables=args.persist_variables,
        log=args.log,
    ) as cm:
        agent = Agent(
            cm,
            model,
            model_name=args.model,
            system=args.system,
            max_steps=args.max_steps,
            placement=args.placement,
            events=transcript.events(),
            approve=ask_in_terminal,
        )
        async with anyio.create_task_group() as ticking:
            ticking.start_soon(_tick, transcript)
            result = await agent.run(args.prompt)
            ticking.cancel_scope.cancel()
    print()
    if result.error:
        print(f"codemode: {result.error}", file=sys.stderr)
        return 1
    print_usage(result)
    if result.stopped == "max_tokens":
        print(f"codemode: the answer was cut at the output limit ({agent.max_tokens:,} tokens)", file=sys.stderr)
        return 1
    if result.stopped != "answer":
        print(f"codemode: no answer after {args.max_steps} steps", file=sys.stderr)
        return 1
    return 0
