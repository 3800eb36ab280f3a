"""Loading OpenAPI descriptions: the OpenAPI Initiative's examples, each operation a tool with a stub that parses."""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

# The shared descriptions' folder; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import DATA

from codemode import Catalog
from codemode.openapi import OpenApi, OpenApiSources
from codemode.schema.stubs import render_stub

if TYPE_CHECKING:
    from pathlib import Path

    from sandbox import JsonObject

FILES = sorted(DATA.glob("*.json")) if DATA.is_dir() else []

# The tools each description gives: every operation (webhooks are calls the API makes, not tools).
EXPECTED = {
    "2.0-petstore.json": ["listPets", "createPets", "showPetById"],
    "2.0-uber.json": ["get_products", "get_estimates_price", "get_estimates_time", "get_me", "get_history"],
    "3.0-api-with-examples.json": ["listVersionsv2", "getVersionDetailsv2"],
    "3.0-callback-example.json": ["post_streams"],
    "3.0-link-example.json": [
        "getUserByName",
        "getRepositoriesByOwner",
        "getRepository",
        "getPullRequestsByRepository",
        "getPullRequestsById",
        "mergePullRequest",
    ],
    "3.0-petstore-expanded.json": ["findPets", "addPet", "find pet by id", "deletePet"],
    "3.0-petstore.json": ["listPets", "createPets", "showPetById"],
    "3.0-uspto.json": ["list-data-sets", "list-searchable-fields", "perform-search"],
    "3.1-non-oauth-scopes.json": ["get_users"],
    "3.1-tictactoe.json": ["get-board", "get-square", "put-square"],
    "3.1-webhook-example.json": [],
}


async def load(spec: str | Path | JsonObject, **options: object) -> tuple[Catalog, dict[str, str]]:
    catalog = Catalog()
    async with OpenApiSources(catalog, [OpenApi(spec=spec, **options)]) as sources:  # type: ignore[arg-type]
        return catalog, dict(sources.failures)


@pytest.mark.skipif(not FILES, reason="../shared/data/openapi is absent")
@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
async def test_every_shared_description_loads_each_operation_as_a_tool_whose_stub_parses(path: Path) -> None:
    """Every operation of every example description is a tool; its stub parses and renders the same twice."""
    catalog, failures = await load(path)
    assert failures == {}
    assert [tool.name for tool in catalog] == EXPECTED[path.name]
    for tool in catalog:
        stub = render_stub(tool)
        ast.parse(stub)
        assert render_stub(tool) == stub
    again, _ = await load(path)
    assert [render_stub(tool) for tool in again] == [render_stub(tool) for tool in catalog]


@pytest.mark.skipif(not FILES, reason="../shared/data/openapi is absent")
async def test_petstore_expanded_stubs_show_the_query_body_and_result_types() -> None:
    """The query parameters, the JSON body's fields and the 2xx JSON result appear as Python types."""
    catalog, _ = await load(DATA / "3.0-petstore-expanded.json")
    add_pet = catalog.get("addPet")
    assert add_pet is not None
    assert render_stub(add_pet) == snapshot('''\
class Pet(TypedDict):
    name: str
    tag: NotRequired[str]
    id: int  # (format: int64)


async def addPet(*, name: str, tag: str | None = None) -> Pet:
    """Creates a new pet in the store. Duplicates are allowed

    `POST /pets`
    """
    ...
''')
    by_id = catalog.get("find_pet_by_id")
    assert by_id is not None
    assert render_stub(by_id).splitlines()[6] == snapshot("async def find_pet_by_id(*, id: int) -> Pet:")


def test_the_package_exports_exactly_its_documented_names() -> None:
    """`codemode.openapi.__all__` is pinned and sorted."""
    import codemode.openapi

    assert codemode.openapi.__all__ == ["OpenApi", "OpenApiSources", "openapi_apis"]


def test_importing_codemode_imports_neither_the_openapi_package_nor_yaml() -> None:
    """The OpenAPI source is an edge: `import codemode` (and its config) loads neither it nor PyYAML."""
    probe = (
        "import sys, codemode, codemode.config; "
        "print(sorted(m for m in sys.modules if m.startswith(('codemode.openapi', 'yaml'))))"
    )
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert output == "[]\n"


BROKEN: JsonObject = {
    "openapi": "3.0.3",
    "info": {"title": "Broken", "version": "1"},
    "paths": {
        "/ok": {"get": {"operationId": "ok", "responses": {"200": {"description": "fine"}}}},
        "/dangling": {
            "get": {
                "operationId": "dangling",
                "parameters": [{"$ref": "#/components/parameters/Missing"}],
                "responses": {"200": {"description": "fine"}},
            }
        },
        "/nameless": {
            "get": {
                "operationId": "nameless",
                "parameters": [{"in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "fine"}},
            }
        },
        "/upload": {
            "post": {
                "operationId": "upload",
                "requestBody": {"content": {"application/octet-stream": {"schema": {"type": "string"}}}},
                "responses": {"204": {"description": "stored"}},
            }
        },
    },
}


async def test_a_bad_operation_is_reported_and_left_out_while_the_others_load() -> None:
    """One dangling reference or unsendable body costs only its own operation, with the reason."""
    catalog, failures = await load(BROKEN, name="broken")
    assert [tool.name for tool in catalog] == ["ok"]
    assert failures == snapshot(
        {
            "broken/dangling": "the reference openapi.json#/components/parameters/Missing leads nowhere",
            "broken/nameless": "a parameter has no `name`: {'in': 'query', 'schema': {'type': 'string'}}",
            "broken/upload": (
                "its request body is ['application/octet-stream']; only JSON, form and text bodies are sent"
            ),
        }
    )


async def test_a_description_that_is_not_openapi_is_reported_whole(tmp_path: Path) -> None:
    """A file that is not an OpenAPI description is one failure for the source, and the catalog stays empty."""
    (tmp_path / "notes.json").write_text('{"title": "not an API"}')
    catalog, failures = await load(tmp_path / "notes.json")
    assert len(catalog) == 0
    assert failures == snapshot(
        {"notes": "cannot load the description: not an OpenAPI 2.0, 3.0 or 3.1 description (its version is 'missing')"}
    )


async def test_an_operation_whose_name_is_taken_is_reported_and_the_others_load() -> None:
    """An operation named like a tool already in the catalog is left out with the reason; the rest register."""
    spec: JsonObject = {
        "openapi": "3.0.3",
        "info": {"title": "shop", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/orders": {"get": {"operationId": "listOrders", "responses": {"200": {"description": "ok"}}}},
            "/refunds": {"post": {"operationId": "refund", "responses": {"204": {"description": "done"}}}},
        },
    }
    catalog = Catalog()
    catalog.add(name="refund", description="Refund an order, by hand.", parameters={"type": "object"})
    async with OpenApiSources(catalog, [OpenApi(spec=spec, name="shop")]) as sources:
        assert sources.failures == snapshot(
            {
                "shop/refund": "Tool 'refund' is already in the catalog. Give the new tool another name, use "
                "`catalog.replace(tool)` to change its definition, or load each source with its own `prefix`."
            }
        )
        assert [tool.name for tool in catalog] == ["refund", "listOrders"]
        assert catalog.get("refund").description == "Refund an order, by hand."  # type: ignore[union-attr]
