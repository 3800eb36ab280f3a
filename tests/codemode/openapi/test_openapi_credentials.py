"""Credentials from the security schemes, applied by the host; descriptions read from a URL; calls after closing."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

# The loopback servers; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import Echo

from codemode import Catalog, CodeMode
from codemode.openapi import OpenApi, OpenApiSources
from codemode.schema.stubs import render_signature

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sandbox import JsonObject

SCHEMES: JsonObject = {
    "basic": {"type": "http", "scheme": "basic"},
    "header_key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "cookie_key": {"type": "apiKey", "in": "cookie", "name": "sid"},
    "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://example.com/t", "scopes": {}}}},
}


def secured(security: list[JsonObject], *, parameters: list[JsonObject] | None = None) -> JsonObject:
    operation: JsonObject = {"operationId": "whoami", "responses": {"200": {"description": "who"}}}
    operation["security"] = security  # type: ignore[assignment]
    if parameters is not None:
        operation["parameters"] = parameters  # type: ignore[assignment]
    return {
        "openapi": "3.0.3",
        "info": {"title": "Auth", "version": "1"},
        "components": {"securitySchemes": SCHEMES},
        "paths": {"/whoami": {"get": operation}},
    }


@pytest.fixture
def echo() -> Iterator[Echo]:
    with Echo() as server:
        yield server


async def headers_sent(spec: JsonObject, echo: Echo, credentials: dict[str, str]) -> dict[str, str]:
    """The headers the server got for one call; the echo of them the model read has every secret redacted."""
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=spec, base_url=echo.url, credentials=credentials)]),
        CodeMode(catalog, isolation="inline") as cm,
    ):
        result = await cm.execute("return await tools.whoami()", cm.new_state())
    assert result.ok, result.text
    assert "[redacted]" in result.text
    assert all(secret not in result.text for secret in credentials.values())
    return echo.requests[-1][2]


async def test_basic_auth_is_user_and_password_encoded_by_the_host(echo: Echo) -> None:
    """`user:password` for an http basic scheme becomes `Authorization: Basic <base64>`."""
    sent = await headers_sent(secured([{"basic": []}]), echo, {"basic": "ann:pa55word"})
    assert sent["authorization"] == "Basic " + base64.b64encode(b"ann:pa55word").decode()


async def test_the_first_alternative_with_every_credential_is_applied(echo: Echo) -> None:
    """`security: [{oauth}, {header_key, cookie_key}]` with only the two keys given sends both keys, no token."""
    spec = secured([{"oauth": []}, {"header_key": [], "cookie_key": []}])
    sent = await headers_sent(spec, echo, {"header_key": "hk-123456", "cookie_key": "ck-654321"})
    assert (sent["x-api-key"], sent["cookie"], "authorization" in sent) == ("hk-123456", "sid=ck-654321", False)


async def test_an_api_key_declared_as_a_parameter_too_is_filled_by_the_host_not_the_model(echo: Echo) -> None:
    """The key's header parameter leaves the signature when the host has the credential, and is sent."""
    parameter: JsonObject = {"name": "X-API-Key", "in": "header", "required": True, "schema": {"type": "string"}}
    spec = secured([{"header_key": []}], parameters=[parameter])
    catalog = Catalog()
    async with OpenApiSources(catalog, [OpenApi(spec=spec, base_url=echo.url, credentials={"header_key": "hk-1"})]):
        tool = catalog.get("whoami")
        assert tool is not None
        assert render_signature(tool) == snapshot("whoami() -> Any")
    sent = await headers_sent(spec, echo, {"header_key": "hk-1"})
    assert sent["x-api-key"] == "hk-1"


async def test_a_description_read_from_a_url_calls_its_relative_server(echo: Echo) -> None:
    """A spec URL with `servers: [{url: /api}]` and a `$ref` to a second document on the same server."""
    echo.documents["/specs/main.json"] = {
        "openapi": "3.1.0",
        "info": {"title": "Remote", "version": "1"},
        "servers": [{"url": "/api"}],
        "paths": {"/things": {"get": {"operationId": "things", "responses": {"200": {"$ref": "parts.json#/ok"}}}}},
    }
    echo.documents["/specs/parts.json"] = {"ok": {"description": "fine"}}
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=f"{echo.url}/specs/main.json")]) as sources,
        CodeMode(catalog, isolation="inline") as cm,
    ):
        assert sources.failures == {}
        result = await cm.execute("return (await tools.things())['path']", cm.new_state())
    assert result.run.value == "/api/things"


async def test_calls_after_the_sources_are_closed_open_a_client_each(echo: Echo) -> None:
    """Outside `async with`, a tool still answers: the call opens and closes an HTTP client of its own.

    The echoed key reaches the model as `[redacted]`, and the server got the real one.
    """
    spec = secured([{"header_key": []}])
    catalog = Catalog()
    async with OpenApiSources(catalog, [OpenApi(spec=spec, base_url=echo.url, credentials={"header_key": "hk-2"})]):
        pass
    async with CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute("return (await tools.whoami())['headers']['x-api-key']", cm.new_state())
    assert result.run.value == "[redacted]"
    assert echo.requests[-1][2]["x-api-key"] == "hk-2"


async def test_an_api_without_a_server_url_loads_and_its_calls_say_what_the_host_must_set() -> None:
    """No `servers` and no `base_url`: the tools are searchable, and a call is a `ToolError` naming `base_url`."""
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=secured([]), name="auth")]),
        CodeMode(catalog, isolation="inline") as cm,
    ):
        code = "try:\n    await tools.whoami()\nexcept ToolError as error:\n    return str(error)"
        result = await cm.execute(code, cm.new_state())
    assert result.run.value == snapshot(
        "the API 'auth' has no server URL, so `GET /whoami` cannot be sent; the host must set `base_url` for it"
    )


async def test_a_credential_for_a_scheme_the_description_lacks_is_reported_not_silently_dropped() -> None:
    """A misspelt scheme name would never send its secret: `failures` says so and names the schemes there are."""
    catalog = Catalog()
    api = OpenApi(spec=secured([{"basic": []}]), name="auth", credentials={"basic": "a:b", "bearer": "tok-12345678"})
    async with OpenApiSources(catalog, [api]) as sources:
        assert sources.failures == snapshot(
            {
                "auth/credentials": "no security scheme named 'bearer' (the description has: 'basic', 'header_key', "
                "'cookie_key', 'oauth'); those credentials are never sent (use `headers` for one the description "
                "does not declare)"
            }
        )
        assert "tok-12345678" not in str(sources.failures)
