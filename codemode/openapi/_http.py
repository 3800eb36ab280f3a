"""The calls: a tool's arguments sent as an HTTP request with httpx2, and the response read back for the model.

One `httpx2.AsyncClient` per API, shared by all its calls while the source is open (connection pooling), with a
cap on calls in flight. 429 and 503 are retried a bounded number of times, waiting what `Retry-After` asks (up
to a limit). A JSON response is data; another content type is text, cut at a limit with a visible marker; a
4xx or 5xx is a `ToolError` with the status and the API's own message. Every text the model gets passes the
API's redactor first.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import anyio
import httpx2

from codemode.openapi._security import Redactor, add_cookie, apply, chosen
from codemode.run._runtime import MAY_HAVE_ACTED, CutOffError, tool_error
from sandbox.limits import cut_end, one_line

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Mapping

    from codemode.openapi._operations import Operation
    from codemode.openapi._parameters import Binding
    from codemode.openapi._security import SecurityScheme
    from sandbox import JsonValue

_RETRIED: Final = frozenset({429, 503})
_DELIMITERS: Final = {"spaceDelimited": " ", "pipeDelimited": "|", "tabDelimited": "\t"}
_MESSAGE_KEYS: Final = ("message", "error_description", "error", "detail", "title", "errors", "msg", "description")
_LOCATIONS: Final = ("body", "query", "path", "header", "cookie")
"""Where FastAPI's `loc` starts: the part of the request, which the model does not pass as such."""
_MAX_ERROR_CHARS: Final = 500
_DOT_SEGMENTS: Final = frozenset({"", ".", ".."})
_TEXTUAL: Final = ("text/", "application/xml", "application/javascript", "application/yaml", "application/x-yaml")


@dataclass(kw_only=True)
class HttpApi:
    """Everything the calls of one API share: where it is, its credentials, its client and its limits."""

    label: str
    base_url: str | None
    headers: Mapping[str, str] = field(repr=False)
    credentials: Mapping[str, str] = field(repr=False)
    schemes: Mapping[str, SecurityScheme]
    redactor: Redactor = field(repr=False)
    timeout: float = 30.0
    max_in_flight: int = 8
    max_retries: int = 2
    max_retry_wait: float = 30.0
    max_response: int = 1_000_000
    """Bytes of a response body read at most; a JSON body over it is an error, text is cut."""
    max_text: int = 20_000
    """Characters of a non-JSON response given to the model."""
    client: httpx2.AsyncClient | None = None
    limiter: anyio.CapacityLimiter = field(init=False)

    def __post_init__(self) -> None:
        self.limiter = anyio.CapacityLimiter(self.max_in_flight)

    def new_client(self) -> httpx2.AsyncClient:
        """A client with this API's timeouts and pool size; the credentials are added per request."""
        limits = httpx2.Limits(max_connections=self.max_in_flight, max_keepalive_connections=self.max_in_flight)
        return httpx2.AsyncClient(
            timeout=httpx2.Timeout(self.timeout), limits=limits, follow_redirects=True, verify=_ssl_context()
        )

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx2.AsyncClient]:
        if self.client is not None:
            yield self.client
            return
        async with self.new_client() as client:  # outside `async with` the source: a client per call
            yield client

    async def call(self, operation: Operation, arguments: Mapping[str, JsonValue]) -> JsonValue:
        """Send one call of `operation`; every failure is a `ToolError` for the model."""
        if not self.base_url:
            raise tool_error(
                f"the API {self.label!r} has no server URL, so `{operation.method} {operation.path}` cannot be sent; "
                "the host must set `base_url` for it"
            )
        request = _RequestParts.build(operation, arguments)
        for scheme in chosen(operation.security, self.schemes, self.credentials):
            apply(scheme, self.credentials[scheme.name], request.headers, request.query)
        async with self.limiter, self._client() as client:
            response, body, attempts = await self._send(client, operation, request)
        if response.status_code >= 400:
            raise tool_error(self._error_message(operation, response, body, attempts))
        return self._result(operation, response, body)

    async def _send(
        self, client: httpx2.AsyncClient, operation: Operation, parts: _RequestParts
    ) -> tuple[httpx2.Response, bytes, int]:
        """The response and its (bounded) body, and how many times the request was sent."""
        what = f"`{operation.method} {operation.path}`"
        headers = {**self.headers, **parts.headers}
        url = f"{self.base_url}{parts.path}"
        for attempt in range(self.max_retries + 1):
            request = client.build_request(
                operation.method, url, params=tuple(parts.query), headers=headers, **parts.content
            )
            try:
                response = await client.send(request, stream=True)
                try:
                    body = await self._read(response)
                finally:
                    await response.aclose()
            except httpx2.TimeoutException:
                late = f"{what} on {self.label!r} did not answer within {self.timeout:g} s"
                if operation.method in ("GET", "HEAD", "OPTIONS"):  # safe methods change nothing
                    raise tool_error(late) from None
                raise CutOffError(f"{late}; {MAY_HAVE_ACTED}") from None
            except httpx2.HTTPError as error:
                detail = self.redactor.text(f"{type(error).__name__}: {error} (the URL tried: {url})")
                raise tool_error(f"cannot reach {self.label!r} for {what}: {detail}") from None
            wait = _retry_after(response, attempt)
            if response.status_code not in _RETRIED or attempt == self.max_retries or wait > self.max_retry_wait:
                return response, body, attempt + 1
            await anyio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns")

    async def _read(self, response: httpx2.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_response:
                break
        return b"".join(chunks)

    def _result(self, operation: Operation, response: httpx2.Response, body: bytes) -> JsonValue:
        media = _media(response)
        over = len(body) > self.max_response
        if not body.strip():
            return None
        if _is_json(media) or (not media and body.lstrip()[:1] in (b"{", b"[")):
            if over:
                raise tool_error(
                    f"`{operation.method} {operation.path}` answered with over {self.max_response:,} bytes of JSON; "
                    "ask for less (filters, pagination, fewer fields)"
                )
            try:
                return self.redactor.data(json.loads(body))
            except ValueError:
                pass  # declared JSON but is not: shown as text
        if media and not media.startswith(_TEXTUAL) and not _is_json(media):
            return f"[{media} response of {len(body):,}{'+' if over else ''} bytes, not shown]"
        return self.redactor.text(_bounded(_decode(response, body), self.max_text, over=over))

    def _error_message(self, operation: Operation, response: httpx2.Response, body: bytes, attempts: int) -> str:
        message = ""
        text = _decode(response, body).strip()
        if _is_json(_media(response)) or text[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                message = _api_message(json.loads(text))
        message = message or " ".join(text.split())
        status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
        retry = ""
        if response.status_code in _RETRIED:
            after = response.headers.get("retry-after")
            sent = "once" if attempts == 1 else f"{attempts} times"
            wait = _retry_after(response, attempts - 1)
            over = f", more than the {self.max_retry_wait:g} s the host waits" if wait > self.max_retry_wait else ""
            retry = f" (sent {sent}" + (f"; the API asks to retry after {after!r} s{over})" if after else ")")
        detail = f": {one_line(message, _MAX_ERROR_CHARS)}" if message else ""
        return self.redactor.text(f"`{operation.method} {operation.path}` failed with {status}{retry}{detail}")


@dataclass(kw_only=True)
class _RequestParts:
    """A call's arguments placed in the request: the path filled in, query pairs, headers and the body."""

    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    content: dict[str, Any]
    """Keyword arguments of `build_request` for the body (`json=`, `data=`, `files=`, `content=`)."""

    @classmethod
    def build(cls, operation: Operation, arguments: Mapping[str, JsonValue]) -> _RequestParts:
        segments: dict[str, str] = {}
        query: list[tuple[str, str]] = []
        headers: dict[str, str] = {}
        fields: dict[str, JsonValue] = {}
        body: JsonValue = None
        for binding in operation.bindings:
            if binding.argument not in arguments:
                if binding.location == "path":  # left out, so it has a default (`combine`): the URL needs it
                    segments[binding.name] = quote(_scalar_text(_default(operation, binding.argument), ","), safe="")
                continue
            value = arguments[binding.argument]
            match binding.location:
                case "path":
                    segments[binding.name] = quote(_scalar_text(value, ","), safe="")
                case "query":
                    query.extend(_query_pairs(binding, value))
                case "header":
                    headers[binding.name] = _scalar_text(value, ",")
                case "cookie":
                    add_cookie(headers, binding.name, _scalar_text(value, ","))
                case "body":
                    body = value
                case "field" | "form":
                    fields[binding.name] = value
        if fields or (operation.body_required and body is None):
            body = fields  # a required body with no field given is sent empty, `{}`
        path = _filled_path(operation, segments)
        return cls(path=path, query=query, headers=headers, content=_content(operation, body, headers))


def _default(operation: Operation, argument: str) -> JsonValue:
    properties = operation.parameters.get("properties")
    schema = properties.get(argument) if isinstance(properties, dict) else None
    return schema.get("default") if isinstance(schema, dict) else None


def _filled_path(operation: Operation, values: Mapping[str, str]) -> str:
    """The path template with each parameter's encoded value in its place, segment by segment.

    Raises a `ToolError` when a filled segment is empty, `.` or `..`: the URL would then name another resource
    (httpx2 removes dot segments, so `/orgs/acme/members/..` is sent as `/orgs/acme`).
    """
    filled: list[str] = []
    for template in operation.path.split("/"):
        segment = template
        for name, value in values.items():
            segment = segment.replace(f"{{{name}}}", value)
        if segment in _DOT_SEGMENTS and "{" in template:
            raise tool_error(_segment_message(operation, template, segment))
        filled.append(segment)
    return "/".join(filled)


def _segment_message(operation: Operation, template: str, segment: str) -> str:
    names = [binding.argument for binding in operation.bindings if f"{{{binding.name}}}" in template]
    which = f"argument `{names[0]}`" if len(names) == 1 else "arguments " + " and ".join(f"`{name}`" for name in names)
    fills = "fills" if len(names) == 1 else "fill"
    return (
        f"{which} of `{operation.method} {operation.path}` {fills} one segment of the URL path, which cannot be "
        f"{segment!r} (the request would go to another URL); pass the actual value, not '', '.' or '..'"
    )


def _content(operation: Operation, body: JsonValue, headers: dict[str, str]) -> dict[str, Any]:
    headers.setdefault("Accept", "application/json, */*;q=0.5")
    if body is None or operation.body_kind is None:
        return {}
    match operation.body_kind:
        case "json":
            headers["Content-Type"] = operation.media_type or "application/json"
            return {"content": json.dumps(body, ensure_ascii=False).encode()}
        case "form":
            items = body.items() if isinstance(body, dict) else []
            return {"data": {key: _scalar_text(value, ",") for key, value in items if value is not None}}
        case "multipart":
            items = body.items() if isinstance(body, dict) else []
            return {"files": [(key, (None, _scalar_text(value, ","))) for key, value in items if value is not None]}
        case "text":
            headers["Content-Type"] = operation.media_type or "text/plain"
            return {"content": _scalar_text(body, ",").encode()}


def _query_pairs(binding: Binding, value: JsonValue) -> list[tuple[str, str]]:
    if value is None:
        return []
    if isinstance(value, list):
        if binding.explode:
            return [(binding.name, _scalar_text(item, ",")) for item in value]
        return [(binding.name, _DELIMITERS.get(binding.style, ",").join(_scalar_text(item, ",") for item in value))]
    if isinstance(value, dict):
        if binding.style == "deepObject":
            return [(f"{binding.name}[{key}]", _scalar_text(item, ",")) for key, item in value.items()]
        if binding.explode:
            return [(key, _scalar_text(item, ",")) for key, item in value.items()]
        return [(binding.name, ",".join(f"{key},{_scalar_text(item, ',')}" for key, item in value.items()))]
    return [(binding.name, _scalar_text(value, ","))]


def _scalar_text(value: JsonValue, separator: str) -> str:
    """A value as it is written in a URL or header: `true`, `3`, `a,b`, compact JSON for nested data."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return separator.join(_scalar_text(item, separator) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value)


def _retry_after(response: httpx2.Response, attempt: int) -> float:
    """Seconds to wait before the next attempt: `Retry-After` (seconds or an HTTP date), else a backoff."""
    header = response.headers.get("retry-after", "").strip()
    if header:
        with contextlib.suppress(ValueError):
            return max(0.0, float(header))
        with contextlib.suppress(TypeError, ValueError):
            when = email.utils.parsedate_to_datetime(header)
            return max(0.0, float(when.timestamp()) - time.time())
    return 0.5 * 2.0**attempt


def _api_message(data: JsonValue) -> str:
    """The API's own error message in a JSON error body (`message`, `error.message`, `detail`, ...)."""
    if isinstance(data, str):
        return data
    if isinstance(data, list):
        return "; ".join(filter(None, (_api_message(item) for item in data[:5])))
    if not isinstance(data, dict):
        return ""
    where = _location(data.get("loc"))
    if where and isinstance(data.get("msg"), str):
        return f"{where}: {data['msg']}"
    for key in _MESSAGE_KEYS:
        if key in data and (found := _api_message(data[key])):
            return found
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _location(loc: JsonValue) -> str:
    """A FastAPI/pydantic error's `loc` (`["body", "items", 0, "qty"]`) as the field's path: `items.0.qty`."""
    if not isinstance(loc, list) or not all(isinstance(part, (str, int)) for part in loc):
        return ""
    parts = loc[1:] if len(loc) > 1 and loc[0] in _LOCATIONS else loc
    return ".".join(str(part) for part in parts)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One default TLS context for every API's client: building one reads the CA bundle (about 0.1 s)."""
    return httpx2.create_ssl_context()


def _media(response: httpx2.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def _is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def _decode(response: httpx2.Response, body: bytes) -> str:
    return body.decode(response.charset_encoding or "utf-8", errors="replace")


def _bounded(text: str, limit: int, *, over: bool) -> str:
    if not over:
        return cut_end(text, limit)
    # The body was read only up to `max_response`: the count is of what was read, and the rest is more.
    return cut_end(text, min(limit, len(text) - 1), "characters or more")
