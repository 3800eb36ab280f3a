"""`codemode serve` over HTTP lets no one in without a credential, checks Host and Origin on every address, and
runs each call as the caller it authenticated.

Real HTTP on 127.0.0.1: the server is `codemode.mcp.http_app` under uvicorn in the test's event loop (or the real
`codemode serve` command), the client the official `mcp` one. The issuer's JWKS is made here (an RSA key from
`cryptography`), served from a file or a loopback HTTP server: no network.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import pytest

pytest.importorskip("mcp.client")
pytest.importorskip("jwt")
pytest.importorskip("uvicorn")

import jwt
import uvicorn
from approval_shop import REFUND_CODE, REFUNDED, SECRET, make_shop
from cli_kit import cli, python_config, serve_http
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from codemode import CallInfo, CodeMode, Deny, DiscoveryState, Policy
from codemode.config import load_config
from codemode.config._serve import keys_from_env
from codemode.errors import ConfigError
from codemode.mcp import ApiKey, JwtIssuer, ServeSettings, http_app
from codemode.mcp._auth import describe_access

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from starlette.applications import Starlette

ALICE_KEY = "alice-key-0123456789abcdef"
BOB_KEY = "bob-key-0123456789abcdef"
ISSUER = "https://auth.example.test"
AUDIENCE = "https://mcp.example.test/mcp"
BALANCE = 'return await tools.get_order(order_id="A1")'
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@dataclass(frozen=True)
class Issuer:
    """A JWT issuer of the tests: its signing key and its JWKS."""

    key: rsa.RSAPrivateKey
    jwks: dict[str, Any]
    kid: str = "k1"

    def token(self, **claims: Any) -> str:
        """A JWT signed by this issuer: valid for `AUDIENCE` for an hour unless `claims` say otherwise."""
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-42", "iat": now, "exp": now + 3600} | claims
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": self.kid})


def make_issuer(kid: str = "k1") -> Issuer:
    """A fresh RSA key and the JWKS that publishes it as `kid`."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return Issuer(key=key, jwks={"keys": [public | {"kid": kid, "use": "sig", "alg": "RS256"}]}, kid=kid)


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    """The tests' JWT issuer."""
    return make_issuer()


@pytest.fixture
def jwks_file(issuer: Issuer, tmp_path: Path) -> str:
    """The issuer's JWKS as a file."""
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(issuer.jwks), encoding="utf-8")
    return str(path)


@contextmanager
def jwks_server(jwks: dict[str, Any], fetches: list[str] | None = None) -> Iterator[str]:
    """`jwks` (as it is at each request) served over HTTP on 127.0.0.1, its URL while the block lasts.

    Each request's path is appended to `fetches`.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if fetches is not None:
                fetches.append(self.path)
            body = json.dumps(jwks).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def keys(**named: str) -> tuple[ApiKey, ...]:
    """API keys by name."""
    return tuple(ApiKey.parse(name, key, "test") for name, key in named.items())


@asynccontextmanager
async def running(app: Starlette, bind: str = "127.0.0.1") -> AsyncIterator[str]:
    """`app` under uvicorn on a free port of `bind`; its MCP URL on loopback until the block ends."""
    server = uvicorn.Server(uvicorn.Config(app, host=bind, port=0, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(10):
            while not server.started:  # noqa: ASYNC110  # uvicorn offers no event for its start
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/mcp"
        finally:
            server.should_exit = True


@asynccontextmanager
async def served(cm: CodeMode, settings: ServeSettings, bind: str | None = None, **options: Any) -> AsyncIterator[str]:
    """`http_app(cm, settings=settings, **options)` listening on `bind` (default: its host, or loopback); its URL."""
    async with running(http_app(cm, settings=settings, **options), bind or options.get("host", "127.0.0.1")) as url:
        yield url


@asynccontextmanager
async def client(url: str, token: str | None = None, mode: str = "auto") -> AsyncIterator[Client]:
    """The official client, sending `token` as its bearer token (none if None), on protocol `mode`."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=10) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as session,
    ):
        yield session


async def call(
    url: str, token: str | None, code: str = BALANCE, meta: dict[str, Any] | None = None, mode: str = "auto"
) -> Any:
    """One `code` call in a session of its own."""
    async with client(url, token, mode) as session:
        return await session.call_tool("code", {"code": code}, meta=meta)


async def test_a_request_without_a_token_gets_401_with_www_authenticate_and_nothing_runs() -> None:
    """No `Authorization` header: `401`, `WWW-Authenticate: Bearer` naming the resource metadata; no handler ran."""
    shop = make_shop()
    async with shop.code_mode() as cm, served(cm, ServeSettings(api_keys=keys(alice=ALICE_KEY))) as url:
        async with httpx2.AsyncClient() as http:
            response = await http.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        with pytest.raises(ExceptionGroup) as refused:
            await call(url, None)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert challenge.endswith('/.well-known/oauth-protected-resource/mcp"')
    assert refused.group_contains(MCPError)
    assert sum(shop.made.values()) == 0


@pytest.mark.parametrize(
    ("token", "why"),
    [
        pytest.param(lambda issuer: "not-alices-key-0123456789", "a wrong API key", id="wrong key"),
        pytest.param(lambda issuer: ALICE_KEY.upper(), "a key that differs in case", id="case"),
        pytest.param(lambda issuer: issuer.token(exp=int(time.time()) - 3600), "an expired JWT", id="expired"),
        pytest.param(lambda issuer: issuer.token(aud="https://other.example/mcp"), "another audience", id="aud"),
        pytest.param(lambda issuer: issuer.token(iss="https://evil.example"), "another issuer", id="iss"),
        pytest.param(lambda issuer: make_issuer().token(), "a JWT signed by another key", id="signature"),
        pytest.param(
            lambda issuer: jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": 2**31}, None, "none"),
            "an unsigned JWT (alg none)",
            id="alg none",
        ),
    ],
)
async def test_a_bad_token_is_refused_before_any_code_runs(
    issuer: Issuer, jwks_file: str, token: Any, why: str
) -> None:
    """Each bad credential gets `401` on the wire and an error in the official client; no handler ran."""
    shop = make_shop()
    settings = ServeSettings(
        api_keys=keys(alice=ALICE_KEY), jwt=JwtIssuer(jwks=jwks_file, issuer=ISSUER, audience=AUDIENCE)
    )
    bearer = token(issuer)
    async with shop.code_mode() as cm, served(cm, settings) as url:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                url, json=INITIALIZE, headers=MCP_HEADERS | {"authorization": f"Bearer {bearer}"}
            )
        with pytest.raises(ExceptionGroup) as refused:
            await call(url, bearer)
    assert response.status_code == 401, why
    assert refused.group_contains(MCPError)
    assert sum(shop.made.values()) == 0


async def test_a_valid_api_key_and_a_valid_jwt_run_code_as_their_callers(issuer: Issuer) -> None:
    """A configured key and a JWT checked against a JWKS served over HTTP both run code; hooks see who called."""
    shop = make_shop()
    seen: list[tuple[str, str | None, Any]] = []

    def who(call: CallInfo) -> None:
        assert call.caller is not None
        seen.append((call.caller.subject, call.caller.issuer, call.caller.claims.get("team")))

    with jwks_server(issuer.jwks) as jwks_url:
        settings = ServeSettings(
            api_keys=keys(alice=ALICE_KEY), jwt=JwtIssuer(jwks=jwks_url, issuer=ISSUER, audience=AUDIENCE)
        )
        async with (
            shop.code_mode(policy=Policy(before=[who], secret=SECRET)) as cm,
            served(cm, settings) as url,
        ):
            by_key = await call(url, ALICE_KEY)
            by_jwt = await call(url, issuer.token(team="ops"))
    assert [by_key.is_error, by_jwt.is_error] == [False, False]
    assert seen == [("alice", None, None), ("user-42", ISSUER, "ops")]
    assert shop.made["get_order"] == 2


async def test_a_rotated_key_is_fetched_and_made_up_key_ids_do_not_refetch_the_jwks(issuer: Issuer) -> None:
    """A token of a key the issuer added since is accepted (one refetch); unknown key ids then fetch nothing."""
    published: dict[str, Any] = {"keys": list(issuer.jwks["keys"])}
    rotated, stranger = make_issuer("k2"), make_issuer("k3")
    fetches: list[str] = []
    statuses = []
    with jwks_server(published, fetches) as jwks_url:
        settings = ServeSettings(jwt=JwtIssuer(jwks=jwks_url, issuer=ISSUER, audience=AUDIENCE))
        async with make_shop().code_mode() as cm, served(cm, settings) as url, httpx2.AsyncClient() as http:
            for token in (issuer.token(), rotated.token(), stranger.token(), stranger.token()):
                headers = MCP_HEADERS | {"authorization": f"Bearer {token}"}
                statuses.append((await http.post(url, json=INITIALIZE, headers=headers)).status_code)
                if len(statuses) == 1:  # the issuer rotates after the server fetched its keys
                    published["keys"].extend(rotated.jwks["keys"])
    assert statuses == [200, 200, 401, 401]
    assert len(fetches) == 2  # the first token's, and the rotated key's


async def test_protected_resource_metadata_names_the_resource_and_the_issuer(jwks_file: str) -> None:
    """RFC 9728 metadata: the resource URL always; the JWT issuer as its authorization server when there is one."""
    jwt_settings = ServeSettings(jwt=JwtIssuer(jwks=jwks_file, issuer=ISSUER, audience=AUDIENCE), resource_url=AUDIENCE)
    async with make_shop().code_mode() as cm:
        documents = []
        for settings in (ServeSettings(api_keys=keys(alice=ALICE_KEY), resource_url=AUDIENCE), jwt_settings):
            async with served(cm, settings) as url, httpx2.AsyncClient() as http:
                base = url.removesuffix("/mcp")
                documents.append((await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json())
    assert documents[0] == {"resource": AUDIENCE, "bearer_methods_supported": ["header"], "resource_name": "codemode"}
    assert documents[1]["resource"] == AUDIENCE
    assert documents[1]["authorization_servers"] == [ISSUER]


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])  # the app's checks for that address
@pytest.mark.parametrize(
    ("header", "value", "status"),
    [
        pytest.param("origin", "http://evil.example", 403, id="hostile Origin"),
        pytest.param("host", "evil.example", 421, id="rebound Host"),
    ],
)
async def test_a_hostile_origin_or_host_is_refused_on_every_address(
    host: str, header: str, value: str, status: int
) -> None:
    """With a valid key, a request from a foreign page (Origin) or a rebound name (Host) is refused; nothing ran."""
    shop = make_shop()
    settings = ServeSettings(api_keys=keys(alice=ALICE_KEY))
    async with shop.code_mode() as cm, served(cm, settings, host=host) as url, httpx2.AsyncClient() as http:
        bearer = MCP_HEADERS | {"authorization": f"Bearer {ALICE_KEY}"}
        refused = await http.post(url, json=INITIALIZE, headers=bearer | {header: value})
        allowed = await http.post(url, json=INITIALIZE, headers=bearer)
    assert (refused.status_code, allowed.status_code) == (status, 200)
    assert sum(shop.made.values()) == 0


async def test_an_unauthenticated_server_on_0_0_0_0_still_checks_the_origin() -> None:
    """The issue's case: built for 0.0.0.0 without credentials (allowed explicitly), a foreign Origin gets `403`.

    It listens on loopback only: a server without credentials is not opened to the network, even in a test.
    """
    shop = make_shop()
    host = "0.0.0.0"  # the wildcard address, where the SDK alone checks nothing
    async with (
        shop.code_mode() as cm,
        served(cm, ServeSettings(), bind="127.0.0.1", host=host, allow_unauthenticated=True) as url,
        httpx2.AsyncClient() as http,
    ):
        refused = await http.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"origin": "http://evil.example"})
    assert refused.status_code == 403
    assert sum(shop.made.values()) == 0


async def test_an_allowed_origin_and_host_are_accepted() -> None:
    """Names the operator allows pass the checks."""
    settings = ServeSettings(
        api_keys=keys(alice=ALICE_KEY),
        allowed_hosts=("mcp.example.test",),
        allowed_origins=("https://app.example.test",),
    )
    headers = MCP_HEADERS | {
        "authorization": f"Bearer {ALICE_KEY}",
        "origin": "https://app.example.test",
        "host": "mcp.example.test",
    }
    host = "0.0.0.0"  # the app's checks for the wildcard address; it listens on loopback
    async with make_shop().code_mode() as cm, served(cm, settings, host=host) as url, httpx2.AsyncClient() as http:
        response = await http.post(url, json=INITIALIZE, headers=headers)
    assert response.status_code == 200


async def test_another_caller_cannot_use_a_callers_session() -> None:
    """Bob's request with the `Mcp-Session-Id` Alice's key opened is answered `404`, as if there were no session."""
    shop = make_shop()
    settings = ServeSettings(api_keys=keys(alice=ALICE_KEY, bob=BOB_KEY))
    arguments = {"name": "code", "arguments": {"code": BALANCE}}
    tool_call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": arguments}
    async with shop.code_mode() as cm, served(cm, settings) as url, httpx2.AsyncClient() as http:
        opened = await http.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"authorization": f"Bearer {ALICE_KEY}"})
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        by_bob = await http.post(
            url, json=tool_call, headers=MCP_HEADERS | session | {"authorization": f"Bearer {BOB_KEY}"}
        )
    assert (opened.status_code, by_bob.status_code) == (200, 404)
    assert sum(shop.made.values()) == 0


def test_a_non_loopback_address_without_authentication_is_refused_unless_allowed_explicitly() -> None:
    """`http_app` raises for 0.0.0.0 without a credential; `allow_unauthenticated=True` builds it."""
    cm = make_shop().code_mode()
    with pytest.raises(ConfigError):
        http_app(cm, host="0.0.0.0")
    assert http_app(cm, host="0.0.0.0", allow_unauthenticated=True) is not None
    assert http_app(cm, host="127.0.0.1") is not None


def test_the_serve_command_refuses_0_0_0_0_without_authentication(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`codemode serve --transport http --host 0.0.0.0` exits with 2 and says how to authenticate."""
    config = python_config(tmp_path)
    code = cli(["serve", "--config", str(config), "--transport", "http", "--host", "0.0.0.0", "--isolation", "inline"])
    assert code == 2
    assert "--allow-unauthenticated" in capsys.readouterr().err


@pytest.mark.slow
async def test_the_serve_command_takes_api_keys_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real command with `CODEMODE_API_KEYS`: no token is refused, the key runs code."""
    monkeypatch.setenv("CODEMODE_API_KEYS", f"alice:{ALICE_KEY}")
    async with serve_http(python_config(tmp_path)) as url:
        with pytest.raises(ExceptionGroup):
            await call(url, None, 'return await tools.get_weather(city="Oslo")')
        result = await call(url, ALICE_KEY, 'return await tools.get_weather(city="Oslo")')
    assert not result.is_error


async def test_a_paused_run_cannot_be_approved_or_resumed_by_another_caller(tmp_path: Path) -> None:
    """Bob sends Alice's paused state with an approval: refused, the refund not made; Alice's own approval makes it.

    Stateless, so the signed record in `_meta` is all the server has; the run log records who ran and who decided.
    """
    shop = make_shop()
    log = tmp_path / "runs.jsonl"
    settings = ServeSettings(api_keys=keys(alice=ALICE_KEY, bob=BOB_KEY))
    async with shop.code_mode(log=log) as cm, served(cm, settings, stateless=True) as url:
        paused = await call(url, ALICE_KEY, REFUND_CODE)
        state = paused.meta["codemode/state"]
        approval = {"id": DiscoveryState.from_json(state).approval_id, "approved": True}
        meta = {"codemode/state": state, "codemode/approval": approval}
        by_bob = await call(url, BOB_KEY, REFUND_CODE, meta)
        made_after_bob = shop.made["refund"]
        by_alice = await call(url, ALICE_KEY, REFUND_CODE, meta)
    assert paused.is_error
    assert by_bob.is_error
    assert "started by another caller" in by_bob.content[0].text
    assert made_after_bob == 0
    assert not by_alice.is_error
    assert by_alice.content[0].text == REFUNDED
    assert shop.made["refund"] == 1
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line.get("caller", {}).get("subject") for line in lines] == ["alice", "alice"]
    assert lines[-1]["decision"] == {"approved": True, "reason": None, "decided_by": "alice"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_hook_denies_one_caller_and_lets_another_through(mode: str) -> None:
    """On either protocol, a `before` hook that reads `CallInfo.caller` refuses Bob's call and lets Alice's through."""
    shop = make_shop()

    def alice_only(call: CallInfo) -> Deny | None:
        return None if call.caller is not None and call.caller.subject == "alice" else Deny("only alice")

    settings = ServeSettings(api_keys=keys(alice=ALICE_KEY, bob=BOB_KEY))
    async with (
        shop.code_mode(policy=Policy(before=[alice_only], secret=SECRET)) as cm,
        served(cm, settings) as url,
    ):
        by_alice = await call(url, ALICE_KEY, mode=mode)
        by_bob = await call(url, BOB_KEY, mode=mode)
    assert not by_alice.is_error
    assert by_bob.is_error
    assert "only alice" in by_bob.content[0].text
    assert shop.made["get_order"] == 1


async def test_a_caller_over_its_runs_per_minute_is_refused_and_others_are_not() -> None:
    """With one run a minute, Alice's second call is an error result that says when to retry; Bob still runs."""
    shop = make_shop()
    settings = ServeSettings(api_keys=keys(alice=ALICE_KEY, bob=BOB_KEY), max_runs_per_minute=1)
    async with shop.code_mode() as cm, served(cm, settings) as url:
        first, second, by_bob = [await call(url, key) for key in (ALICE_KEY, ALICE_KEY, BOB_KEY)]
    assert [first.is_error, second.is_error, by_bob.is_error] == [False, True, False]
    assert "runs in the last minute" in second.content[0].text
    assert shop.made["get_order"] == 2


async def test_a_caller_over_its_runs_in_flight_is_refused_until_one_ends() -> None:
    """With one run at once, Alice's second call while her first waits is refused; after it ends she runs again."""
    shop = make_shop()
    started, release = anyio.Event(), anyio.Event()

    async def hold(call: CallInfo) -> None:
        if call.arguments.get("order_id") == "SLOW":
            started.set()
            await release.wait()

    settings = ServeSettings(api_keys=keys(alice=ALICE_KEY), max_runs_in_flight=1)
    results: list[Any] = []
    done = anyio.Event()
    async with (
        shop.code_mode(policy=Policy(before=[hold], secret=SECRET)) as cm,
        served(cm, settings) as url,
        anyio.create_task_group() as group,
    ):

        async def slow() -> None:
            results.append(await call(url, ALICE_KEY, 'return await tools.get_order(order_id="SLOW")'))
            done.set()

        group.start_soon(slow)
        with anyio.fail_after(10):
            await started.wait()
        refused = await call(url, ALICE_KEY)
        release.set()
        with anyio.fail_after(10):
            await done.wait()
        again = await call(url, ALICE_KEY)
    assert refused.is_error
    assert "already has 1 run going" in refused.content[0].text
    assert [results[0].is_error, again.is_error] == [False, False]


def test_the_serve_table_keeps_api_keys_only_as_digests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`[serve]` reads keys from `${VAR}` or as `sha256:<hex>` and keeps only the digests; the JWT table is typed."""
    monkeypatch.setenv("CI_BOT_KEY", ALICE_KEY)
    digest = hashlib.sha256(BOB_KEY.encode()).hexdigest()
    path = tmp_path / "codemode.toml"
    path.write_text(
        f'[serve]\napi_keys = {{ ci-bot = "${{CI_BOT_KEY}}", bob = "sha256:{digest}" }}\n'
        f'jwt = {{ jwks = "jwks.json", issuer = "{ISSUER}", audience = "{AUDIENCE}" }}\n'
        'allowed_hosts = ["mcp.example.test"]\nmax_runs_per_minute = 30\n',
        encoding="utf-8",
    )
    serve = load_config(path).serve
    assert serve is not None
    assert serve.api_keys == (
        ApiKey(name="ci-bot", digest=hashlib.sha256(ALICE_KEY.encode()).digest()),
        ApiKey(name="bob", digest=bytes.fromhex(digest)),
    )
    assert serve.jwt == JwtIssuer(jwks="jwks.json", issuer=ISSUER, audience=AUDIENCE)
    assert (serve.allowed_hosts, serve.max_runs_per_minute) == (("mcp.example.test",), 30)
    assert ALICE_KEY not in repr(serve)


@pytest.mark.parametrize(
    "table",
    [
        pytest.param('api_keys = { short = "abc" }', id="a short key"),
        pytest.param('api_keys = { "two words" = "0123456789abcdef0" }', id="a name with a space"),
        pytest.param('api_keys = { bad = "sha256:xyz" }', id="a malformed digest"),
        pytest.param('jwt = { jwks = "k.json" }', id="a JWT table without issuer and audience"),
        pytest.param(
            f'jwt = {{ jwks = "http://auth.example.test/jwks.json", issuer = "{ISSUER}", audience = "{AUDIENCE}" }}',
            id="a JWKS URL over plain http",
        ),
        pytest.param("max_runs_in_flight = 0", id="a limit of zero"),
        pytest.param("port = 1", id="an unknown key"),
    ],
)
def test_a_bad_serve_table_is_a_config_error(tmp_path: Path, table: str) -> None:
    """Each mistake in `[serve]` is refused when the config is read."""
    path = tmp_path / "codemode.toml"
    path.write_text(f"[serve]\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(path)


def test_a_malformed_api_keys_table_is_refused_without_showing_the_keys(tmp_path: Path) -> None:
    """`api_keys` written as an array of keys is an error that does not repeat them."""
    path = tmp_path / "codemode.toml"
    path.write_text(f'[serve]\napi_keys = ["{ALICE_KEY}"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert ALICE_KEY[:8] not in str(raised.value)


@pytest.mark.parametrize(
    ("jwks", "accepted"),
    [
        ("https://auth.example.test/jwks.json", True),
        ("jwks.json", True),
        ("http://127.0.0.1:8080/jwks.json", True),
        ("http://[::1]:8080/jwks.json", True),
        ("http://localhost/jwks.json", True),
        ("http://auth.example.test/jwks.json", False),
        ("HTTP://Auth.Example.Test/jwks.json", False),
        ("http://10.0.0.7/jwks.json", False),
        ("http://127.0.0.1.example.test/jwks.json", False),
    ],
)
def test_a_jwks_url_over_plain_http_is_refused_unless_it_is_on_this_machine(jwks: str, accepted: bool) -> None:
    """`https://` URLs and files are accepted; `http://` only on a loopback host, where no network is crossed."""
    if accepted:
        assert JwtIssuer(jwks=jwks, issuer=ISSUER, audience=AUDIENCE).jwks == jwks
    else:
        with pytest.raises(ConfigError):
            JwtIssuer(jwks=jwks, issuer=ISSUER, audience=AUDIENCE)


def test_the_serve_command_refuses_a_jwks_url_over_plain_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`codemode serve --jwks http://...` exits with 2 before serving and points at the `https://` URL."""
    jwt_options = ["--jwks", "http://auth.example.test/jwks.json", "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE]
    code = cli(["serve", "--config", str(python_config(tmp_path)), "--transport", "http", *jwt_options])
    assert code == 2
    assert "`https://`" in capsys.readouterr().err


def test_api_keys_from_the_environment_are_name_key_pairs() -> None:
    """`CODEMODE_API_KEYS` holds `name:key` pairs separated by commas or spaces; an entry without a name is refused."""
    assert [key.name for key in keys_from_env(f"alice:{ALICE_KEY}, bob:{BOB_KEY}")] == ["alice", "bob"]
    with pytest.raises(ConfigError):
        keys_from_env(ALICE_KEY)


def test_the_start_up_lines_say_what_serving_without_authentication_means() -> None:
    """What `codemode serve` prints: a loud warning without credentials off loopback, the key names with them."""
    wildcard = "0.0.0.0"  # the address the warning is about
    open_lines = describe_access(wildcard, 8000, "/mcp", ServeSettings())
    keyed_lines = describe_access(wildcard, 8000, "/mcp", ServeSettings(api_keys=keys(alice=ALICE_KEY)))
    assert open_lines[0].startswith("authentication: NONE (--allow-unauthenticated): anyone who reaches")
    assert keyed_lines[0] == "authentication: bearer tokens: API keys ['alice']"
    assert ALICE_KEY not in "\n".join(keyed_lines)
