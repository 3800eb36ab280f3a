"""`codemode check --config FILE | --tools FILE.jsonl`: every tool's schemas read as its first call reads them.

Loading a catalog does not meta-check schemas (that is a millisecond a schema, seconds for a large catalog), so
this is the place a person learns which tools are read under an older draft, which are relaxed (valid under
no draft: their arguments are checked only where the schema can be read) and which have an invalid result schema.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import TYPE_CHECKING

from codemode.catalog import Catalog, SchemaCheck
from codemode.cli._catalogs import add_allow_missing_argument, add_config_argument, catalog_from_args
from codemode.errors import CatalogError

if TYPE_CHECKING:
    import argparse

_NEWEST = "draft-2020-12"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `check` subcommand."""
    parser = subparsers.add_parser(
        "check",
        help="report each tool whose schema is read under an older draft, relaxed or invalid",
        description="Read every tool's schemas as its first call will: exit 0 when all are valid, 1 when a tool "
        "is relaxed or has an invalid result schema, 2 when the catalog cannot be built.",
    )
    add_config_argument(parser, required=False)
    parser.add_argument(
        "--tools", action="append", default=[], metavar="FILE", help="a JSONL file of definitions (repeatable)"
    )
    add_allow_missing_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 0 when clean, 1 when a schema is relaxed or invalid, 2 when nothing could be read."""
    if bool(args.config) == bool(args.tools):
        print("codemode check: give either `--config FILE` or `--tools FILE.jsonl`", file=sys.stderr)
        return 2
    catalog = catalog_from_args(args) if args.config else _jsonl_catalog(args.tools)
    if catalog is None:
        return 2
    checks = catalog.check_schemas()
    statuses = [_status(check) for check in checks]
    bad = sum(status in ("relaxed", "invalid") for status in statuses)
    if args.json:
        print(json.dumps(_report(len(catalog), checks, statuses), indent=2))
    else:
        for check, status in zip(checks, statuses, strict=True):
            if status != _NEWEST:
                print(f"{check.tool}  {check.field}  {status}" + (f": {check.problem}" if check.problem else ""))
        print(_summary(len(catalog), statuses))
    return 1 if bad else 0


def _jsonl_catalog(paths: list[str]) -> Catalog | None:
    catalog = Catalog()
    try:
        for path in paths:
            catalog.load_jsonl(path)
    except CatalogError as error:
        print(f"codemode: {error}", file=sys.stderr)
        return None
    return catalog


def _status(check: SchemaCheck) -> str:
    """The draft a schema is read under; `relaxed` (arguments) or `invalid` (result) when valid under none."""
    if check.problem is None:
        return check.draft
    return "relaxed" if check.field == "parameters" else "invalid"


def _summary(tools: int, statuses: list[str]) -> str:
    counts = Counter(statuses)
    shown = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    return f"{tools} tools, {len(statuses)} schemas: {shown or 'none'}"


def _report(tools: int, checks: list[SchemaCheck], statuses: list[str]) -> dict[str, object]:
    return {
        "tools": tools,
        "schemas": len(checks),
        "counts": dict(sorted(Counter(statuses).items())),
        "checks": [
            {"tool": check.tool, "field": check.field, "status": status, "problem": check.problem}
            for check, status in zip(checks, statuses, strict=True)
        ],
    }
