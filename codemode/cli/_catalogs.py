"""Shared by the subcommands: `--config FILE` to a catalog, with config errors printed for a person."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from codemode.config import build_catalog, load_config
from codemode.errors import CodemodeError

if TYPE_CHECKING:
    import argparse

    from codemode.catalog import Catalog


def add_config_argument(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Add `--config FILE`."""
    parser.add_argument("--config", required=required, metavar="FILE", help="TOML config describing the catalog")


def catalog_from_args(args: argparse.Namespace) -> Catalog | None:
    """The catalog the config describes, or None after printing why it cannot be built."""
    try:
        return build_catalog(load_config(args.config))
    except (CodemodeError, OSError) as error:
        print(f"codemode: {error}", file=sys.stderr)
        return None
