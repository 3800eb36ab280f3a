"""From an operation to one parameter schema and a result type, and each argument to its place in the request.

A description spread over a YAML file and a JSON file (relative `$ref`s, a recursive schema), with parameters in
the path, query, header and cookie, clashing names, `readOnly`, `nullable`, `oneOf`, enums and a Swagger 2.0
form; calls go to a loopback server that answers with what it received.
"""

from __future__ import annotations

import ast
import json
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

# The loopback servers; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import Echo

from codemode import Catalog, CodeMode
from codemode.openapi import OpenApi, OpenApiSources
from codemode.schema.stubs import render_stub

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from sandbox import JsonObject

ZOO_YAML = """
openapi: 3.0.3
info: {title: Zoo, version: "1"}
paths:
  /animals/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: integer}}
    put:
      operationId: updateAnimal
      summary: Update an animal.
      tags: [animals]
      parameters:
        - {name: id, in: query, description: The keeper's id for the animal., schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: Accept, in: header, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "schemas/animal.json#/Animal"}
      responses:
        "200":
          description: The animal as stored.
          content:
            application/json:
              schema: {$ref: "schemas/animal.json#/Animal"}
  /keepers/{name}:
    post:
      operationId: addKeeper
      tags: [people]
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                shift: {type: string, enum: [day, night]}
      responses:
        "204": {description: Added.}
"""

ANIMAL_JSON: JsonObject = {
    "Animal": {
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "name": {"type": "string"},
            "kind": {"type": "string", "enum": ["cat", "dog", "owl"]},
            "nickname": {"type": "string", "nullable": True},
            "parent": {"$ref": "#/Animal"},
            "home": {"oneOf": [{"$ref": "#/Forest"}, {"$ref": "#/Sea"}]},
        },
    },
    "Forest": {"type": "object", "properties": {"trees": {"type": "integer"}}},
    "Sea": {"type": "object", "properties": {"depth": {"type": "number"}}},
}

LOGIN_SWAGGER2: JsonObject = {
    "swagger": "2.0",
    "info": {"title": "Login", "version": "1"},
    "paths": {
        "/login": {
            "post": {
                "operationId": "login",
                "consumes": ["application/x-www-form-urlencoded"],
                "parameters": [
                    {"name": "user", "in": "formData", "type": "string", "required": True},
                    {"name": "remember", "in": "formData", "type": "boolean"},
                    {"name": "scopes", "in": "query", "type": "array", "items": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok", "schema": {"type": "object"}}},
            }
        }
    },
}


@pytest.fixture
def zoo(tmp_path: Path) -> Path:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "animal.json").write_text(json.dumps(ANIMAL_JSON))
    (tmp_path / "zoo.yaml").write_text(ZOO_YAML)
    return tmp_path / "zoo.yaml"


@pytest.fixture
def echo() -> Iterator[Echo]:
    with Echo() as server:
        yield server


async def test_a_yaml_description_with_relative_file_refs_and_a_cycle_becomes_one_stub(zoo: Path) -> None:
    """Path, query, header and cookie parameters and the body's fields are one signature; clashes get a suffix."""
    catalog = Catalog()
    async with OpenApiSources(catalog, [OpenApi(spec=zoo, base_url="http://127.0.0.1:9")]) as sources:
        assert sources.failures == {}
    tool = catalog.get("updateAnimal")
    assert tool is not None
    stub = render_stub(tool)
    ast.parse(stub)
    assert stub == snapshot('''\
class Forest(TypedDict, total=False):
    trees: int


class Sea(TypedDict, total=False):
    depth: float


class Animal(TypedDict):
    name: str
    kind: NotRequired[Literal["cat", "dog", "owl"]]
    nickname: NotRequired[str | None]
    parent: NotRequired[Animal]
    home: NotRequired[Forest | Sea]


class Animal2(TypedDict):
    id: int
    name: str
    kind: NotRequired[Literal["cat", "dog", "owl"]]
    nickname: NotRequired[str | None]
    parent: NotRequired[Animal2]
    home: NotRequired[Forest | Sea]


async def updateAnimal(
    *,
    id: int,
    name: str,
    id_query: str | None = None,
    X_Trace: str | None = None,
    session: str | None = None,
    kind: Literal["cat", "dog", "owl"] | None = None,
    nickname: str | None = None,
    parent: Animal | None = None,
    home: Forest | Sea | None = None,
) -> Animal2:
    """Update an animal.

    `PUT /animals/{id}`

    Args:
        id_query: The keeper's id for the animal.
        X_Trace: (original name: "X-Trace")
    """
    ...
''')


async def test_each_argument_goes_to_its_place_in_the_request(zoo: Path, echo: Echo) -> None:
    """The path id, the clashing query id, a header, a cookie and the JSON body (nullable `None` kept) are sent."""
    code = (
        "return await tools.updateAnimal(id=7, id_query='k-1', X_Trace='t-9', session='s-3', "
        "name='Rex', kind='dog', nickname=None)"
    )
    received = await call(zoo, echo, code)
    assert received["method"] == "PUT"
    assert received["path"] == "/animals/7"
    assert received["query"] == {"id": ["k-1"]}
    headers = received["headers"]
    assert isinstance(headers, dict)
    assert (headers["x-trace"], headers["cookie"], headers["content-type"]) == (
        "t-9",
        "session=s-3",
        "application/json",
    )
    assert json.loads(str(received["body"])) == {"name": "Rex", "kind": "dog", "nickname": None}


async def test_a_body_whose_field_clashes_with_a_parameter_is_passed_whole_as_body(zoo: Path, echo: Echo) -> None:
    """`name` is both a path parameter and a body field: the body is one argument, `body`, sent as it is."""
    code = "return await tools.addKeeper(name='ann', body={'name': 'Ann', 'shift': 'night'})"
    received = await call(zoo, echo, code)
    assert (received["path"], json.loads(str(received["body"]))) == ("/keepers/ann", {"name": "Ann", "shift": "night"})


async def test_a_swagger2_form_is_sent_urlencoded_and_a_query_array_repeats_as_csv(echo: Echo) -> None:
    """formData parameters are form fields; `collectionFormat` csv (the default) joins an array with commas."""
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=LOGIN_SWAGGER2, base_url=echo.url)]),
        CodeMode(catalog, isolation="inline") as cm,
    ):
        result = await cm.execute(
            "return await tools.login(user='ann', remember=True, scopes=['a', 'b'])", cm.new_state()
        )
    assert result.ok, result.text
    received = result.run.value
    assert isinstance(received, dict)
    assert (received["query"], received["body"]) == ({"scopes": ["a,b"]}, "user=ann&remember=true")
    headers = received["headers"]
    assert isinstance(headers, dict)
    assert headers["content-type"] == "application/x-www-form-urlencoded"


async def test_text_comes_back_bounded_and_binary_as_a_short_note(echo: Echo) -> None:
    """A text/plain result is cut at the limit with a marker; an image is described, never decoded."""
    spec: JsonObject = {
        "openapi": "3.1.0",
        "info": {"title": "Files", "version": "1"},
        "paths": {
            "/text": {"get": {"operationId": "readme", "responses": {"200": {"description": "text"}}}},
            "/image": {"get": {"operationId": "logo", "responses": {"200": {"description": "png"}}}},
        },
    }
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=spec, base_url=echo.url)]),
        CodeMode(catalog, isolation="inline") as cm,
    ):
        code = "text = await tools.readme()\nreturn [len(text), text[-70:], await tools.logo()]"
        result = await cm.execute(code, cm.new_state())
    assert result.run.value == snapshot(
        [
            19999,
            """\
line of text
line of text
line of text [... 45,033 characters cut ...]\
""",
            "[image/png response of 1,008 bytes, not shown]",
        ]
    )


async def call(spec: Path, echo: Echo, code: str) -> JsonObject:
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=spec, base_url=echo.url)]) as sources,
        CodeMode(catalog, isolation="inline") as cm,
    ):
        assert sources.failures == {}
        result = await cm.execute(code, cm.new_state())
    assert result.ok, result.text
    assert isinstance(result.run.value, dict)
    return result.run.value


async def test_include_and_exclude_match_tags_as_well_as_operation_ids(zoo: Path) -> None:
    """`include=("people",)` keeps the operations tagged `people`; `exclude` wins over `include`."""
    catalog = Catalog()
    apis = [OpenApi(spec=zoo, include=("people", "updateAnimal"), exclude=("animals",))]
    async with OpenApiSources(catalog, apis):
        assert [tool.name for tool in catalog] == ["addKeeper"]


SWAGGER2_BODY: JsonObject = {
    "swagger": "2.0",
    "info": {"title": "Pets", "version": "1"},
    "paths": {
        "/pets": {
            "post": {
                "operationId": "addPet",
                "parameters": [
                    {"name": "pet", "in": "body", "required": True, "schema": {"$ref": "#/definitions/NewPet"}},
                    {"name": "dryRun", "in": "query", "type": "boolean", "default": False},
                ],
                "responses": {"201": {"description": "made", "schema": {"$ref": "#/definitions/NewPet"}}},
            }
        }
    },
    "definitions": {
        "NewPet": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        }
    },
}


async def test_a_swagger2_body_parameter_is_flattened_into_its_fields_and_sent_as_json(echo: Echo) -> None:
    """An `in: body` parameter's object schema gives `name` and `age` arguments; the body is the JSON of them."""
    catalog = Catalog()
    async with (
        OpenApiSources(catalog, [OpenApi(spec=SWAGGER2_BODY, base_url=echo.url)]),
        CodeMode(catalog, isolation="inline") as cm,
    ):
        tool = catalog.get("addPet")
        assert tool is not None
        assert render_stub(tool).splitlines()[5] == snapshot(
            "async def addPet(*, name: str, dryRun: bool = False, age: int | None = None) -> NewPet:"
        )
        result = await cm.execute("return await tools.addPet(name='Rex', age=3, dryRun=True)", cm.new_state())
    received = result.run.value
    assert isinstance(received, dict)
    assert (received["query"], json.loads(str(received["body"]))) == ({"dryRun": ["true"]}, {"name": "Rex", "age": 3})
