"""Calls through `CodeMode`: model code calls the petstore-expanded API served on 127.0.0.1 by a real HTTP server."""

from __future__ import annotations

import logging
import socket
from typing import TYPE_CHECKING, Literal

import pytest
from inline_snapshot import snapshot

# The loopback server; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import BEARER, PETSTORE_FILE, QUERY_KEY, Echo, Petstore, petstore_spec

from codemode import Catalog, CodeMode
from codemode.openapi import OpenApi, OpenApiSources
from codemode.schema.stubs import render_stub

if TYPE_CHECKING:
    from collections.abc import Iterator

    from codemode import ExecuteResult
    from sandbox import JsonObject

SECRET = "sk-live-7f3a9c2e51d84b06"

pytestmark = pytest.mark.skipif(not PETSTORE_FILE.is_file(), reason="../shared/data/openapi is absent")


@pytest.fixture
def store() -> Iterator[Petstore]:
    with Petstore(SECRET) as server:
        yield server


async def run(
    spec: JsonObject,
    url: str,
    code: str,
    *,
    credential: str = SECRET,
    isolation: Literal["inline", "process"] = "inline",
) -> ExecuteResult:
    catalog = Catalog()
    api = OpenApi(spec=spec, base_url=url, name="petstore", credentials={"petstore_auth": credential})
    async with OpenApiSources(catalog, [api]) as sources, CodeMode(catalog, isolation=isolation) as cm:
        assert sources.failures == {}
        return await cm.execute(code, cm.new_state())


LIST_CREATE_MISSING = """
dogs = await tools.findPets(tags=["dog"], limit=5)
new = await tools.addPet(name="Luna", tag="cat")
try:
    await tools.find_pet_by_id(id=99)
except ToolError as error:
    missing = str(error)
return {"dogs": [pet["name"] for pet in dogs], "new": new, "missing": missing}
"""


async def test_model_code_lists_with_a_query_creates_with_a_body_and_reads_a_404_as_tool_error(
    store: Petstore,
) -> None:
    """A query parameter, a JSON body and a 404 with the API's own message, in one run in a worker process."""
    result = await run(petstore_spec(BEARER), store.url, LIST_CREATE_MISSING, isolation="process")
    assert result.ok, result.text
    assert result.run.value == {
        "dogs": ["Rex", "Fido"],
        "new": {"id": 4, "name": "Luna", "tag": "cat"},
        "missing": "`GET /pets/{id}` failed with HTTP 404 Not Found: no pet with id 99",
    }
    assert [(method, target) for method, target, _ in store.requests] == [
        ("GET", "/pets?tags=dog&limit=5"),
        ("POST", "/pets"),
        ("GET", "/pets/99"),
    ]
    assert store.pets[4] == {"id": 4, "name": "Luna", "tag": "cat"}


async def test_a_429_is_retried_after_the_wait_the_api_asks_for_and_then_succeeds(store: Petstore) -> None:
    """`Retry-After: 0` on a 429: the call is sent again and the model gets the answer, not the 429."""
    store.busy = 1
    result = await run(petstore_spec(BEARER), store.url, "return await tools.findPets(limit=1)")
    assert result.run.value == [{"id": 1, "name": "Rex", "tag": "dog"}]
    assert [target for _, target, _ in store.requests] == ["/pets?limit=1", "/pets?limit=1"]


async def test_429s_past_the_retries_are_a_tool_error_that_says_how_often_it_was_tried(store: Petstore) -> None:
    """Retries are bounded: three 429s in a row (two retries) reach the model with the status and the message."""
    store.busy = 5
    code = "try:\n    await tools.findPets()\nexcept ToolError as error:\n    return str(error)"
    result = await run(petstore_spec(BEARER), store.url, code)
    assert result.run.value == snapshot(
        "`GET /pets` failed with HTTP 429 Too Many Requests (sent 3 times; the API asks to retry after '0' s): "
        "slow down"
    )
    assert len(store.requests) == 3


async def test_a_503_asking_for_a_longer_wait_than_the_host_allows_fails_at_once(store: Petstore) -> None:
    """`Retry-After: 3600` is over `max_retry_wait`: no wait, one request, and the model reads why."""
    store.busy, store.busy_status, store.retry_after = 1, 503, "3600"
    code = "try:\n    await tools.findPets()\nexcept ToolError as error:\n    return str(error)"
    result = await run(petstore_spec(BEARER), store.url, code)
    assert result.run.value == snapshot(
        "`GET /pets` failed with HTTP 503 Service Unavailable (sent once; the API asks to retry after '3600' s, "
        "more than the 30 s the host waits): slow down"
    )
    assert len(store.requests) == 1


SLOW: JsonObject = {
    "openapi": "3.1.0",
    "info": {"title": "Slow", "version": "1"},
    "paths": {"/slow": {"get": {"operationId": "slow", "responses": {"200": {"description": "ok"}}}}},
}


async def test_calls_in_flight_to_one_api_are_capped() -> None:
    """Eight calls gathered at once reach the server at most `max_in_flight` (here 2) at a time, and all answer."""
    code = "import asyncio\nanswers = await asyncio.gather(*[tools.slow() for _ in range(8)])\nreturn len(answers)"
    catalog = Catalog()
    with Echo() as echo:
        api = OpenApi(spec=SLOW, base_url=echo.url, max_in_flight=2)
        async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
            result = await cm.execute(code, cm.new_state())
        assert (result.run.value, len(echo.requests), echo.most_at_once) == (8, 8, 2)


async def test_a_call_that_outlives_the_timeout_is_a_tool_error_saying_so() -> None:
    """The server holds the request longer than `timeout`: the model reads that the API did not answer in time."""
    code = "try:\n    await tools.slow()\nexcept ToolError as error:\n    return str(error)"
    catalog = Catalog()
    with Echo() as echo:
        echo.hold = 1.0
        api = OpenApi(spec=SLOW, base_url=echo.url, name="slow", timeout=0.1)
        async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
            result = await cm.execute(code, cm.new_state())
    assert result.run.value == snapshot("`GET /slow` on 'slow' did not answer within 0.1 s")


async def test_a_post_that_outlives_the_timeout_may_have_been_carried_out_and_its_call_is_marked_so() -> None:
    """A request that changes data and times out may have reached the API: the record marks it `in_flight`."""
    spec: JsonObject = {
        "openapi": "3.1.0",
        "info": {"title": "Slow", "version": "1"},
        "paths": {"/slow": {"post": {"operationId": "send_slowly", "responses": {"200": {"description": "ok"}}}}},
    }
    code = "await tools.send_slowly()"
    catalog = Catalog()
    with Echo() as echo:
        echo.hold = 1.0
        api = OpenApi(spec=spec, base_url=echo.url, name="slow", timeout=0.1)
        async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
            result = await cm.execute(code, cm.new_state())
    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: `POST /slow` on 'slow' did not answer within 0.1 s; it may still have taken effect: check before "
        "you repeat it (line 1)"
    )
    assert [(call.name, call.in_flight) for call in result.calls] == [("send_slowly", True)]


async def test_the_bearer_token_is_checked_by_the_server_and_seen_nowhere_by_the_model(
    store: Petstore, caplog: pytest.LogCaptureFixture
) -> None:
    """The server gets the token on every call; result text, stubs, announcement and logs never show it."""
    caplog.set_level(logging.DEBUG)
    code = LIST_CREATE_MISSING.replace("return", 'print(await tools.describe("addPet"))\nreturn')
    catalog = Catalog()
    api = OpenApi(spec=petstore_spec(BEARER), base_url=store.url, credentials={"petstore_auth": SECRET})
    async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute(code, cm.new_state())
    assert result.ok, result.text
    assert {headers.get("authorization") for _, _, headers in store.requests} == {f"Bearer {SECRET}"}
    stubs = "".join(render_stub(tool) for tool in catalog)
    seen = [result.text, result.announcement or "", repr(result), stubs, caplog.text, repr(api), repr(catalog)]
    assert [SECRET in text for text in seen] == [False] * len(seen)
    assert "HTTP Request: GET" in caplog.text  # httpx2 logged the requests, without the token


async def test_a_secret_the_api_echoes_back_reaches_the_model_redacted(store: Petstore) -> None:
    """A wrong token echoed in the API's error message is replaced by `[redacted]` before the model reads it."""
    code = "try:\n    await tools.findPets()\nexcept ToolError as error:\n    return str(error)"
    result = await run(petstore_spec(BEARER), store.url, code, credential="sk-wrong-0000000000")
    assert result.run.value == snapshot(
        "`GET /pets` failed with HTTP 401 Unauthorized: missing or wrong credentials: got 'Bearer [redacted]'"
    )


async def test_an_api_key_in_the_query_is_sent_by_the_host_and_redacted_from_the_http_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A query API key is in the URL the server gets, and httpx2's request log line shows `[redacted]` instead."""
    caplog.set_level(logging.DEBUG)
    with Petstore(SECRET, key_in_query=True) as server:
        result = await run(petstore_spec(QUERY_KEY), server.url, "return await tools.find_pet_by_id(id=2)")
        assert [target for _, target, _ in server.requests] == [f"/pets/2?key={SECRET}"]
    assert result.run.value == {"id": 2, "name": "Tom", "tag": "cat"}
    assert SECRET not in caplog.text
    assert '/pets/2?key=[redacted] "HTTP/1.0 200 OK"' in caplog.text


ORDERS: JsonObject = {
    "openapi": "3.1.0",
    "info": {"title": "Shop", "version": "1"},
    "paths": {
        "/invalid": {
            "post": {
                "operationId": "create_order",
                "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


async def test_a_fastapi_422_names_each_field_it_refused() -> None:
    """A FastAPI/pydantic `detail` list keeps each error's `loc`, so the model learns which field was wrong."""
    code = "try:\n    await tools.create_order(body={'sku': 'A'})\nexcept ToolError as error:\n    return str(error)"
    catalog = Catalog()
    with Echo() as echo:
        async with OpenApiSources(catalog, [OpenApi(spec=ORDERS, base_url=echo.url)]), CodeMode(catalog) as cm:
            result = await cm.execute(code, cm.new_state())
    assert result.run.value == snapshot(
        "`POST /invalid` failed with HTTP 422 Unprocessable Entity: shipping_address: Field required; "
        "items.0.qty: Input should be a valid integer; currency: Field required"
    )


async def test_a_server_that_cannot_be_reached_is_a_tool_error_naming_the_url_tried() -> None:
    """A refused connection names the API, the operation and the URL it was sent to, which is what to check."""
    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = "try:\n    await tools.slow()\nexcept ToolError as error:\n    return str(error)"
    catalog = Catalog()
    api = OpenApi(spec=SLOW, base_url=f"http://127.0.0.1:{port}/v1", name="slow", max_retries=0)
    async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute(code, cm.new_state())
    assert isinstance(result.run.value, str)
    assert result.run.value.replace(str(port), "PORT") == snapshot(
        "cannot reach 'slow' for `GET /slow`: ConnectError: All connection attempts failed (the URL tried: http://127.0.0.1:PORT/v1/slow)"
    )


VERSIONED: JsonObject = {
    "openapi": "3.0.3",
    "info": {"title": "Records", "version": "1"},
    "paths": {
        "/{dataset}/{version}/records": {
            "get": {
                "operationId": "perform_search",
                "parameters": [
                    {"name": "dataset", "in": "path", "required": True, "schema": {"type": "string"}},
                    {
                        "name": "version",
                        "in": "path",
                        "required": True,
                        "description": "The API version.",
                        "schema": {"type": "string", "default": "v1"},
                    },
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


async def test_a_path_parameter_with_a_default_may_be_left_out_and_its_default_fills_the_url() -> None:
    """`version` (default "v1") is optional in the stub, and a call without it is sent to `/oa/v1/records`."""
    catalog = Catalog()
    with Echo() as echo:
        api = OpenApi(spec=VERSIONED, base_url=echo.url)
        async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
            code = (
                'return [await tools.perform_search(dataset="oa"),\n'
                '        await tools.perform_search(dataset="oa", version="v2")]'
            )
            result = await cm.execute(code, cm.new_state())
    tool = catalog.get("perform_search")
    assert tool is not None
    assert isinstance(result.run.value, list)
    assert [answer["path"] for answer in result.run.value] == ["/oa/v1/records", "/oa/v2/records"]
    assert render_stub(tool) == snapshot('''\
async def perform_search(*, dataset: str, version: str = "v1") -> Any:
    """`GET /{dataset}/{version}/records`

    Args:
        version: The API version.
    """
    ...
''')
