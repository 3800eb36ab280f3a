"""`codemode serve`'s options of who may call over HTTP, merged with the config's `[serve]` table and the env.

API keys never go on the command line (other users of the machine can read a process's arguments): they come
from `CODEMODE_API_KEYS` or the config. The options here override the config's values; lists add to them.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from codemode.cli._catalogs import whole_number
from codemode.config._serve import API_KEYS_VARIABLE, JwtIssuer, ServeSettings, keys_from_env
from codemode.errors import ConfigError

if TYPE_CHECKING:
    import argparse

    from codemode.config import Config

ALLOW_UNAUTHENTICATED_HELP = (
    "serve on an address other machines reach (e.g. 0.0.0.0) with no API key or JWT configured: anyone who reaches "
    "the port can run code with every tool's credentials. Only for a server behind a proxy that authenticates "
    "every request itself"
)


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of authentication, allowed hosts and origins, and per-caller limits."""
    group = parser.add_argument_group(
        "who may call over HTTP",
        f"API keys come from {API_KEYS_VARIABLE}=name:key[,name:key...] or the config's `[serve] api_keys`; "
        "a JWT issuer from the options below or `[serve] jwt`.",
    )
    group.add_argument(
        "--jwks", metavar="URL|FILE", help="the JWT issuer's signing keys (an https:// JWKS URL, or a file)"
    )
    group.add_argument("--jwt-issuer", metavar="ISS", help="the `iss` a JWT must have")
    group.add_argument("--jwt-audience", metavar="AUD", help="the `aud` a JWT must have (usually this server's URL)")
    group.add_argument(
        "--resource-url", metavar="URL", help="this server's URL as clients reach it (its resource metadata)"
    )
    group.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host header to accept besides the loopback names and the listening address (repeatable)",
    )
    group.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an Origin header to accept besides the loopback origins, e.g. https://app.example.com (repeatable)",
    )
    group.add_argument("--max-runs-in-flight", type=whole_number, metavar="N", help="runs one caller may have at once")
    group.add_argument(
        "--max-runs-per-minute", type=whole_number, metavar="N", help="runs one caller may start a minute"
    )
    group.add_argument("--allow-unauthenticated", action="store_true", help=ALLOW_UNAUTHENTICATED_HELP)


def serve_settings(args: argparse.Namespace, config: Config) -> ServeSettings:
    """The config's `[serve]` table, with `CODEMODE_API_KEYS` and the options applied.

    Raises:
        ConfigError: The JWT options are incomplete, or `CODEMODE_API_KEYS` is malformed.
    """
    base = config.serve or ServeSettings()
    keys = (*base.api_keys, *keys_from_env(os.environ.get(API_KEYS_VARIABLE, "")))
    names = [key.name for key in keys]
    if len(set(names)) != len(names):
        raise ConfigError(f"two API keys share a name in {sorted(names)}; give each its own name.")
    return dataclasses.replace(
        base,
        api_keys=keys,
        jwt=_jwt(args, base.jwt),
        resource_url=args.resource_url or base.resource_url,
        allowed_hosts=(*base.allowed_hosts, *args.allowed_host),
        allowed_origins=(*base.allowed_origins, *args.allowed_origin),
        max_runs_in_flight=args.max_runs_in_flight or base.max_runs_in_flight,
        max_runs_per_minute=args.max_runs_per_minute or base.max_runs_per_minute,
    )


def _jwt(args: argparse.Namespace, base: JwtIssuer | None) -> JwtIssuer | None:
    given = {"jwks": args.jwks, "issuer": args.jwt_issuer, "audience": args.jwt_audience}
    if not any(given.values()):
        return base
    if base is not None:
        return dataclasses.replace(base, **{key: value for key, value in given.items() if value})
    missing = [f"--{'jwt-' if key != 'jwks' else ''}{key}" for key, value in given.items() if not value]
    if missing:
        raise ConfigError(f"a JWT issuer needs --jwks, --jwt-issuer and --jwt-audience; missing {missing}.")
    return JwtIssuer(jwks=args.jwks, issuer=args.jwt_issuer, audience=args.jwt_audience)
