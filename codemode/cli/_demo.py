"""`codemode demo`: the offline end-to-end run on the bundled sample catalog (a real model with `--provider`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import anyio

from codemode.agent import Agent
from codemode.cli._catalogs import add_isolation_argument
from codemode.cli._models import PROVIDERS, missing_key, model_for, wire_for
from codemode.cli._show import Transcript, print_usage
from codemode.code_mode import CodeMode
from codemode.demo.catalog import build_demo_catalog
from codemode.demo.report import Report, build_report
from codemode.demo.script import SCRIPT, TASK
from codemode.discovery import OPEN_TAG
from codemode.testing import ScriptedModel

if TYPE_CHECKING:
    import argparse

    from codemode.providers.base import Model
    from sandbox import JsonObject


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `demo` subcommand."""
    parser = subparsers.add_parser("demo", help="run the offline demo (a real model with --provider)")
    parser.add_argument("--provider", choices=sorted(PROVIDERS), help="use a real model through this provider's SDK")
    parser.add_argument("--model", help="the provider's model name (with --provider)")
    parser.add_argument(
        "--format",
        choices=sorted(PROVIDERS),
        default="anthropic",
        help="wire format of the offline scripted run (default: anthropic)",
    )
    add_isolation_argument(parser, max_runs=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 0 when the model answered."""
    if args.provider and not args.model:
        print("codemode: --provider needs --model NAME", file=sys.stderr)
        return 2
    missing = missing_key(args.provider) if args.provider else None
    if missing is not None:
        print(missing, file=sys.stderr)
        return 2
    return anyio.run(_demo, args)


async def _demo(args: argparse.Namespace) -> int:
    catalog = build_demo_catalog()
    model: Model = model_for(args.provider) if args.provider else ScriptedModel(wire_for(args.format), SCRIPT)
    transcript = Transcript()
    print(
        f"codemode demo: {len(catalog)} tools behind one `code` tool "
        f"({'model ' + args.model if args.provider else 'scripted model, offline'})\n"
    )
    print(f"user: {TASK}\n")
    async with CodeMode(catalog, isolation=args.isolation) as cm:
        agent = Agent(cm, model, model_name=args.model or "scripted", events=transcript.events())
        requests: list[JsonObject] = []
        discovered: list[list[str]] = []
        announced: list[int] = []

        def record(request: JsonObject) -> None:
            requests.append(request)
            discovered.append(list(agent.state.announced))
            announced.append(sum(len(t) for t in model.wire.history_texts(agent.messages) if OPEN_TAG in t))

        agent.events.on_request = record
        result = await agent.run(TASK)
    print()
    if result.error:
        print(f"codemode: {result.error}", file=sys.stderr)
        return 1
    print_usage(result)
    _print_summary(build_report(requests, catalog, discovered, announced), len(catalog))
    return 0 if result.stopped == "answer" else 1


def _print_summary(report: Report, catalog_size: int) -> None:
    reuse = report.reuse
    print("\nSummary")
    print(f"  requests                        {report.requests}")
    print(f"  `tools` bytes constant          {'yes' if report.tools_constant else 'NO'}")
    shares = " ".join(f"{share:.0%}" for share in reuse)
    print(f"  prompt reused by the next       {shares} (min {min(reuse, default=1.0):.1%})")
    print(f"  input tokens (bytes/4)          {'total':>8}  {'missed cache':>12}  {'relative cost':>13}")
    rows = [
        ("codemode (one fixed tool)", report.codemode),
        (f"all {catalog_size} definitions up front", report.up_front),
        ("discovery editing the tool list", report.edited),
    ]
    for label, costs in rows:
        print(f"  {label:31} {costs.total:>8,}  {costs.uncached:>12,}  {costs.relative_cost:>13,.0f}")
    print("  (relative cost: cache reads at 0.1x and writes at 1.25x an uncached token, as Anthropic prices them)")
