# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""Schemas as servers publish them: each read under its draft, OpenAPI `nullable` honoured, none ever lost."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode, Tool
from codemode.schema._jsonschema import accepts_null
from codemode.schema._validator import checked_schema
from codemode.schema.stubs import render_signature

if TYPE_CHECKING:
    from codemode import ExecuteResult
    from sandbox import JsonObject

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
WILD: dict[str, JsonObject] = json.loads(Path(__file__).with_name("wild_schemas.json").read_text())
"""Schemas as servers publish them, by tool name; the MCP test server (`mcp/wild_server.py`) serves the same."""

DRAFT4_BOOLEANS: JsonObject = WILD["old_page"]
DEFINITIONS: JsonObject = WILD["draw_point"]
NULLABLE: JsonObject = {
    "type": "object",
    "properties": {"note": {"type": "string", "nullable": True}, "tag": {"type": "string"}},
    "required": ["note"],
}
NO_DRAFT: JsonObject = WILD["loose_echo"]


def echo_catalog(**schemas: JsonObject) -> tuple[Catalog, list[object]]:
    """Tools whose handlers record their arguments, one per schema, registered as sources register them."""
    seen: list[object] = []
    tools = [
        Tool(
            name=name,
            alias=name,
            description=f"The {name} tool.",
            parameters=schema,
            handler=lambda **kw: seen.append(kw) or "ok",
        )
        for name, schema in schemas.items()
    ]
    return Catalog(tools), seen


async def execute(code: str, catalog: Catalog) -> ExecuteResult:
    async with CodeMode(catalog, isolation="inline") as cm:
        return await cm.execute(code, cm.new_state())


async def error_of(code: str, catalog: Catalog) -> str | None:
    result = await execute(code, catalog)
    return None if result.run.error is None else result.run.error.message


async def test_draft4_boolean_bounds_are_read_as_draft4() -> None:
    """`exclusiveMaximum: true` beside `maximum` (no `$schema`) registers, and 100 is refused while 99 passes."""
    catalog, seen = echo_catalog(page=DRAFT4_BOOLEANS)

    assert checked_schema(DRAFT4_BOOLEANS).draft == "draft-04"
    assert await error_of("await tools.page(limit=99)", catalog) is None
    assert await error_of("await tools.page(limit=100)", catalog) == snapshot(
        "ToolError: tools.page(): argument `limit`: 100 is greater than or equal to the maximum of 100 (given 100). Signature: page(*, limit: int) -> Any (line 1)"
    )
    assert seen == [{"limit": 99}]


async def test_draft4_boolean_bounds_are_exclusive_in_the_stub_as_in_the_check() -> None:
    """`minimum: 0, exclusiveMinimum: true` reads `> 0` in the stub, and the bound itself is refused, both ends."""
    schema: JsonObject = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True, "maximum": 10, "exclusiveMaximum": True},
            "m": {"type": "integer", "minimum": 0, "exclusiveMinimum": False, "maximum": 10},
        },
        "required": ["n"],
    }
    catalog, seen = echo_catalog(take=schema)

    stub = await execute('print(await tools.describe("take"))', catalog)
    assert stub.text == snapshot('''\
async def take(*, n: int, m: int | None = None) -> Any:
    """The take tool.

    Args:
        n: (> 0; < 10)
        m: (>= 0; <= 10)
    """
    ...''')
    assert await error_of("await tools.take(n=0)", catalog) == snapshot(
        "ToolError: tools.take(): argument `n`: 0 is less than or equal to the minimum of 0 (given 0). Signature: take(*, n: int, m: int | None = None) -> Any (line 1)"
    )
    assert await error_of("await tools.take(n=10)", catalog) == snapshot(
        "ToolError: tools.take(): argument `n`: 10 is greater than or equal to the maximum of 10 (given 10). Signature: take(*, n: int, m: int | None = None) -> Any (line 1)"
    )
    assert await error_of("await tools.take(n=1, m=0)", catalog) is None
    assert seen == [{"n": 1, "m": 0}]


async def test_definitions_refs_and_id_validate_nested_values() -> None:
    """`definitions` with `$ref: "#/definitions/Point"` and a draft-04 `id` check the nested object."""
    catalog, seen = echo_catalog(draw=DEFINITIONS)

    assert await error_of('await tools.draw(at={"x": 1, "y": 2})', catalog) is None
    assert await error_of('await tools.draw(at={"x": 1})', catalog) == snapshot(
        'ToolError: tools.draw(): argument `at`: missing key `y` (given {"x": 1}). Signature: draw(*, at: Point) -> Any (line 1)'
    )
    assert seen == [{"at": {"x": 1, "y": 2}}]


async def test_a_declared_draft_is_the_one_used() -> None:
    """A schema that declares draft-04 is read under draft-04 even where a newer draft would accept it."""
    declared = {"$schema": "http://json-schema.org/draft-04/schema#", **DRAFT4_BOOLEANS}
    modern = {"$schema": "https://json-schema.org/draft/2020-12/schema", **DRAFT4_BOOLEANS}

    assert checked_schema(declared).draft == "draft-04"
    assert checked_schema(modern).draft == "relaxed"
    assert checked_schema(modern).problem == snapshot(
        "True is not of type 'number' (at `properties/limit/exclusiveMaximum`)"
    )


async def test_openapi_nullable_is_honoured_by_the_stub_and_the_validator() -> None:
    """`nullable: true` renders `str | None`, and `None` reaches the handler, for a required and an optional use."""
    catalog, seen = echo_catalog(set_note=NULLABLE)
    tool = catalog.get("set_note")
    assert tool is not None

    assert render_signature(tool) == snapshot("set_note(*, note: str | None, tag: str | None = None) -> Any")
    assert await error_of("await tools.set_note(note=None)", catalog) is None
    assert await error_of("await tools.set_note(note=5)", catalog) == snapshot(
        "ToolError: tools.set_note(): argument `note`: 5 is not of type 'string', 'null' (given 5). Signature: set_note(*, note: str | None, tag: str | None = None) -> Any (line 1)"
    )
    assert seen == [{"note": None}]


async def test_an_enum_with_null_accepts_none_as_the_stub_says() -> None:
    """`{"enum": ["a", null]}` (required) renders `Literal["a"] | None`, and a call with `None` is passed, not "missing"."""
    schema: JsonObject = {"type": "object", "properties": {"choice": {"enum": ["a", None]}}, "required": ["choice"]}
    catalog, seen = echo_catalog(pick=schema)
    tool = catalog.get("pick")
    assert tool is not None

    assert render_signature(tool) == snapshot('pick(*, choice: Literal["a"] | None) -> Any')
    assert await error_of("await tools.pick(choice=None)", catalog) is None
    assert seen == [{"choice": None}]


async def test_a_schema_no_draft_accepts_keeps_its_tool_with_relaxed_checks(caplog: pytest.LogCaptureFixture) -> None:
    """The tool is searchable and callable; `required` and the readable properties are still checked; one warning."""
    catalog, seen = echo_catalog(broken_echo=NO_DRAFT)

    with caplog.at_level(logging.WARNING, logger="codemode"):
        async with CodeMode(catalog, isolation="inline") as cm:
            found = await cm.execute('return [t["name"] for t in await tools.search("broken echo")]', cm.new_state())
            first = await cm.execute('await tools.broken_echo(text="hi", mode="loud")', cm.new_state())
            second = await cm.execute('await tools.broken_echo(text="again")', cm.new_state())
            missing = await cm.execute('await tools.broken_echo(mode="x")', cm.new_state())
            wrong = await cm.execute("await tools.broken_echo(text=3)", cm.new_state())

    assert found.run.value == ["broken_echo"]
    assert first.ok, first.text
    assert second.ok, second.text
    assert seen == [{"text": "hi", "mode": "loud"}, {"text": "again"}]
    assert missing.run.error is not None
    assert "missing required argument `text`" in missing.run.error.message
    assert wrong.run.error is not None
    assert "3 is not of type 'string'" in wrong.run.error.message
    assert [record.getMessage() for record in caplog.records] == snapshot(
        [
            "tool 'broken_echo': its argument schema is valid under no JSON Schema draft ('strng' is not valid under any of the given schemas (at `properties/mode/type`)); its arguments are checked only where the schema can be read"
        ]
    )
    assert catalog.check() == snapshot(
        {"broken_echo": "`parameters`: 'strng' is not valid under any of the given schemas (at `properties/mode/type`)"}
    )


def test_a_jsonl_file_with_one_schema_no_draft_accepts_loads_every_line(tmp_path: Path) -> None:
    """One bad schema among good ones: every tool loads, and `check()` names the bad one."""
    lines = [
        {
            "name": "good",
            "description": "A good tool.",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
        {"name": "old", "description": "A draft-04 tool.", "parameters": DRAFT4_BOOLEANS},
        {"name": "bad", "description": "A bad tool.", "parameters": NO_DRAFT},
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    catalog = Catalog()

    loaded = catalog.load_jsonl(path)

    assert [tool.name for tool in loaded] == ["good", "old", "bad"]
    assert list(catalog.check()) == ["bad"]


def test_add_still_refuses_a_hand_written_schema_no_draft_accepts() -> None:
    """A definition the host writes with `add` is its own mistake: it raises at registration, draft-04 does not."""
    catalog = Catalog()
    catalog.add(name="old", description="", parameters=DRAFT4_BOOLEANS)

    with pytest.raises(Exception, match="strng"):
        catalog.add(name="bad", description="", parameters=NO_DRAFT)


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["github_mcp", "bfcl", "stabletoolbench", "metatool"])
def test_real_catalogs_stub_and_validator_agree_on_null(folder: str) -> None:
    """For every property of every real tool: the validator accepts `None` exactly when the stub says `| None` (or `Any`)."""
    path = DATA / folder / "tools.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    disagreements = []
    checked = 0
    for line in path.read_text(encoding="utf-8").splitlines()[:400]:  # a few seconds: each schema is meta-checked
        definition = json.loads(line)
        schema = definition.get("parameters") or {"type": "object"}
        validator = checked_schema(schema)
        assert validator.problem is None, (definition["name"], validator.problem)
        for name, sub in (schema.get("properties") or {}).items():
            errors = [e for e in validator.errors({name: None}) if list(e.absolute_path)[:1] == [name]]
            says_anything = isinstance(sub, dict) and bool(set(sub) - {"description", "title", "default", "examples"})
            if (accepts_null(sub, schema) or not says_anything) == bool(errors):
                disagreements.append((definition["name"], name))
            checked += 1
    assert disagreements == []
    assert checked > 0 or folder == "metatool"


SHAPES: JsonObject = {
    "type": "object",
    "required": ["shape"],
    "properties": {
        "shape": {
            "oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Rect"}],
            "discriminator": {"propertyName": "kind"},
        }
    },
    "$defs": {
        "Circle": {
            "type": "object",
            "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
            "required": ["kind", "r"],
        },
        "Rect": {
            "type": "object",
            "properties": {"kind": {"const": "rect"}, "w": {"type": "number"}, "h": {"type": "number"}},
            "required": ["kind", "w", "h"],
        },
    },
}
UNTAGGED: JsonObject = {
    "type": "object",
    "properties": {
        "target": {
            "anyOf": [
                {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
                {
                    "type": "object",
                    "properties": {"phone": {"type": "string"}, "ext": {"type": "integer"}},
                    "required": ["phone"],
                },
                {"type": "string"},
            ]
        }
    },
}


async def test_a_union_argument_error_names_the_variant_and_what_it_lacks() -> None:
    """A tagged `oneOf` names the tag's variant and the missing key, or the tags there are; untagged, the closest variant."""
    catalog, seen = echo_catalog(shape_area=SHAPES, notify=UNTAGGED)

    errors = [
        await error_of(code, catalog)
        for code in (
            'await tools.shape_area(shape={"kind": "rect", "w": 2})',
            'await tools.shape_area(shape={"kind": "square", "w": 2})',
            'await tools.shape_area(shape={"kind": "circle", "r": "big"})',
            'await tools.notify(target={"phone": "1", "ext": "x"})',
            "await tools.notify(target=[1])",
        )
    ]

    assert seen == []
    assert errors == snapshot(
        [
            'ToolError: tools.shape_area(): argument `shape`: missing key `h` (the variant for kind="rect") (given {"kind": "rect", "w": 2}). Signature: shape_area(*, shape: Circle | Rect) -> Any (line 1)',
            'ToolError: tools.shape_area(): argument `shape.kind`: must be one of "circle", "rect" (given "square"). Signature: shape_area(*, shape: Circle | Rect) -> Any (line 1)',
            "ToolError: tools.shape_area(): argument `shape.r`: 'big' is not of type 'number' (the variant for kind=\"circle\") (given \"big\"). Signature: shape_area(*, shape: Circle | Rect) -> Any (line 1)",
            "ToolError: tools.notify(): argument `target.ext`: 'x' is not of type 'integer' (the closest of its 3 variants) (given \"x\"). Signature: notify(*, target: NotifyTarget | NotifyTarget2 | str | None = None) -> Any (line 1)",
            "ToolError: tools.notify(): argument `target`: expected `dict | str` (given [1]). Signature: notify(*, target: NotifyTarget | NotifyTarget2 | str | None = None) -> Any (line 1)",
        ]
    )
