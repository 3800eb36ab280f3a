"""Who may call `codemode serve` over HTTP: bearer tokens (API keys, JWTs) and the Host and Origin checks.

The server is an OAuth 2.1 resource server as the MCP authorization spec describes it, built from the SDK's
parts: its bearer middleware asks `BearerVerifier` about each request's `Authorization: Bearer` token, answers a
missing or refused one with `401` and a `WWW-Authenticate` header that points at the Protected Resource
Metadata (RFC 9728, published at `/.well-known/oauth-protected-resource/mcp`), and lets nothing else through to
the MCP transport. A token is either an API key, compared as its SHA-256 digest in constant time against every
configured key, or a JWT, whose signature is checked against the issuer's JWKS and whose `iss`, `aud`, `exp`
(and `nbf`) must hold. The transport then checks Host and Origin on every address, not only on loopback
(DNS rebinding: a browser page must not reach a server on the user's network).

`caller_of` turns the token the middleware accepted into the `Caller` that policy hooks, the run log and
approval records see.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlparse

import anyio
from pydantic import AnyHttpUrl

from codemode.config._serve import is_loopback
from codemode.errors import ConfigError
from codemode.mcp._sdk import (
    AccessToken,
    AuthenticatedUser,
    AuthSettings,
    JSONResponse,
    RequireAuthMiddleware,
    Route,
    TransportSecuritySettings,
    build_resource_metadata_url,
    jwt,
)
from codemode.policy import Caller

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request

    from codemode.config._serve import ApiKey, JwtIssuer, ServeSettings

logger = logging.getLogger("codemode.mcp.auth")

LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
"""Host names (as a Host header writes them) that only this machine reaches."""
REFETCH_EVERY: Final = 60.0
"""Seconds between fetches of the issuer's JWKS forced by a token that names a key the cached set lacks."""
_WILDCARDS: Final = ("0.0.0.0", "::", "")  # noqa: S104  # names of the wildcard address, to recognise it


def check_exposure(host: str, settings: ServeSettings, *, allow_unauthenticated: bool) -> None:
    """Refuse to listen on an address others reach with no credential configured, unless told so.

    Raises:
        ConfigError: `host` is not loopback, no API key or JWT issuer is configured, and `allow_unauthenticated`
            is false.
    """
    if settings.authenticated or allow_unauthenticated or is_loopback(host):
        return
    raise ConfigError(
        f"refusing to serve on {host!r} without authentication: anyone who reaches the port could run code with "
        f"every tool's credentials. Set API keys (`CODEMODE_API_KEYS=name:key`, or `[serve] api_keys` in the "
        "config) or a JWT issuer (`--jwks`, `--jwt-issuer`, `--jwt-audience`), or listen on 127.0.0.1; "
        "`--allow-unauthenticated` serves anyway (only behind something that authenticates for you)."
    )


def describe_access(host: str, port: int, path: str, settings: ServeSettings) -> list[str]:
    """What `codemode serve` prints at start-up: who may call, from which hosts and origins, and how much."""
    lines = []
    if settings.authenticated:
        who = []
        if settings.api_keys:
            who.append(f"API keys {[key.name for key in settings.api_keys]}")
        if settings.jwt is not None:
            who.append(f"JWTs of {settings.jwt.issuer!r} for audience {settings.jwt.audience!r}")
        lines.append(f"authentication: bearer tokens: {' or '.join(who)}")
        lines.append(f"resource metadata: {metadata_url(resource_url(host, port, path, settings))}")
    elif is_loopback(host):
        lines.append("authentication: none (loopback: every process on this machine may call)")
    else:
        lines.append(
            "authentication: NONE (--allow-unauthenticated): anyone who reaches this address can run code with "
            "every tool's credentials; only safe behind a proxy that authenticates every request"
        )
    security = transport_security(host, settings)
    lines.append(f"accepted Host headers: {', '.join(security.allowed_hosts)} (add more with --allowed-host)")
    lines.append(f"accepted Origin headers: {', '.join(security.allowed_origins)} (or none; --allowed-origin)")
    if settings.max_runs_in_flight or settings.max_runs_per_minute:
        lines.append(
            f"per caller: at most {settings.max_runs_in_flight or 'any number of'} runs at once, "
            f"{settings.max_runs_per_minute or 'any number of'} a minute"
        )
    return lines


def transport_security(host: str, settings: ServeSettings) -> TransportSecuritySettings:
    """Host and Origin checks for every address: the loopback names, the listening address, and the configured.

    A Host given without a port is accepted with any port; an Origin is matched exactly.
    """
    hosts = [*LOOPBACK_HOSTS]
    if host not in _WILDCARDS and not is_loopback(host):
        hosts.append(f"[{host}]" if ":" in host else host)
    if host in _WILDCARDS:
        hosts.append(socket.gethostname())
    hosts.extend(settings.allowed_hosts)
    patterns = [pattern for name in hosts for pattern in ((name,) if _has_port(name) else (name, f"{name}:*"))]
    origins = [f"http://{name}:*" for name in LOOPBACK_HOSTS] + [f"http://{name}" for name in LOOPBACK_HOSTS]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=patterns,
        allowed_origins=[*origins, *settings.allowed_origins],
    )


def resource_url(host: str, port: int, path: str, settings: ServeSettings) -> str:
    """This server's URL as its resource metadata names it: the configured one, else from the address."""
    if settings.resource_url:
        return settings.resource_url
    shown = "localhost" if host in _WILDCARDS else (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}{path}"


def auth_settings(settings: ServeSettings, resource: str) -> AuthSettings:
    """The SDK's resource-server settings: the JWT issuer is the authorization server the metadata names.

    With API keys only there is no authorization server to name, so the SDK publishes no metadata and
    `key_metadata` does (RFC 9728 makes `authorization_servers` optional).
    """
    if settings.jwt is not None:
        # the verifier checks `aud` itself (`JwtIssuer.audience`), so the middleware need not compare resources;
        # validated from strings, so a path-less issuer keeps its exact spelling (no added `/`, RFC 8414)
        given = {"issuer_url": settings.jwt.issuer, "resource_server_url": resource, "validate_token_resource": False}
        return AuthSettings.model_validate(given)
    return AuthSettings.model_validate({"issuer_url": resource, "resource_server_url": None})


def key_metadata(resource: str) -> Route:
    """The Protected Resource Metadata of a server that takes API keys only: no authorization server to name."""
    body = {"resource": resource, "bearer_methods_supported": ["header"], "resource_name": "codemode"}

    async def handle(request: Request) -> JSONResponse:
        return JSONResponse(body, headers={"Cache-Control": "public, max-age=3600"})

    return Route(urlparse(metadata_url(resource)).path, endpoint=handle, methods=["GET"])


def point_401_at_metadata(app: Starlette, resource: str) -> None:
    """Name `key_metadata` in the `WWW-Authenticate` of `app`'s `401`s (the SDK names only metadata it published)."""
    for route in app.routes:
        endpoint = getattr(route, "endpoint", None)
        if isinstance(endpoint, RequireAuthMiddleware):
            endpoint.resource_metadata_url = build_resource_metadata_url(AnyHttpUrl(resource))


def metadata_url(resource: str) -> str:
    """Where the Protected Resource Metadata of `resource` is published (RFC 9728 section 3.1)."""
    return str(build_resource_metadata_url(AnyHttpUrl(resource)))


def caller_of(request: object) -> Caller | None:
    """The caller the bearer middleware authenticated for this HTTP request, or None (stdio, no authentication)."""
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    if not isinstance(user, AuthenticatedUser):
        return None
    token = user.access_token
    claims = dict(token.claims or {})
    issuer = claims.get("iss")
    return Caller(
        subject=token.subject or token.client_id,
        issuer=str(issuer) if issuer is not None else None,
        claims=claims,
    )


class BearerVerifier:
    """The SDK's `TokenVerifier` for `codemode serve`: an API key by its digest, else a JWT of the issuer."""

    def __init__(self, settings: ServeSettings) -> None:
        self.keys: tuple[ApiKey, ...] = settings.api_keys
        self.issuer: JwtIssuer | None = settings.jwt
        self._jwks = None if settings.jwt is None else _Jwks(settings.jwt.jwks)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's identity, or None (the middleware then answers `401`)."""
        key = self._key(token)
        if key is not None:
            return AccessToken(token="", client_id=f"key:{key.name}", scopes=[], subject=key.name)
        if self.issuer is None or self._jwks is None:
            logger.info("refused a bearer token: it is no configured API key")
            return None
        try:
            claims = await self._claims(token, self.issuer, self._jwks)
        except (jwt.PyJWTError, OSError, ValueError) as error:
            logger.info("refused a bearer token: %s: %s", type(error).__name__, error)
            return None
        scope = claims.get("scope")
        client = claims.get("client_id") or claims.get("azp") or claims["sub"]
        return AccessToken(
            token="",
            client_id=str(client),
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(claims["exp"]),
            subject=str(claims["sub"]),
            claims=claims,
        )

    def _key(self, token: str) -> ApiKey | None:
        """The configured key whose digest is the token's; every key is compared, each in constant time."""
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        found = None
        for key in self.keys:
            if hmac.compare_digest(digest, key.digest):
                found = key
        return found

    async def _claims(self, token: str, issuer: JwtIssuer, jwks: _Jwks) -> dict[str, Any]:
        header = jwt.get_unverified_header(token)
        key = await jwks.key(header.get("kid"))
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=list(issuer.algorithms),
            audience=issuer.audience,
            issuer=issuer.issuer,
            leeway=issuer.leeway,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
        return claims


class _Jwks:
    """The issuer's signing keys: a JWKS file read once, or a URL fetched (off the event loop) and cached.

    A token naming a key the cached set lacks fetches the set again (the issuer may have rotated its keys), at
    most once a `REFETCH_EVERY`: tokens with made-up key ids must not turn this server into the issuer's load.
    """

    def __init__(self, where: str) -> None:
        self._client: jwt.PyJWKClient | None = None
        self._set: jwt.PyJWKSet | None = None
        self._refetched = -REFETCH_EVERY
        if urlparse(where).scheme.lower() in ("http", "https"):
            self._client = jwt.PyJWKClient(where, cache_jwk_set=True, lifespan=300, timeout=5)
        else:
            try:
                self._set = jwt.PyJWKSet.from_json(Path(where).read_text(encoding="utf-8"))
            except (OSError, jwt.PyJWTError) as error:
                raise ConfigError(f"Cannot read the JWKS file {where!r}: {error}") from error

    async def key(self, kid: object) -> Any:
        """The signing key named `kid` (or the only key, when the token names none)."""
        if self._client is not None:  # `PyJWKClient` fetches with urllib, which blocks
            return (await anyio.to_thread.run_sync(self._fetched, self._client, kid)).key
        assert self._set is not None
        return _pick(self._set.keys, kid).key

    def _fetched(self, client: jwt.PyJWKClient, kid: object) -> jwt.PyJWK:
        try:
            return _pick(client.get_jwk_set().keys, kid)
        except jwt.InvalidKeyError:
            if time.monotonic() - self._refetched < REFETCH_EVERY:
                raise
            self._refetched = time.monotonic()
            return _pick(client.get_jwk_set(refresh=True).keys, kid)


def _pick(keys: list[jwt.PyJWK], kid: object) -> jwt.PyJWK:
    if kid is None and len(keys) == 1:
        return keys[0]
    for key in keys:
        if key.key_id == kid:
            return key
    raise jwt.InvalidKeyError(f"the issuer's JWKS has no key {kid!r}")


def _has_port(name: str) -> bool:
    return name.rsplit("]", 1)[-1].count(":") == 1
