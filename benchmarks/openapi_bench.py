"""OpenAPI sources: how long a large description takes to load, and what a call costs over a bare httpx2 request.

Load: a synthetic OpenAPI 3.0 description of N paths (a GET and a PUT each, 2N operations) over 50 shared,
mutually recursive schemas with `readOnly` fields, loaded into a catalog (median of the repeats), and each of
the shared example descriptions. Call: a GET with a query parameter and a JSON result against a stdlib server on
127.0.0.1, through the tool's handler (arguments bound, credential applied, response read and redacted), against
the floor: the same request with a bare `httpx2.AsyncClient`. Medians of the repeats, and the ratio to the floor.

Run: .venv/bin/python benchmarks/openapi_bench.py [--paths 1000] [--repeats 5] [--calls 300]
Check that it runs (20 paths, one load each, 5 calls): `--quick`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from _data import DATA, missing

from codemode import Catalog
from codemode.openapi import OpenApi, OpenApiSources

if TYPE_CHECKING:
    from pathlib import Path


def synthetic(paths: int) -> dict[str, Any]:
    def ref(i: int) -> dict[str, str]:
        return {"$ref": f"#/components/schemas/Thing{i % 50}"}

    schemas = {
        f"Thing{i}": {
            "type": "object",
            "properties": {"id": {"type": "integer", "readOnly": True}, "name": {"type": "string"}, "next": ref(i + 1)},
        }
        for i in range(50)
    }
    path_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
    ok = {"description": "ok", "content": {"application/json": {"schema": ref(0)}}}
    items = {
        f"/things{i}/{{id}}": {
            "get": {"operationId": f"getThing{i}", "parameters": [path_id], "responses": {"200": ok}},
            "put": {
                "operationId": f"putThing{i}",
                "parameters": [path_id],
                "requestBody": {"content": {"application/json": {"schema": ref(i)}}},
                "responses": {"200": ok},
            },
        }
        for i in range(paths)
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Synthetic", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": items,
        "components": {"schemas": schemas},
    }


async def load_seconds(spec: dict[str, Any] | Path) -> tuple[float, int]:
    catalog = Catalog()
    started = time.perf_counter()
    async with OpenApiSources(catalog, [OpenApi(spec=spec, base_url="http://127.0.0.1:9")]):
        return time.perf_counter() - started, len(catalog)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so both clients reuse their connection
    disable_nagle_algorithm = True  # headers and body are two writes: without this each waits a delayed ACK

    def do_GET(self) -> None:
        body = json.dumps([{"id": 1, "name": "Rex"}, {"id": 2, "name": "Tom"}]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


CALL_SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1"},
    "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    "security": [{"bearer": []}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "findPets",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "pets", "content": {"application/json": {"schema": {}}}}},
            }
        }
    },
}


async def call_medians(url: str, calls: int) -> tuple[float, float]:
    """Median seconds of one call through the tool and of the same bare request, interleaved."""
    catalog = Catalog()
    api = OpenApi(spec=CALL_SPEC, base_url=url, credentials={"bearer": "token-0123456789"})
    ours, floor = [], []
    async with OpenApiSources(catalog, [api]), httpx2.AsyncClient() as client:
        tool = catalog.get("findPets")
        assert tool is not None
        assert tool.handler is not None
        for _ in range(calls):
            started = time.perf_counter()
            await tool.handler(limit=2)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            headers = {"Authorization": "Bearer token-0123456789"}
            (await client.get(f"{url}/pets", params={"limit": 2}, headers=headers)).json()
            floor.append(time.perf_counter() - started)
    return statistics.median(ours), statistics.median(floor)


async def main(args: argparse.Namespace) -> None:
    spec = synthetic(args.paths)
    runs = [await load_seconds(spec) for _ in range(args.repeats)]
    print("| load | median |\n|---|---:|")
    print(f"| synthetic, {runs[0][1]} operations | {statistics.median(t for t, _ in runs) * 1000:,.0f} ms |")
    examples = DATA / "openapi"
    for path in [] if missing("the shared example descriptions", examples) else sorted(examples.glob("*.json")):
        times = [(await load_seconds(path))[0] for _ in range(args.repeats)]
        print(f"| {path.name} | {statistics.median(times) * 1000:,.1f} ms |")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ours, floor = await call_medians(f"http://127.0.0.1:{server.server_address[1]}", args.calls)
    finally:
        server.shutdown()
        server.server_close()
    print("\n| call | median | floor | ratio |\n|---|---:|---:|---:|")
    print(f"| call through the tool | {ours * 1e6:,.0f} µs | bare httpx2 {floor * 1e6:,.0f} µs | {ours / floor:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="check that it runs: 20 paths, one load each, 5 calls")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.paths, arguments.repeats, arguments.calls = 20, 1, 5
    anyio.run(main, arguments)
