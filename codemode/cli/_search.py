"""`codemode search QUERY --config FILE`: the tools search would show the model, for a person to read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemode.cli._catalogs import (
    add_allow_missing_argument,
    add_config_argument,
    add_search_argument,
    catalog_from_args,
    search_unavailable,
)
from codemode.schema.stubs import render_signature
from codemode.search import build_index

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `search` subcommand."""
    parser = subparsers.add_parser("search", help="show the tools that best match a query")
    parser.add_argument("query", help="what the tool should do")
    add_config_argument(parser)
    add_allow_missing_argument(parser)
    parser.add_argument("-k", "--max-results", type=int, default=5, help="how many tools to show (default 5)")
    add_search_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the ranked tools; exit 2 when the catalog cannot be built."""
    if search_unavailable(args):
        return 2
    catalog = catalog_from_args(args)
    if catalog is None:
        return 2
    results = build_index(args.search, catalog).search(args.query, args.max_results)
    if not results:
        print("no matching tools")
    for rank, (tool, score) in enumerate(results, 1):
        print(f"{rank}. {render_signature(tool)}    (score {score:.2f})")
        summary = " ".join(tool.description.split())
        print(f"   {summary[:160]}{'...' if len(summary) > 160 else ''}")
    return 0
