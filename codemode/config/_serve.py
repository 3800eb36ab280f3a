"""A config's `[serve]` table: who may call `codemode serve` over HTTP, from where, and how much.

```toml
[serve]
api_keys = { ci-bot = "${CI_BOT_KEY}", alice = "sha256:2bb80d53..." }   # name = the key, or its SHA-256
jwt = { jwks = "https://auth.example.com/.well-known/jwks.json", issuer = "https://auth.example.com",
        audience = "https://mcp.example.com/mcp" }                       # jwks: a URL or a file
resource_url = "https://mcp.example.com/mcp"      # this server's URL, published as its resource metadata
allowed_hosts = ["mcp.example.com"]               # Host headers accepted besides the loopback names
allowed_origins = ["https://app.example.com"]     # Origin headers accepted besides the loopback origins
max_runs_in_flight = 2                            # per caller
max_runs_per_minute = 30                          # per caller
```

API keys are kept only as SHA-256 digests: a key given in the clear (usually through `${VAR}`) is hashed as it is
read. `CODEMODE_API_KEYS` in the environment adds keys the same way (`name:key` pairs separated by commas or
white space). The checks themselves are `codemode.mcp._auth`'s; this module only reads settings, so the core can
read a whole config without the `mcp` extra.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from codemode.config._read import expand_env
from codemode.errors import ConfigError
from sandbox.limits import cut_end

if TYPE_CHECKING:
    from pathlib import Path

API_KEYS_VARIABLE: Final = "CODEMODE_API_KEYS"
"""The environment variable of API keys: `name:key` pairs, separated by commas or white space."""
DIGEST_PREFIX: Final = "sha256:"
"""A key given as its digest: `sha256:` and 64 hex digits."""
_KEYS: Final = frozenset(
    {
        "api_keys",
        "jwt",
        "resource_url",
        "allowed_hosts",
        "allowed_origins",
        "max_runs_in_flight",
        "max_runs_per_minute",
    }
)
_JWT_KEYS: Final = frozenset({"jwks", "issuer", "audience", "algorithms", "leeway"})
_HEX: Final = re.compile(r"[0-9a-f]{64}")
_NAME: Final = re.compile(r"[A-Za-z0-9_.@-]{1,64}")


@dataclass(frozen=True, kw_only=True)
class ApiKey:
    """One accepted API key: its name (the caller's subject) and the SHA-256 of the key."""

    name: str
    """Who uses it; hooks, the run log and traces see this name."""
    digest: bytes
    """SHA-256 of the key's UTF-8 bytes."""

    @classmethod
    def parse(cls, name: str, value: str, where: str) -> ApiKey:
        """A key named `name`, from the key itself or `sha256:<hex>`.

        Raises:
            ConfigError: The name or the value is not usable.
        """
        if not _NAME.fullmatch(name):
            raise ConfigError(f"{where}: API key name {name!r} must be 1-64 letters, digits or `_.@-`.")
        if value.startswith(DIGEST_PREFIX):
            digest = value.removeprefix(DIGEST_PREFIX).lower()
            if not _HEX.fullmatch(digest):
                raise ConfigError(f"{where}: API key {name!r}: `sha256:` must be followed by 64 hex digits.")
            return cls(name=name, digest=bytes.fromhex(digest))
        if len(value) < 16:
            raise ConfigError(
                f"{where}: API key {name!r} is shorter than 16 characters; use a long random key, e.g. "
                '`python -c "import secrets; print(secrets.token_urlsafe(32))"`.'
            )
        return cls(name=name, digest=hashlib.sha256(value.encode()).digest())


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) reaches only this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, kw_only=True)
class JwtIssuer:
    """The issuer whose JWTs are accepted as bearer tokens.

    Raises:
        ConfigError: `jwks` is a plain `http://` URL of a host other than this machine.
    """

    jwks: str
    """Where its signing keys are: an `https://` URL (fetched and cached) or a JWKS file; `http://` only on
    loopback (`127.0.0.1`, `::1`, `localhost`)."""
    issuer: str
    """The `iss` a token must have."""
    audience: str
    """The `aud` a token must have (usually this server's URL)."""
    algorithms: tuple[str, ...] = ("RS256", "PS256", "ES256", "EdDSA")
    """The signature algorithms accepted (never `none`, never a shared-secret HMAC)."""
    leeway: float = 30.0
    """Seconds of clock skew allowed on `exp` and `nbf`."""

    def __post_init__(self) -> None:
        # Whoever is on the path of a plain-http fetch could hand over their own keys and sign any token.
        url = urlsplit(self.jwks)
        if url.scheme.lower() == "http" and not is_loopback(url.hostname or ""):
            raise ConfigError(
                f"the JWKS URL {self.jwks!r} is plain http: anyone on the network path could replace the issuer's "
                "keys and forge tokens. Use the issuer's `https://` URL (or a local JWKS file); plain http is "
                "accepted only on this machine (127.0.0.1, ::1, localhost)."
            )


@dataclass(frozen=True, kw_only=True)
class ServeSettings:
    """The `[serve]` table (all optional); `codemode serve`'s options override it."""

    api_keys: tuple[ApiKey, ...] = ()
    """Accepted API keys, several at once so they can be rotated."""
    jwt: JwtIssuer | None = None
    """The JWT issuer, if tokens of one are accepted."""
    resource_url: str | None = None
    """This server's URL as clients reach it (RFC 9728 Protected Resource Metadata)."""
    allowed_hosts: tuple[str, ...] = ()
    """Host headers accepted besides the loopback names (`name` or `name:port`)."""
    allowed_origins: tuple[str, ...] = ()
    """Origin headers accepted besides the loopback origins (`https://app.example.com`)."""
    max_runs_in_flight: int | None = None
    """Runs one caller may have going at once."""
    max_runs_per_minute: int | None = None
    """Runs one caller may start in any minute."""

    @property
    def authenticated(self) -> bool:
        """Whether any credential is configured (else anyone who reaches the port may call)."""
        return bool(self.api_keys) or self.jwt is not None


def parse_serve(table: object, path: Path) -> ServeSettings:
    """The `[serve]` table of the config at `path`, `${VAR}` expanded.

    Raises:
        ConfigError: A key is unknown or has the wrong type (the message names it).
    """
    where = f"{path}: [serve]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, written `[serve]`.")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}; `[serve]` takes {sorted(_KEYS)}.")
    keys = table.get("api_keys", {})
    if not isinstance(keys, dict) or not all(isinstance(value, str) for value in keys.values()):
        raise ConfigError(
            f"{where}: `api_keys` must be a table of names to keys (strings); it may hold keys, so it is not shown."
        )
    return ServeSettings(
        api_keys=tuple(ApiKey.parse(name, expand_env(value, where), where) for name, value in keys.items()),
        jwt=_jwt(table.get("jwt"), where),
        resource_url=_string(table, "resource_url", where),
        allowed_hosts=_strings(table, "allowed_hosts", where),
        allowed_origins=_strings(table, "allowed_origins", where),
        max_runs_in_flight=_count(table, "max_runs_in_flight", where),
        max_runs_per_minute=_count(table, "max_runs_per_minute", where),
    )


def keys_from_env(value: str, where: str = API_KEYS_VARIABLE) -> tuple[ApiKey, ...]:
    """The keys of `CODEMODE_API_KEYS`: `name:key` (or `name:sha256:<hex>`) pairs, by commas or white space.

    Raises:
        ConfigError: A pair has no name.
    """
    keys = []
    for pair in value.replace(",", " ").split():
        name, colon, key = pair.partition(":")
        if not colon or not key:
            raise ConfigError(f"{where}: each entry is `name:key`; one has no name (the key is not shown).")
        keys.append(ApiKey.parse(name, key, where))
    return tuple(keys)


def _jwt(table: object, where: str) -> JwtIssuer | None:
    if table is None:
        return None
    where = f"{where} jwt"
    if not isinstance(table, dict) or set(table) - _JWT_KEYS or not {"jwks", "issuer", "audience"} <= set(table):
        raise ConfigError(
            f"{where}: must be a table with `jwks`, `issuer` and `audience` (optional `algorithms`, `leeway`)."
        )
    jwks, issuer, audience = (_string(table, key, where) for key in ("jwks", "issuer", "audience"))
    leeway = table.get("leeway", 30.0)
    if isinstance(leeway, bool) or not isinstance(leeway, (int, float)) or leeway < 0:
        raise ConfigError(f"{where}: `leeway` must be a number of seconds, got {cut_end(repr(leeway), 80)}.")
    algorithms = _strings(table, "algorithms", where) or JwtIssuer.algorithms
    if jwks is None or issuer is None or audience is None:  # required just above; for the type checker
        raise ConfigError(f"{where}: `jwks`, `issuer` and `audience` are required.")
    try:
        return JwtIssuer(
            jwks=expand_env(jwks, where),
            issuer=expand_env(issuer, where),
            audience=expand_env(audience, where),
            algorithms=algorithms,
            leeway=float(leeway),
        )
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None


def _string(table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigError(f"{where}: `{key}` must be a non-empty string, got {cut_end(repr(value), 80)}.")
    return value


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where}: `{key}` must be an array of non-empty strings, got {cut_end(repr(value), 80)}.")
    return tuple(value)


def _count(table: dict[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{where}: `{key}` must be a whole number of at least 1, got {cut_end(repr(value), 80)}.")
    return value
