from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

from codemode.catalog import Catalog, CatalogChange
from codemode.errors import CatalogError
from codemode.tools import Tool

if TYPE_CHECKING:
    from sandbox import JsonObject

EMPTY: JsonObject = {"type": "object", "properties": {}}
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def names(catalog: Catalog) -> list[str]:
    return [tool.name for tool in catalog]


def catalog_error(catalog: Catalog, **definition: object) -> str:
    """The message of the `CatalogError` that `catalog.add(**definition)` raises."""
    with pytest.raises(CatalogError) as error:
        catalog.add(**{"description": "", "parameters": EMPTY, **definition})  # type: ignore[arg-type]
    return str(error.value)


def test_the_decorator_registers_sync_and_async_functions_and_returns_them_unchanged() -> None:
    """`@catalog.tool` bare or with options leaves the function as it was and registers a tool for it."""
    catalog = Catalog()

    @catalog.tool
    async def get_weather(city: str) -> str:
        """Get the weather."""
        return city

    @catalog.tool(name="math.factorial", deferred=False)
    def factorial(n: int) -> int:
        """Compute n!."""
        return n

    assert factorial(3) == 3
    assert get_weather.__name__ == "get_weather"
    assert [(tool.name, tool.alias, tool.deferred) for tool in catalog] == [
        ("get_weather", "get_weather", True),
        ("math.factorial", "math_factorial", False),
    ]
    tool = catalog.get("math.factorial")
    assert tool is not None
    assert tool.handler is factorial


def test_tools_are_found_by_original_name_and_by_alias() -> None:
    """`get`, `in` and `remove` accept either spelling; iteration keeps registration order."""
    catalog = Catalog()
    catalog.add(name="github.create_issue", description="Open an issue.", parameters=EMPTY)
    catalog.add(name="class", description="A keyword.", parameters=EMPTY)
    assert catalog.get("github.create_issue") is catalog.get("github_create_issue") is not None
    assert "class_" in catalog
    assert "class" in catalog
    assert "nope" not in catalog
    assert catalog.get("nope") is None
    assert len(catalog) == 2
    assert catalog.remove("class_").name == "class"
    assert names(catalog) == ["github.create_issue"]


def test_a_duplicate_name_is_refused_with_what_to_do() -> None:
    """Registering a name twice raises instead of silently replacing the first definition."""
    catalog = Catalog()
    catalog.add(name="get_weather", description="", parameters=EMPTY)
    assert catalog_error(catalog, name="get_weather") == snapshot(
        "Tool 'get_weather' is already in the catalog. Give the new tool another name, use "
        "`catalog.replace(tool)` to change its definition, or load each source with its own `prefix`."
    )


def test_two_names_with_one_alias_are_refused() -> None:
    """`my-tool` and `my_tool` would both be `tools.my_tool`, so the second one raises."""
    catalog = Catalog()
    catalog.add(name="my-tool", description="", parameters=EMPTY)
    assert catalog_error(catalog, name="my_tool") == snapshot(
        "Tool 'my_tool' and tool 'my-tool' would both be called `tools.my_tool`. Rename one of them, give "
        "one a hand-made alias (`aliases={...}` when loading, or `Tool(alias=...)`), or load each source "
        "with its own `prefix`."
    )
    assert names(catalog) == ["my-tool"]


def test_a_name_equal_to_another_tools_hand_made_alias_is_refused() -> None:
    """Names and aliases share one namespace, so `get` can never be ambiguous."""
    catalog = Catalog([Tool(name="weather.get", alias="forecast", description="", parameters=EMPTY)])
    clash = Tool(name="forecast", alias="fc", description="", parameters=EMPTY)
    with pytest.raises(CatalogError) as error:
        catalog.extend([clash])
    assert str(error.value) == snapshot(
        "Tool 'forecast' and tool 'weather.get' would both be found as 'forecast', the name of one being the "
        "alias of the other. Rename one of them, or give it another hand-made alias."
    )


def test_parameters_must_be_a_valid_object_schema() -> None:
    """A non-object schema and a schema the meta-schema rejects both raise, naming the tool."""
    catalog = Catalog()
    assert catalog_error(catalog, name="a", parameters={"type": "string"}) == snapshot(
        "Tool 'a': `parameters` must be a JSON Schema of type \"object\" (the keyword arguments), got {'type': "
        "'string'}."
    )
    bad_type = {"type": "object", "properties": {"x": {"type": "strng"}}}
    assert catalog_error(catalog, name="b", parameters=bad_type) == snapshot(
        "Tool 'b': `parameters` is not a valid JSON Schema: 'strng' is not valid under any of the given "
        "schemas (at `properties/x/type`)"
    )
    assert catalog_error(catalog, name="c", returns={"type": 5}) == snapshot(
        "Tool 'c': `returns` is not a valid JSON Schema: 5 is not valid under any of the given schemas (at `type`)"
    )
    assert catalog_error(catalog, name="d", parameters={"type": "object", "default": {1, 2}}) == snapshot(
        "Tool 'd': `parameters` is not a valid JSON Schema: it is not plain JSON (Object of type set is not "
        "JSON serializable)."
    )
    assert len(catalog) == 0


def test_schema_checks_can_be_turned_off_for_large_trusted_catalogs() -> None:
    """With `check_schemas=False` only the object-schema shape is checked."""
    catalog = Catalog(check_schemas=False)
    catalog.add(name="a", description="", parameters={"type": "object", "properties": {"x": {"type": "strng"}}})
    assert "a" in catalog


def test_a_tool_with_a_hand_made_alias_must_keep_it_portable() -> None:
    """An alias that the model could not write after `tools.` is refused."""
    tool = Tool(name="x.y", alias="_x", description="", parameters=EMPTY)
    with pytest.raises(CatalogError) as error:
        Catalog([tool])
    assert str(error.value) == snapshot(
        "Tool 'x.y' has the alias '_x', which the model cannot write after `tools.`; use "
        "`portable_alias('x.y')` ('x_y')."
    )


def test_every_change_bumps_the_version_and_notifies_subscribers_once() -> None:
    """Add, replace and remove each send one `CatalogChange`; a replacement is removed+added together."""
    catalog = Catalog()
    changes: list[CatalogChange] = []
    unsubscribe = catalog.subscribe(changes.append)
    first = catalog.add(name="a", description="v1", parameters=EMPTY)
    catalog.add(name="b", description="", parameters=EMPTY)
    second = Tool(name="a", alias="a", description="v2", parameters=EMPTY)
    assert catalog.replace(second) is first
    catalog.remove("b")
    unsubscribe()
    catalog.add(name="c", description="", parameters=EMPTY)
    assert catalog.version == 5
    assert [([t.description for t in c.added], [t.description for t in c.removed]) for c in changes] == [
        (["v1"], []),
        ([""], []),
        (["v2"], ["v1"]),
        ([], [""]),
    ]
    assert names(catalog) == ["a", "c"]


def test_a_replaced_tool_keeps_its_place_in_the_order() -> None:
    """Iteration order is registration order, and replacing a definition does not move it."""
    catalog = Catalog()
    for name in ("a", "b", "c"):
        catalog.add(name=name, description="", parameters=EMPTY)
    catalog.replace(Tool(name="a", alias="a", description="new", parameters=EMPTY))
    assert names(catalog) == ["a", "b", "c"]


def test_replacing_an_unknown_tool_raises() -> None:
    """`replace` is for definitions already in the catalog."""
    with pytest.raises(CatalogError) as error:
        Catalog().replace(Tool(name="a", alias="a", description="", parameters=EMPTY))
    assert str(error.value) == snapshot(
        "Cannot replace tool 'a': it is not in the catalog. Register it with `catalog.add` or `catalog.extend` first."
    )


def test_extend_adds_another_catalog_as_one_change_or_not_at_all() -> None:
    """Tools of another catalog are added together; if one clashes, none of them is added."""
    first, second = Catalog(), Catalog()
    first.add(name="a", description="", parameters=EMPTY)
    second.add(name="b", description="", parameters=EMPTY)
    second.add(name="a", description="", parameters=EMPTY)
    with pytest.raises(CatalogError):
        first.extend(second)
    assert (names(first), first.version) == (["a"], 1)
    first.extend(second, prefix="gh.")
    assert [tool.alias for tool in first] == ["a", "gh_b", "gh_a"]
    assert first.version == 2


def test_hand_made_aliases_resolve_a_clash_between_derived_aliases() -> None:
    """`aliases` gives one of two clashing names its own alias, so both can be loaded."""
    other = Catalog()
    other.add(name="car.rental", description="", parameters=EMPTY)
    catalog = Catalog()
    catalog.add(name="car_rental", description="", parameters=EMPTY)
    catalog.extend(other, aliases={"car.rental": "car_rental_dotted"})
    assert [(tool.name, tool.alias) for tool in catalog] == [
        ("car_rental", "car_rental"),
        ("car.rental", "car_rental_dotted"),
    ]


def test_one_sources_names_that_differ_only_in_punctuation_get_numbered_aliases(tmp_path: Path) -> None:
    """The name that is the alias keeps it, whatever the order; the others get `_2`, `_3` in order, past taken ones."""
    rows = ["car.rental", "list-files", "car_rental", "list.files", "list_files"]
    path = tmp_path / "tools.jsonl"
    path.write_text(
        "".join(json.dumps({"name": name, "description": "", "parameters": EMPTY}) + "\n" for name in rows),
        encoding="utf-8",
    )
    catalog = Catalog()
    catalog.add(name="list_files_2", description="", parameters=EMPTY)
    catalog.load_jsonl(path)
    other = Catalog()
    other.extend([Tool(name=name, description="", parameters=EMPTY) for name in ("a-b", "a_b", "c")])

    assert [(tool.name, tool.alias) for tool in catalog] == [
        ("list_files_2", "list_files_2"),
        ("car.rental", "car_rental_2"),
        ("list-files", "list_files_3"),
        ("car_rental", "car_rental"),
        ("list.files", "list_files_4"),
        ("list_files", "list_files"),
    ]
    assert catalog.get("car.rental") is catalog.get("car_rental_2")
    assert [tool.alias for tool in other] == ["a_b_2", "a_b", "c"]


def test_unknown_names_get_close_matches() -> None:
    """`similar` finds tools by name or alias, and a failed `remove` suggests them."""
    catalog = Catalog()
    for name in ("github.create_issue", "github.list_issues", "math.factorial"):
        catalog.add(name=name, description="", parameters=EMPTY)
    assert [tool.name for tool in catalog.similar("create_issue")] == snapshot(["github.create_issue"])
    with pytest.raises(CatalogError) as error:
        catalog.remove("github.create_issues")
    assert str(error.value) == snapshot(
        "Cannot remove tool 'github.create_issues': it is not in the catalog. Did you mean "
        "'github.create_issue', 'github.list_issues'?"
    )


def test_load_jsonl_registers_definitions_without_handlers(tmp_path: Path) -> None:
    """Each line is a definition; blank lines are skipped; `prefix` keeps sets apart."""
    path = tmp_path / "tools.jsonl"
    rows = [
        {"name": "math.factorial", "description": "n!", "parameters": {"type": "object", "properties": {}}},
        {"name": "ping", "description": "Ping.", "parameters": EMPTY, "returns": {"type": "string"}},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n", encoding="utf-8")
    catalog = Catalog()
    loaded = catalog.load_jsonl(path, prefix="bfcl.")
    assert [(tool.name, tool.alias, tool.handler, tool.returns) for tool in loaded] == [
        ("bfcl.math.factorial", "bfcl_math_factorial", None, None),
        ("bfcl.ping", "bfcl_ping", None, {"type": "string"}),
    ]
    assert catalog.version == 1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "{not json",
            snapshot(
                "<tmp>/tools.jsonl:2: not JSON: Expecting property name enclosed in double quotes: line 1 column 2 "
                "(char 1)"
            ),
        ),
        ('["a"]', snapshot('<tmp>/tools.jsonl:2: expected a JSON object, got ["a"]')),
        (
            '{"description": "x"}',
            snapshot('<tmp>/tools.jsonl:2: every definition needs a "name" (a non-empty string), got None.'),
        ),
        (
            '{"name": "b", "parameter": {}}',
            snapshot(
                "<tmp>/tools.jsonl:2: unknown keys ['parameter']; a definition has the keys ['approval', 'deferred', "
                "'description', 'name', 'parameters', 'returns']."
            ),
        ),
        (
            '{"name": "a"}',
            snapshot(
                "<tmp>/tools.jsonl:2: Tool 'a' is already in the catalog. Give the new tool another name, use "
                "`catalog.replace(tool)` to change its definition, or load each source with its own `prefix`."
            ),
        ),
        (
            '{"name": "b", "parameters": {"type": "array"}}',
            snapshot(
                "<tmp>/tools.jsonl:2: Tool 'b': `parameters` must be a JSON Schema of type \"object\" (the keyword "
                "arguments), got {'type': 'array'}."
            ),
        ),
    ],
)
def test_a_bad_jsonl_line_names_the_file_and_line_and_loads_nothing(tmp_path: Path, line: str, expected: str) -> None:
    """The whole file is refused, with a message that points at the line."""
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a", "description": "", "parameters": {"type": "object"}}\n' + line, encoding="utf-8")
    catalog = Catalog()
    with pytest.raises(CatalogError) as error:
        catalog.load_jsonl(path)
    assert str(error.value).replace(str(tmp_path), "<tmp>") == expected
    assert (len(catalog), catalog.version) == (0, 0)


def test_every_shared_data_set_loads_into_one_catalog_with_unique_identifier_aliases() -> None:
    """Thousands of real tool names, prefixed by set, all get distinct portable aliases (BFCL's `car.rental` too)."""
    files = sorted(DATA.glob("*/tools.jsonl"))
    if not files:
        pytest.skip(f"no data sets in {DATA}")
    catalog = Catalog(check_schemas=False)  # the meta-schema check costs ~1 ms a tool; this test is about names
    for path in files:
        prefix = f"{path.parent.name}."
        catalog.load_jsonl(path, prefix=prefix)
    aliases = [tool.alias for tool in catalog]
    assert all(alias.isidentifier() and not alias.startswith("_") for alias in aliases)
    assert len(set(aliases)) == len(aliases) == len(catalog) > 1000
