"""`[[tools]] openapi = ...` in a config: read into a source, `${VAR}` from the environment, then loaded and called."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

# The loopback server; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import BEARER, PETSTORE_FILE, Petstore, petstore_spec

from codemode import CodeMode, ConfigError, build_catalog, load_config
from codemode.config import OpenApiSource
from codemode.openapi import OpenApi, OpenApiSources, openapi_apis

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = """
[[tools]]
openapi = "petstore.json"
base_url = "${PETSTORE_URL:-http://127.0.0.1:9}/v1"
name = "pets"
headers = { "X-Client" = "codemode-tests" }
credentials = { api_key = "${PETSTORE_KEY}" }
include = ["findPets", "addPet"]
exclude = ["deletePet"]
prefix = "pets."
approval = ["deletePet"]
"""


def test_an_openapi_table_is_read_with_its_variables_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`${VAR}` is read from the environment, `${VAR:-default}` falls back, and the spec path is made absolute."""
    (tmp_path / "codemode.toml").write_text(CONFIG)
    monkeypatch.setenv("PETSTORE_KEY", "k-123456")
    monkeypatch.delenv("PETSTORE_URL", raising=False)
    config = load_config(tmp_path / "codemode.toml")
    assert config.sources == (
        OpenApiSource(
            table="tools[0]",
            spec=str(tmp_path / "petstore.json"),
            base_url="http://127.0.0.1:9/v1",
            name="pets",
            headers={"X-Client": "codemode-tests"},
            credentials={"api_key": "k-123456"},
            include=("findPets", "addPet"),
            exclude=("deletePet",),
            prefix="pets.",
            approval=("deletePet",),
        ),
    )
    assert "k-123456" not in repr(config)


def test_a_variable_that_is_not_set_is_a_config_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing variable without a default stops the config with the variable's name and what to do."""
    (tmp_path / "codemode.toml").write_text(CONFIG)
    monkeypatch.delenv("PETSTORE_KEY", raising=False)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "codemode.toml")
    assert str(caught.value).replace(str(tmp_path), "<tmp>") == snapshot(
        "<tmp>/codemode.toml: tools[0]: `${PETSTORE_KEY}` is not set; set PETSTORE_KEY in the environment."
    )


def test_build_catalog_refuses_openapi_sources_unless_told_to_skip_them(tmp_path: Path) -> None:
    """OpenAPI tools need clients someone owns: `build_catalog` says how, and `skip_openapi=True` leaves them."""
    (tmp_path / "codemode.toml").write_text('[[tools]]\nopenapi = "petstore.json"\n')
    config = load_config(tmp_path / "codemode.toml")
    with pytest.raises(ConfigError) as caught:
        build_catalog(config)
    assert str(caught.value).replace(str(tmp_path), "<tmp>") == snapshot(
        "<tmp>/codemode.toml: tools[0]: OpenAPI sources need HTTP clients: add them with `async with "
        "codemode.openapi.OpenApiSources(catalog, openapi_apis(config))`."
    )
    assert len(build_catalog(config, skip_openapi=True)) == 0


@pytest.mark.skipif(not PETSTORE_FILE.is_file(), reason="../shared/data/openapi is absent")
async def test_a_configured_api_loads_only_the_included_operations_under_its_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`include`, `exclude` and `prefix` decide which operations become tools, and their names."""
    (tmp_path / "petstore.json").write_text(PETSTORE_FILE.read_text())
    (tmp_path / "codemode.toml").write_text(CONFIG)
    monkeypatch.setenv("PETSTORE_KEY", "k-123456")
    config = load_config(tmp_path / "codemode.toml")
    catalog = build_catalog(config, skip_openapi=True)
    async with OpenApiSources(catalog, openapi_apis(config)) as sources:
        assert list(sources.failures) == ["pets/credentials"]  # petstore-expanded declares no `api_key` scheme
        assert [(tool.name, tool.alias) for tool in catalog] == [
            ("pets.findPets", "pets_findPets"),
            ("pets.addPet", "pets_addPet"),
        ]


def test_an_api_hides_its_secrets_from_repr() -> None:
    """Headers and credentials never show in the description's repr (logs, tracebacks)."""
    api = OpenApi(spec="x.json", headers={"Authorization": "Bearer s3cret-token"}, credentials={"k": "s3cret-key"})
    assert "s3cret" not in repr(api)


@pytest.mark.skipif(not PETSTORE_FILE.is_file(), reason="../shared/data/openapi is absent")
async def test_an_approval_key_on_an_openapi_table_holds_its_matching_calls_until_a_person_approves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`approval` patterns match operation names before the prefix; a held DELETE reaches the API once approved."""
    monkeypatch.setenv("PETSTORE_TOKEN", "tok-approval-42")
    (tmp_path / "petstore.json").write_text(json.dumps(petstore_spec(BEARER)))
    with Petstore("tok-approval-42") as store:
        (tmp_path / "codemode.toml").write_text(
            f'[[tools]]\nopenapi = "petstore.json"\nbase_url = "{store.url}"\nprefix = "pets."\n'
            'credentials = { petstore_auth = "${PETSTORE_TOKEN}" }\napproval = ["delete*"]\n'
        )
        config = load_config(tmp_path / "codemode.toml")
        catalog = build_catalog(config, skip_openapi=True)
        async with OpenApiSources(catalog, openapi_apis(config)), CodeMode(catalog, isolation="inline") as cm:
            assert [(tool.name, tool.approval) for tool in catalog] == [
                ("pets.findPets", False),
                ("pets.addPet", False),
                ("pets.find pet by id", False),
                ("pets.deletePet", True),
            ]
            state = cm.new_state()
            code = "await tools.pets_deletePet(id=1)\nreturn [pet['name'] for pet in await tools.pets_findPets()]"
            paused = await cm.execute(code, state)
            assert paused.pending is not None
            assert (paused.pending.tool, paused.pending.arguments) == ("pets.deletePet", {"id": 1})
            assert [(method, path) for method, path, _ in store.requests] == []
            done = await cm.resume(state, approved=True)
    assert done.run.value == ["Tom", "Fido"]
    assert [(method, path) for method, path, _ in store.requests] == [("DELETE", "/pets/1"), ("GET", "/pets")]
