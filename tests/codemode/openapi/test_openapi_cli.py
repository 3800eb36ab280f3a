"""`codemode search`, `exec` and `serve` with an OpenAPI source in the config, against the loopback petstore."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("mcp.client")
pytest.importorskip("yaml")

from cli_kit import cli
from mcp import Client, StdioServerParameters

# The loopback server; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import BEARER, PETSTORE_FILE, Petstore, petstore_spec

if TYPE_CHECKING:
    from collections.abc import Iterator

TOKEN = "tok-cli-5b1e7d9a3c"

pytestmark = pytest.mark.skipif(not PETSTORE_FILE.is_file(), reason="../shared/data/openapi is absent")


@pytest.fixture
def store() -> Iterator[Petstore]:
    with Petstore(TOKEN) as server:
        yield server


def write_config(folder: Path, url: str) -> Path:
    """A config with the petstore description, its server and the token read from `PETSTORE_TOKEN`."""
    (folder / "petstore.json").write_text(json.dumps(petstore_spec(BEARER)))
    config = folder / "codemode.toml"
    credentials = 'credentials = { petstore_auth = "${PETSTORE_TOKEN}" }'
    config.write_text(f'[[tools]]\nopenapi = "petstore.json"\nbase_url = "{url}"\n{credentials}\n')
    return config


def test_search_ranks_the_operations_of_an_openapi_source(
    tmp_path: Path, store: Petstore, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`codemode search` shows the operation that creates a pet first, with its signature."""
    monkeypatch.setenv("PETSTORE_TOKEN", TOKEN)
    status = cli(["search", "create a new pet in the store", "--config", str(write_config(tmp_path, store.url))])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert out.splitlines()[0].startswith("1. addPet(*, name: str, tag: str | None = None) -> Pet    (score ")
    assert store.requests == []  # searching reads definitions only


def test_exec_calls_the_api_with_the_token_from_the_environment(
    tmp_path: Path, store: Petstore, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script run by `codemode exec` calls the API; the server gets the token, the output never shows it."""
    monkeypatch.setenv("PETSTORE_TOKEN", TOKEN)
    script = tmp_path / "script.py"
    script.write_text('pets = await tools.findPets(tags=["cat"])\nreturn [pet["name"] for pet in pets]\n')
    status = cli(["exec", str(script), "--config", str(write_config(tmp_path, store.url)), "--isolation", "inline"])
    out, err = capsys.readouterr()
    assert (status, out) == (0, 'Returned: [\n "Tom"\n]\n')
    assert err.startswith("<tools-discovered>\n")
    assert TOKEN not in out + err
    assert [(target, headers["authorization"]) for _, target, headers in store.requests] == [
        ("/pets?tags=cat", f"Bearer {TOKEN}")
    ]


@pytest.mark.slow
async def test_serve_answers_a_code_call_that_calls_the_api(tmp_path: Path, store: Petstore) -> None:
    """`codemode serve` over stdio: the MCP client's `code` call reaches the petstore through the OpenAPI source."""
    command = [sys.executable, "-m", "codemode", "serve", "--config", str(write_config(tmp_path, store.url))]
    env = {**os.environ, "PETSTORE_TOKEN": TOKEN}
    params = StdioServerParameters(command=command[0], args=[*command[1:], "--isolation", "inline"], env=env)
    async with Client(params) as client:
        result = await client.call_tool("code", {"code": 'return await tools.addPet(name="Kiwi")'})
    texts = [getattr(block, "text", "") for block in result.content]
    assert not result.is_error, texts
    assert texts[0] == 'Returned: {\n "id": 4,\n "name": "Kiwi"\n}'
    assert all(TOKEN not in text for text in texts)
    assert store.pets[4] == {"id": 4, "name": "Kiwi"}


@pytest.mark.slow
def test_the_offline_example_serves_its_petstore_and_never_shows_the_token() -> None:
    """`examples/openapi_petstore.py` runs offline: the calls succeed, the 404 is read, the token stays hidden."""
    example = Path(__file__).resolve().parents[3] / "examples" / "openapi_petstore.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert '"pet 42": "`GET /pets/{id}` failed with HTTP 404 Not Found: no pet with id 42"' in done.stdout
    assert done.stdout.endswith("[answer; the token was never shown to the model]\n")
