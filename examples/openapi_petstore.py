"""An HTTP API as tools: the petstore-expanded OpenAPI description, called with httpx2 from the model's code.

The program serves a small petstore on 127.0.0.1 (a thread, stdlib `http.server`) that wants a bearer token, and
loads the description with the token as a credential kept on the host. A scripted model plays the conversation
offline, in Anthropic's wire format: it searches, lists pets with a query parameter, adds one with a JSON body,
and reads a 404 as a `ToolError`. The token is checked by the server and never shown to the model.

Run: python examples/openapi_petstore.py   (offline, no API key)
"""

from __future__ import annotations

import json
import secrets
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import anyio

from codemode import Catalog, CodeMode
from codemode.agent import Agent, AgentEvents
from codemode.openapi import OpenApi, OpenApiSources
from codemode.providers.anthropic import AnthropicWire
from codemode.testing import ScriptedModel, ScriptStep, step

TASK = "Which dogs do we have? Add a cat called Luna, then check whether pet 42 exists."
TOKEN = secrets.token_hex(16)


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": "JSON", "content": {"application/json": {"schema": schema}}}


PET = {"$ref": "#/components/schemas/Pet"}
NEW_PET = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
}
DESCRIPTION: dict[str, Any] = {  # the petstore-expanded example, trimmed, with a bearer token required
    "openapi": "3.0.0",
    "info": {"title": "Swagger Petstore", "version": "1.0.0"},
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "NewPet": NEW_PET,
            "Pet": {"allOf": [{"$ref": "#/components/schemas/NewPet"}, {"properties": {"id": {"type": "integer"}}}]},
        },
    },
    "security": [{"bearer": []}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "findPets",
                "summary": "Returns all pets, filtered by tag.",
                "parameters": [
                    {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": json_body({"type": "array", "items": PET})},
            },
            "post": {
                "operationId": "addPet",
                "summary": "Creates a new pet in the store.",
                "requestBody": {"required": True, **json_body({"$ref": "#/components/schemas/NewPet"})},
                "responses": {"200": json_body(PET)},
            },
        },
        "/pets/{id}": {
            "get": {
                "operationId": "findPetById",
                "summary": "Returns one pet by its id.",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {"200": json_body(PET)},
            }
        },
    },
}


class PetstoreHandler(BaseHTTPRequestHandler):
    """The petstore: a dict of pets, the bearer token checked on every request."""

    pets: ClassVar[dict[int, dict[str, Any]]] = {
        1: {"id": 1, "name": "Rex", "tag": "dog"},
        2: {"id": 2, "name": "Tom", "tag": "cat"},
    }

    def answer(self) -> tuple[int, Any]:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"code": 401, "message": "missing or wrong token"}
        url = urlsplit(self.path)
        if url.path == "/pets" and self.command == "GET":
            tags = parse_qs(url.query).get("tags", [])
            return 200, [pet for pet in self.pets.values() if not tags or pet.get("tag") in tags]
        if url.path == "/pets" and self.command == "POST":
            new = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            pet = {"id": max(self.pets) + 1, **new}
            self.pets[pet["id"]] = pet
            return 200, pet
        pet_id = url.path.removeprefix("/pets/")
        if pet_id.isdigit() and int(pet_id) in self.pets:
            return 200, self.pets[int(pet_id)]
        return 404, {"code": 404, "message": f"no pet with id {pet_id}"}

    def serve(self) -> None:
        status, data = self.answer()
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = serve

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


SCRIPT: list[ScriptStep] = [
    step(
        "Let me find the pet tools.",
        'for tool in await tools.search("pets: list, add, find by id", max_results=3):\n    print(tool["signature"])',
    ),
    step(
        "I'll do all three steps in one go.",
        'dogs = await tools.findPets(tags=["dog"])\n'
        'luna = await tools.addPet(name="Luna", tag="cat")\n'
        "try:\n"
        "    found = await tools.findPetById(id=42)\n"
        "except ToolError as error:\n"
        "    found = str(error)\n"
        'return {"dogs": [pet["name"] for pet in dogs], "added": luna, "pet 42": found}',
    ),
    step("We have one dog, Rex. Luna the cat is added (id 3). There is no pet 42."),
]


def transcript() -> AgentEvents:
    """Print what the model says, the code it runs, and each result."""

    def on_code(call: Any) -> None:
        print("\n[code]\n" + textwrap.indent(call.code.rstrip(), "  | "))

    def on_result(call: Any, result: Any) -> None:
        print("[result]\n" + textwrap.indent(result.text, "  > "))
        if result.announcement:
            print(f"[announced: {result.announced.summary()}]")

    return AgentEvents(on_text=lambda text: print(text, end=""), on_code=on_code, on_result=on_result)


async def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), PetstoreHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = OpenApi(
            spec=DESCRIPTION, base_url=f"http://127.0.0.1:{server.server_address[1]}", credentials={"bearer": TOKEN}
        )
        catalog = Catalog()
        async with OpenApiSources(catalog, [api]), CodeMode(catalog) as cm:
            print(f"{len(catalog)} tools from the petstore description behind one `code` tool")
            print(f"\nuser: {TASK}\n")
            model = ScriptedModel(AnthropicWire(), SCRIPT)
            agent = Agent(cm, model, model_name="scripted", events=transcript())
            result = await agent.run(TASK)
            shown = "shown" if TOKEN in json.dumps(agent.messages) else "never shown"
            print(f"\n\n[{result.stopped}; the token was {shown} to the model]")
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    anyio.run(main)
