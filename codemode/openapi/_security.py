"""Credentials, kept on the host: security schemes read from the description, applied to requests, redacted.

The host gives a secret per security scheme (`credentials={"api_key": "..."}`) and headers for every request.
They are added to each request after the model's arguments are bound, and never enter a tool definition. A
secret the API echoes back (in a result or an error message), or that a log record carries (httpx2 logs each
request's URL, where a query API key sits), is replaced by `[redacted]`.
"""

from __future__ import annotations

import base64
import logging
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias
from urllib.parse import quote, quote_plus

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from codemode.openapi._documents import Documents
    from sandbox import JsonObject, JsonValue

SchemeKind: TypeAlias = Literal["apiKey", "basic", "bearer", "http"]
REDACTED: Final = "[redacted]"
_LOCATIONS: Final[dict[str, Literal["header", "query", "cookie"]]] = {
    "header": "header",
    "query": "query",
    "cookie": "cookie",
}
_MIN_SECRET: Final = 6
"""Header values shorter than this are not redacted (a `1` would be replaced everywhere)."""


@dataclass(frozen=True, kw_only=True)
class SecurityScheme:
    """How one security scheme of the description is applied."""

    name: str
    kind: SchemeKind
    location: Literal["header", "query", "cookie"] = "header"
    """Where an API key goes."""
    parameter: str = "Authorization"
    """The header, query or cookie name of an API key."""
    http_scheme: str = "Bearer"
    """The `Authorization` scheme word of `http` schemes other than basic and bearer."""


def read_schemes(documents: Documents, *, swagger: bool) -> dict[str, SecurityScheme]:
    """The security schemes a document declares, by name; those that cannot be applied are skipped."""
    root = documents.root
    components = root.get("components")
    raw = root.get("securityDefinitions") if swagger else (components or {}).get("securitySchemes")  # type: ignore[union-attr]
    schemes: dict[str, SecurityScheme] = {}
    for name, value in (raw if isinstance(raw, dict) else {}).items():
        try:
            scheme, _ = documents.deref(value, documents.location)
        except Exception:  # noqa: BLE001, S112  # a broken scheme is only a credential that cannot be applied
            continue
        found = _scheme(name, scheme)
        if found is not None:
            schemes[name] = found
    return schemes


def _scheme(name: str, scheme: JsonObject) -> SecurityScheme | None:
    kind = scheme.get("type")
    if kind == "apiKey":
        location = _LOCATIONS.get(str(scheme.get("in")))
        parameter = scheme.get("name")
        if location is not None and isinstance(parameter, str):
            return SecurityScheme(name=name, kind="apiKey", location=location, parameter=parameter)
        return None
    if kind == "basic":  # Swagger 2.0
        return SecurityScheme(name=name, kind="basic")
    if kind == "http":
        word = str(scheme.get("scheme", "bearer"))
        if word.lower() in ("basic", "bearer"):
            return SecurityScheme(name=name, kind="basic" if word.lower() == "basic" else "bearer")
        return SecurityScheme(name=name, kind="http", http_scheme=word.capitalize())
    if kind in ("oauth2", "openIdConnect"):
        return SecurityScheme(name=name, kind="bearer")
    return None


def read_requirements(value: JsonValue) -> tuple[tuple[str, ...], ...] | None:
    """A `security` list as alternatives of scheme names; `None` when absent."""
    if not isinstance(value, list):
        return None
    return tuple(tuple(str(key) for key in item) for item in value if isinstance(item, dict))


def chosen(
    requirements: tuple[tuple[str, ...], ...] | None,
    schemes: Mapping[str, SecurityScheme],
    credentials: Mapping[str, str],
) -> list[SecurityScheme]:
    """The schemes to apply to one call: the first alternative with a credential for every scheme in it.

    An operation whose description says nothing about security (none on it, none at the top) gets every scheme
    the host gave a credential for.
    """
    if requirements is None:
        return [schemes[name] for name in credentials if name in schemes]
    for alternative in requirements:
        if alternative and all(name in credentials and name in schemes for name in alternative):
            return [schemes[name] for name in alternative]
    return []


def apply(scheme: SecurityScheme, secret: str, headers: dict[str, str], query: list[tuple[str, str]]) -> None:
    """Add one credential to a request's headers or query (cookies go in the `Cookie` header)."""
    match scheme.kind:
        case "apiKey" if scheme.location == "query":
            query.append((scheme.parameter, secret))
        case "apiKey" if scheme.location == "cookie":
            add_cookie(headers, scheme.parameter, secret)
        case "apiKey":
            headers[scheme.parameter] = secret
        case "basic":
            headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        case "bearer":
            headers["Authorization"] = f"Bearer {secret}"
        case "http":
            headers["Authorization"] = f"{scheme.http_scheme} {secret}"


def add_cookie(headers: dict[str, str], name: str, value: str) -> None:
    """Append one cookie to the `Cookie` header."""
    pair = f"{name}={quote(value, safe='')}"
    headers["Cookie"] = f"{headers['Cookie']}; {pair}" if headers.get("Cookie") else pair


class Redactor:
    """Replaces the secrets of one API, in every form a request carries them, by `[redacted]`."""

    def __init__(self, credentials: Iterable[str], headers: Iterable[str]) -> None:
        secrets = {value for value in credentials if value}
        for value in headers:
            word, _, rest = value.partition(" ")
            secrets.update(
                part for part in (value, rest if word.lower() in ("bearer", "token", "basic") else "") if part
            )
        secrets = {secret for secret in secrets if len(secret) >= _MIN_SECRET or secret in credentials}
        forms = set(secrets)
        for secret in secrets:
            forms.update({quote(secret, safe=""), quote_plus(secret), base64.b64encode(secret.encode()).decode()})
        self.secrets = sorted(forms, key=len, reverse=True)  # longest first: no secret is left half replaced
        _LOG_FILTER.redactors.add(self)

    def text(self, text: str) -> str:
        """`text` with every secret replaced."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def data(self, value: JsonValue) -> JsonValue:
        """JSON data with every secret replaced in its strings and keys."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key): self.data(item) for key, item in value.items()}
        return value


class _RedactingFilter(logging.Filter):
    """Redacts every live API's secrets from the records of the HTTP client's loggers."""

    def __init__(self) -> None:
        super().__init__()
        self.redactors: weakref.WeakSet[Redactor] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        message = original = record.getMessage()
        for redactor in list(self.redactors):
            message = redactor.text(message)
        if message != original:
            record.msg, record.args = message, None
        return True


_LOG_FILTER: Final = _RedactingFilter()
for _logger_name in ("httpx2", "httpcore2.http11", "httpcore2.connection", "httpcore2.http2"):
    logging.getLogger(_logger_name).addFilter(_LOG_FILTER)
