"""`OpenApi` (where an HTTP API's description is, and how to call it) and `OpenApiSources` (its tools in a catalog).

Loading reads the description (file or URL, with its relative references) in a worker thread, makes each
operation a tool, and registers the tools that fit the catalog; what cannot be loaded (the whole description,
one operation, one name that clashes) is reported in `failures` and left out. Inside `async with`, each API has
one `httpx2.AsyncClient` for all its calls; outside it, each call opens its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Self
from urllib.parse import urljoin, urlsplit

import anyio

from codemode.catalog._sources import approval_problem, needs_approval, register_fitting, shown_names
from codemode.openapi._documents import DocumentError, Documents, is_url, parse_document, read_location
from codemode.openapi._http import HttpApi
from codemode.openapi._operations import Description, Operation, as_dict, as_list, read_description
from codemode.openapi._security import Redactor
from codemode.tools import Tool

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from types import TracebackType

    from codemode.catalog import Catalog
    from sandbox import JsonObject, JsonValue

logger = logging.getLogger("codemode.openapi")


@dataclass(frozen=True, kw_only=True)
class OpenApi:
    """An HTTP API described by OpenAPI (Swagger 2.0, OpenAPI 3.0 or 3.1), each operation to become a tool.

    Example:
        ```python
        OpenApi(
            spec="petstore.yaml",
            base_url="https://petstore.example.com/v1",
            credentials={"api_key": os.environ["PETSTORE_KEY"]},
            include=("pets",),
        )
        ```
    """

    spec: str | Path | Mapping[str, JsonValue]
    """The description: a file path, an http(s) URL, or the document already parsed."""
    base_url: str | None = None
    """Where the API is; by default the description's first server (resolved against a spec URL)."""
    name: str | None = None
    """A name for messages and `failures`; by default the spec's file name or URL host."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """HTTP headers sent with every call (kept on the host; the model never sees them)."""
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)
    """A secret per security scheme of the description: an API key, a bearer token, or `user:password` for basic."""
    include: tuple[str, ...] = ()
    """Only the operations with one of these tags or operationIds (all when empty)."""
    exclude: tuple[str, ...] = ()
    """Leave out the operations with one of these tags or operationIds."""
    prefix: str = ""
    """Prepended to each tool name (`"pets."` makes `listPets` into `pets.listPets`)."""
    approval: tuple[str, ...] = ()
    """Patterns (shell-style, `*` for all) of the operations' tool names (before `prefix`) whose calls need a
    person's approval."""
    timeout: float = 30.0
    """Seconds for each HTTP request (connect, read, write, pool)."""
    max_in_flight: int = 8
    """Calls to this API at the same time at most; more wait their turn."""
    max_retries: int = 2
    """Retries of a call answered with 429 or 503."""
    max_retry_wait: float = 30.0
    """Seconds a `Retry-After` may ask for; a longer wait is not made, and the call fails saying so."""

    def __post_init__(self) -> None:
        for key in ("include", "exclude", "approval"):
            object.__setattr__(self, key, tuple(getattr(self, key)))
        if self.max_in_flight < 1 or self.max_retries < 0 or self.timeout <= 0:
            raise ValueError("`max_in_flight` must be at least 1, `max_retries` at least 0 and `timeout` positive")

    @property
    def label(self) -> str:
        """The name given, or the spec's file stem or URL host."""
        if self.name:
            return self.name
        if isinstance(self.spec, str | Path):
            text = str(self.spec)
            return (urlsplit(text).hostname or text) if is_url(text) else Path(text).stem
        info = self.spec.get("info")
        title = info.get("title") if isinstance(info, dict) else None
        return title if isinstance(title, str) and title else "openapi"


class OpenApiSources:
    """HTTP APIs whose operations are tools of `catalog`, and the clients that make their calls.

    Args:
        catalog: Where the operations' tools go.
        apis: The APIs, loaded on entering (or by `add`).

    Example:
        ```python
        catalog = Catalog()
        api = OpenApi(spec="https://petstore3.swagger.io/api/v3/openapi.json", credentials={"api_key": key})
        async with OpenApiSources(catalog, [api]) as sources, CodeMode(catalog) as cm:
            print(sources.failures)  # operations left out, with the reason
            result = await cm.execute('return await tools.findPetsByStatus(status="available")', cm.new_state())
        ```
    """

    def __init__(self, catalog: Catalog, apis: Iterable[OpenApi] = ()) -> None:
        self.catalog = catalog
        self.failures: dict[str, str] = {}
        """What was left out, by API name (or `api/operation`), with the reason."""
        self._pending = list(apis)
        self._apis: list[HttpApi] = []
        self._stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            self._stack = stack
            pending, self._pending = self._pending, []
            await self.add(*pending)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every API's client; later calls open a client each."""
        stack, self._stack = self._stack, None
        if stack is not None:
            with anyio.CancelScope(shield=True):
                await stack.aclose()

    async def add(self, *apis: OpenApi) -> list[Tool]:
        """Load more APIs and register their tools; returns the tools registered.

        A description that cannot be read, and each operation that cannot be made a tool, is recorded in
        `failures` (and logged) and left out.
        """
        registered: list[Tool] = []
        for api in apis:
            try:
                description = await anyio.to_thread.run_sync(_read, api)
            except DocumentError as error:
                self._fail(api.label, f"cannot load the description: {error}")
                continue
            for operation, reason in description.failures.items():
                self._fail(f"{api.label}/{operation}", reason)
            if problem := _unknown_schemes(api, description):
                self._fail(f"{api.label}/credentials", problem)
            names = [shown_names(operation.name, api.prefix) for operation in description.operations]
            if problem := approval_problem(api.approval, names):  # a safety rule that protects nothing: refused
                self._fail(f"{api.label}/approval", f"{problem}; none of the API's tools is registered")
                continue
            http = _http_api(api, description)
            if self._stack is not None:
                http.client = await self._stack.enter_async_context(http.new_client())
                self._stack.callback(setattr, http, "client", None)  # closed: later calls open their own
            self._apis.append(http)
            operations = [_host_filled(op, http) for op in description.operations if _wanted(api, op)]
            registered += self._register(api, http, operations)
        return registered

    def _register(self, api: OpenApi, http: HttpApi, operations: list[Operation]) -> list[Tool]:
        tools = [_tool(http, operation, api) for operation in operations]
        return register_fitting(
            self.catalog, tools, lambda tool, error: self._fail(f"{api.label}/{tool.name}", str(error))
        )

    def _fail(self, key: str, message: str) -> None:
        self.failures[key] = message
        logger.warning("OpenAPI %s left out: %s", key, message)


def _read(api: OpenApi) -> Description:
    """Read and parse the description and its operations (blocking: run in a worker thread)."""
    if isinstance(api.spec, str | Path):
        text = str(api.spec)
        location = text if is_url(text) else str(Path(text).resolve())
        root = parse_document(read_location(location, headers=_spec_headers(api, location)), location)
    else:
        location, root = str(Path.cwd() / "openapi.json"), dict(api.spec)
    return read_description(Documents(root, location))


def _unknown_schemes(api: OpenApi, description: Description) -> str | None:
    """What is wrong with credentials given for schemes the description does not declare (a misspelt name)."""
    unknown = sorted(set(api.credentials) - set(description.schemes))
    if not unknown:
        return None
    known = ", ".join(repr(name) for name in description.schemes) or "none"
    return (
        f"no security scheme named {', '.join(repr(name) for name in unknown)} (the description has: {known}); "
        "those credentials are never sent (use `headers` for one the description does not declare)"
    )


def _spec_headers(api: OpenApi, location: str) -> Mapping[str, str]:
    """The API's headers go with the description's request only when both are on the same origin."""
    if not (api.base_url and is_url(location)):
        return {}
    spec, base = urlsplit(location), urlsplit(api.base_url)
    return api.headers if (spec.scheme, spec.netloc) == (base.scheme, base.netloc) else {}


def _http_api(api: OpenApi, description: Description) -> HttpApi:
    base_url = api.base_url or description.server
    spec = str(api.spec) if isinstance(api.spec, str | Path) else ""
    if base_url and not is_url(base_url):
        base_url = urljoin(spec, base_url) if is_url(spec) else None  # a relative server needs a spec URL
    if not base_url:
        logger.warning("OpenAPI %s has no server URL: set `base_url`, or its calls fail", api.label)
    return HttpApi(
        label=api.label,
        base_url=base_url.rstrip("/") if base_url else None,
        headers=dict(api.headers),
        credentials=dict(api.credentials),
        schemes=description.schemes,
        redactor=Redactor(api.credentials.values(), api.headers.values()),
        timeout=api.timeout,
        max_in_flight=api.max_in_flight,
        max_retries=api.max_retries,
        max_retry_wait=api.max_retry_wait,
    )


def _wanted(api: OpenApi, operation: Operation) -> bool:
    keys = {operation.name, *operation.tags}
    if api.include and not keys & set(api.include):
        return False
    return not keys & set(api.exclude)


def _host_filled(operation: Operation, http: HttpApi) -> Operation:
    """The operation without the parameters a credential fills (an API key also declared as a header parameter)."""
    filled = {
        (scheme.location, scheme.parameter.lower() if scheme.location == "header" else scheme.parameter)
        for scheme in http.schemes.values()
        if scheme.kind == "apiKey" and scheme.name in http.credentials
    }
    dropped = {
        binding.argument
        for binding in operation.bindings
        if (binding.location, binding.name.lower() if binding.location == "header" else binding.name) in filled
    }
    if not dropped:
        return operation
    parameters = dict(operation.parameters)
    parameters["properties"] = {k: v for k, v in as_dict(parameters.get("properties")).items() if k not in dropped}
    required = [name for name in as_list(parameters.get("required")) if name not in dropped]
    parameters.pop("required", None)
    if required:
        parameters["required"] = required
    bindings = tuple(binding for binding in operation.bindings if binding.argument not in dropped)
    return dataclasses.replace(operation, parameters=parameters, bindings=bindings)


def _tool(http: HttpApi, operation: Operation, api: OpenApi) -> Tool:
    async def call(**arguments: JsonValue) -> JsonValue:
        return await http.call(operation, arguments)

    parameters: JsonObject = operation.parameters
    return Tool(
        name=f"{api.prefix}{operation.name}",
        description=operation.description,
        parameters=parameters,
        returns=operation.returns,
        handler=call,
        approval=needs_approval(api.approval, *shown_names(operation.name, api.prefix)),
    )
