"""Real HTTP servers on 127.0.0.1 for the OpenAPI tests, each in a thread of the test process (`ThreadingHTTPServer`).

`Petstore` implements the petstore-expanded API with its credential checked on every request, records each
request it got (method, path and query, headers) so a test can see what was sent, and can be told to answer the
next calls of `findPets` with 429 (`Retry-After: 0`) first. `Echo` answers every request with what it received,
and serves a long text and a PNG at `/text` and `/image`. `petstore_spec` is the shared petstore-expanded
description those servers implement, with the security scheme a test picks.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from types import TracebackType

    from sandbox import JsonObject

DATA: Final = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "openapi"
"""The shared OpenAPI descriptions (absent outside the project's machines: the tests that need them skip)."""
PETSTORE_FILE: Final = DATA / "3.0-petstore-expanded.json"
BEARER: Final[JsonObject] = {"type": "http", "scheme": "bearer"}
QUERY_KEY: Final[JsonObject] = {"type": "apiKey", "in": "query", "name": "key"}


def petstore_spec(scheme: JsonObject) -> JsonObject:
    """The shared petstore-expanded description, with one security scheme (`petstore_auth`) every operation needs."""
    spec: JsonObject = json.loads(PETSTORE_FILE.read_text())
    components = spec["components"]
    assert isinstance(components, dict)
    components["securitySchemes"] = {"petstore_auth": scheme}
    spec["security"] = [{"petstore_auth": []}]
    return spec


class _Server:
    """A loopback server in a thread, for the duration of `with`; `answer` says what each request gets."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The server's base URL, `http://127.0.0.1:<port>`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], Any]:
        """The status, extra headers and body (JSON data, or bytes sent as they are) of one request."""
        raise NotImplementedError


class Echo(_Server):
    """Answers each request with its method, path, query, headers and body, as JSON.

    `/slow` holds each request for a moment and counts how many it held at once, in `most_at_once`; a path in
    `documents` gets that JSON document (an OpenAPI description served over HTTP).
    """

    def __init__(self) -> None:
        super().__init__()
        self.at_once = 0
        self.most_at_once = 0
        self.documents: dict[str, Any] = {}
        self.hold = 0.05
        """Seconds `/slow` holds each request."""

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], Any]:
        """What was received; `/text`, `/image` and `/invalid` give a long text, a PNG and a FastAPI 422 instead."""
        self.requests.append((method, target, headers))
        url = urlsplit(target)
        if url.path in self.documents:
            return 200, {}, self.documents[url.path]
        if url.path.endswith("/slow"):
            with self._lock:
                self.at_once += 1
                self.most_at_once = max(self.most_at_once, self.at_once)
            time.sleep(self.hold)  # long enough for the other calls to arrive, if the client let them
            with self._lock:
                self.at_once -= 1
        if url.path.endswith("/text"):
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, ("line of text\n" * 5000).encode()
        if url.path.endswith("/invalid"):  # what every FastAPI service answers a body it cannot validate
            detail = [
                {"type": "missing", "loc": ["body", "shipping_address"], "msg": "Field required", "input": {}},
                {"type": "int_parsing", "loc": ["body", "items", 0, "qty"], "msg": "Input should be a valid integer"},
                {"type": "missing", "loc": ["query", "currency"], "msg": "Field required"},
            ]
            return 422, {}, {"detail": detail}
        if url.path.endswith("/image"):
            return 200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + bytes(1000)
        received = {"method": method, "path": url.path, "query": parse_qs(url.query), "headers": headers}
        return 200, {}, {**received, "body": body.decode("utf-8", errors="replace")}


class Petstore(_Server):
    """The petstore on a free loopback port, for the duration of `with`.

    Args:
        token: The bearer token (or, with `key_in_query`, the `key` query parameter) every request must carry.
        key_in_query: Check `?key=<token>` instead of `Authorization: Bearer <token>`.
    """

    def __init__(self, token: str, *, key_in_query: bool = False) -> None:
        super().__init__()
        self.token = token
        self.key_in_query = key_in_query
        self.pets: dict[int, dict[str, Any]] = {1: {"id": 1, "name": "Rex", "tag": "dog"}}
        self.pets[2] = {"id": 2, "name": "Tom", "tag": "cat"}
        self.pets[3] = {"id": 3, "name": "Fido", "tag": "dog"}
        self.busy = 0
        """How many of the next `GET /pets` get `busy_status` first."""
        self.busy_status = 429
        self.retry_after = "0"

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], Any]:
        """The status, extra headers and JSON body of one request."""
        with self._lock:
            self.requests.append((method, target, headers))
            url = urlsplit(target)
            query = parse_qs(url.query)
            if not self._authorized(headers, query):
                got = query.get("key", [""])[0] if self.key_in_query else headers.get("authorization", "")
                return 401, {}, {"code": 401, "message": f"missing or wrong credentials: got {got!r}"}
            parts = [part for part in url.path.split("/") if part]
            if parts == ["pets"] and method == "GET":
                return self._find(query)
            if parts == ["pets"] and method == "POST":
                return self._add(body)
            if len(parts) == 2 and parts[0] == "pets" and parts[1].isdigit():
                return self._one(method, int(parts[1]))
            return 404, {}, {"code": 404, "message": f"no route {method} {url.path}"}

    def _authorized(self, headers: dict[str, str], query: dict[str, list[str]]) -> bool:
        if self.key_in_query:
            return query.get("key") == [self.token]
        return headers.get("authorization") == f"Bearer {self.token}"

    def _find(self, query: dict[str, list[str]]) -> tuple[int, dict[str, str], Any]:
        if self.busy > 0:
            self.busy -= 1
            return (
                self.busy_status,
                {"Retry-After": self.retry_after},
                {"code": self.busy_status, "message": "slow down"},
            )
        tags = query.get("tags", [])
        found = [pet for pet in self.pets.values() if not tags or pet.get("tag") in tags]
        if "limit" in query:
            found = found[: int(query["limit"][0])]
        return 200, {}, found

    def _add(self, body: bytes) -> tuple[int, dict[str, str], Any]:
        try:
            new = json.loads(body)
        except ValueError:
            return 400, {}, {"code": 400, "message": "the body is not JSON"}
        if not isinstance(new, dict) or not isinstance(new.get("name"), str):
            return 400, {}, {"code": 400, "message": "a pet needs a name"}
        pet = {"id": max(self.pets) + 1, **{key: new[key] for key in ("name", "tag") if key in new}}
        self.pets[pet["id"]] = pet
        return 200, {}, pet

    def _one(self, method: str, pet_id: int) -> tuple[int, dict[str, str], Any]:
        if pet_id not in self.pets:
            return 404, {}, {"code": 404, "message": f"no pet with id {pet_id}"}
        if method == "DELETE":
            del self.pets[pet_id]
            return 204, {}, None
        return 200, {}, self.pets[pet_id]


def _handler(store: _Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {key.lower(): value for key, value in self.headers.items()}
            status, extra, data = store.answer(self.command, self.path, headers, body)
            payload = data if isinstance(data, bytes) else b"" if data is None else json.dumps(data).encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client that timed out has gone
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                if payload and "Content-Type" not in extra:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the tests read `store.requests` instead."""

    return Handler
