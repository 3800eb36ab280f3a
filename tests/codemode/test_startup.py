"""Start-up at scale: what a start loads and builds, and that doing less of it changes no answer."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import TYPE_CHECKING

from codemode import Catalog, CodeMode
from codemode.search import CatalogSearch, SearchIndex

if TYPE_CHECKING:
    from pathlib import Path

EMPTY = {"type": "object", "properties": {}}
HEAVY = ("sandbox", "pydantic", "jsonschema", "mcp", "httpx2", "anthropic", "openai")
LIGHT = ("sandbox", "sandbox.limits")
"""The sandbox's package and its limits module (text cuts and limit wording) load without the rest of it."""


def loaded_after(code: str) -> list[str]:
    """The heavy top-level packages a fresh interpreter has imported after running `code`."""
    loaded = f"sorted({{m.split('.')[0] for m in set(sys.modules) - {set(LIGHT)!r}}} & {set(HEAVY)!r})"
    probe = f"{code}\nimport sys, json\nprint(json.dumps({loaded}))"
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return list(json.loads(output.splitlines()[-1]))


def make_catalog(*names: str) -> Catalog:
    catalog = Catalog()
    for name in names:
        catalog.add(name=name, description=f"{name.replace('_', ' ')}.", parameters=EMPTY)
    return catalog


def test_importing_codemode_loads_no_heavy_dependency_until_a_name_is_used() -> None:
    """`import codemode` loads neither the sandbox nor pydantic nor jsonschema; using `codemode.CodeMode` does."""
    assert loaded_after("import codemode") == []
    assert "sandbox" in loaded_after("import codemode\ncodemode.CodeMode")


def test_the_search_command_loads_neither_the_sandbox_nor_pydantic_nor_jsonschema(tmp_path: Path) -> None:
    """`codemode search` on a JSONL catalog reads, ranks and prints without the modules only runs and checks need."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps({"name": "send_email", "description": "Send an email.", "parameters": EMPTY}) + "\n")
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\njsonl = "tools.jsonl"\n', encoding="utf-8")
    run = f"from codemode.cli import main\nassert main(['search', 'email', '--config', {str(config)!r}]) == 0"
    assert loaded_after(run) == []


async def test_a_run_that_never_searches_builds_no_index() -> None:
    """The default index is built at the first search: before it nothing follows the catalog, after it one does."""
    catalog = make_catalog("send_email", "delete_file")
    async with CodeMode(catalog, isolation="inline") as cm:
        plain = await cm.execute("return 1 + 1", cm.new_state())
        unfollowed = list(catalog._subscribers)  # the catalog's only record of who follows it
        found = await cm.execute('return [t["name"] for t in await tools.search("email")]', cm.new_state())
        followed = len(catalog._subscribers)

    assert plain.run.value == 2
    assert unfollowed == []
    assert found.run.value == ["send_email"]
    assert followed == 1
    assert catalog._subscribers == []


async def test_a_lazy_index_sees_every_change_made_before_its_first_search() -> None:
    """Tools added, removed and replaced before the first search rank exactly as in an index built afresh."""
    catalog = make_catalog("send_email", "delete_file", "send_fax")
    search = CatalogSearch(catalog)
    catalog.remove("delete_file")
    catalog.add(name="send_sms", description="Send a text message.", parameters=EMPTY)
    fax = catalog.get("send_fax")
    assert fax is not None
    catalog.replace(dataclasses.replace(fax, description="Send a fax: a page over the phone line."))

    lazy = [tool.name for tool in await search("send a message", 5)]
    fresh = [tool.name for tool, _ in SearchIndex(catalog).search("send a message", 5)]
    assert lazy == fresh == ["send_sms", "send_email", "send_fax"]


async def test_a_search_closed_before_its_first_query_ranks_the_tools_it_had_at_close() -> None:
    """After `close`, a first search builds the index of the catalog as it was at `close`, not of later changes."""
    catalog = make_catalog("send_email")
    search = CatalogSearch(catalog)
    search.close()
    catalog.add(name="send_sms", description="Send a text message.", parameters=EMPTY)

    assert [tool.name for tool in await search("send", 5)] == ["send_email"]
    search.follow()
    assert [tool.name for tool in await search("send", 5)] == ["send_email", "send_sms"]


def test_the_program_runs_search_and_check_without_the_cyclic_collector_and_every_other_command_with_it(
    tmp_path: Path,
) -> None:
    """The one-shot commands run no model code, so the `codemode` program turns the collector off for them only."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps({"name": "send_email", "description": "Send an email.", "parameters": EMPTY}) + "\n")
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\njsonl = "tools.jsonl"\n', encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text("return 1\n", encoding="utf-8")
    commands = {
        "search": ["search", "email", "--config", str(config)],
        "check": ["check", "--tools", str(tools)],
        "exec": ["exec", str(script), "--config", str(config), "--isolation", "inline"],
    }
    collector = {}
    for name, argv in commands.items():
        probe = (
            f"import gc, sys\nsys.argv = ['codemode', *{argv!r}]\nfrom codemode.cli import console\n"
            "status = console()\nprint('collector', status, gc.isenabled())"
        )
        output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
        collector[name] = output.splitlines()[-1]
    assert collector == {"search": "collector 0 False", "check": "collector 0 False", "exec": "collector 0 True"}
