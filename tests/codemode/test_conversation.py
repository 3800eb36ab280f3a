from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio
import pytest

from codemode import Catalog, CodeMode, DiscoveryState
from codemode.discovery import stub_hash

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemode import ExecuteResult
    from sandbox import JsonObject, JsonValue

GITHUB_TOOLS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "github_mcp" / "tools.jsonl"

DOMAINS = {
    "crm": ("contact", "customer contact", "the CRM"),
    "billing": ("invoice", "customer invoice", "the billing system"),
    "calendar": ("event", "calendar event", "the team calendar"),
    "mail": ("message", "email message", "the mailbox"),
    "drive": ("document", "shared document", "the shared drive"),
    "weather": ("forecast", "weather forecast", "the weather service"),
    "inventory": ("product", "stock item", "the warehouse inventory"),
    "hr": ("employee", "employee record", "the HR directory"),
    "support": ("ticket", "support ticket", "the helpdesk"),
    "analytics": ("dashboard", "analytics dashboard", "the analytics workspace"),
    "shipping": ("shipment", "parcel shipment", "the carrier network"),
    "chat": ("channel", "chat channel", "the team chat"),
    "payroll": ("payslip", "monthly payslip", "the payroll ledger"),
    "projects": ("task", "project task", "the project board"),
}
ACTIONS = {
    "list": "List the {what}s in {where}, newest first.",
    "get": "Get one {what} from {where} by its id.",
    "create": "Create a new {what} in {where}.",
    "update": "Update the fields of an existing {what} in {where}.",
    "delete": "Delete a {what} from {where}. This cannot be undone.",
    "search": "Search {where} for {what}s matching a free-text query.",
    "export": "Export {what}s from {where} as CSV rows.",
    "archive": "Archive an old {what} in {where} so it no longer shows in lists.",
    "restore": "Restore an archived {what} in {where}.",
    "count": "Count the {what}s in {where} by status.",
    "assign": "Assign a {what} in {where} to a person.",
    "comment": "Add a comment to a {what} in {where}.",
    "tag": "Add tags to a {what} in {where}.",
    "share": "Share a {what} from {where} with another person by email.",
    "merge": "Merge two duplicate {what}s in {where} into one.",
}
STATUS: JsonObject = {"type": "string", "enum": ["open", "closed", "archived"], "description": "Filter by status."}


def tool_name(domain: str, action: str, noun: str, style: int) -> str:
    """Three naming styles, as real catalogs mix them: dotted, snake case and dashed."""
    return [f"{domain}.{action}_{noun}", f"{domain}_{action}_{noun}", f"{domain}-{action}-{noun}"][style % 3]


def parameters(action: str, noun: str) -> JsonObject:
    """A plausible argument schema for an action on a noun."""
    ident: JsonObject = {"type": "string", "description": f"The {noun} id, e.g. {noun}-1."}
    match action:
        case "list" | "export" | "count":
            properties: JsonObject = {
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
                "status": STATUS,
            }
            required: list[JsonValue] = []
        case "search":
            properties, required = {"query": {"type": "string"}, "limit": {"type": "integer", "default": 5}}, ["query"]
        case "create":
            properties = {"title": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}
            required = ["title"]
        case "assign" | "share":
            properties, required = {"id": ident, "person": {"type": "string", "format": "email"}}, ["id", "person"]
        case "comment":
            properties, required = {"id": ident, "text": {"type": "string"}}, ["id", "text"]
        case "merge":
            properties, required = {"keep": ident, "drop": ident}, ["keep", "drop"]
        case _:
            properties, required = {"id": ident}, ["id"]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def handler(name: str, action: str, noun: str) -> Callable[..., JsonValue]:
    """A deterministic handler: the same arguments always give the same data."""

    def run(**arguments: JsonValue) -> JsonValue:
        limit = arguments.get("limit", 5)
        count = limit if isinstance(limit, int) else 5
        if action in {"list", "export", "search"}:
            return [{"id": f"{noun}-{i}", "title": f"{noun} {i}", "status": "open"} for i in range(1, count + 1)]
        if action == "count":
            return {"open": 3, "closed": 7, "archived": 1}
        return {"tool": name, "ok": True, **arguments}

    return run


def business_catalog() -> Catalog:
    """About 200 realistic tools over 14 business systems, each with a deterministic handler."""
    catalog = Catalog()
    for style, (domain, (noun, what, where)) in enumerate(DOMAINS.items()):
        for action, template in ACTIONS.items():
            name = tool_name(domain, action, noun, style)
            catalog.add(
                name=name,
                description=template.format(what=what, where=where),
                parameters=parameters(action, noun),
                handler=handler(name, action, noun),
            )
    return catalog


@dataclass(frozen=True, kw_only=True)
class Step:
    """One `execute` of the conversation, and a change the host makes to the catalog after it."""

    code: str
    then: Callable[[Catalog], object] | None = None


def replace_description(name: str, description: str) -> Callable[[Catalog], object]:
    def change(catalog: Catalog) -> object:
        tool = catalog.get(name)
        assert tool is not None
        return catalog.replace(dataclasses.replace(tool, description=description))

    return change


def add_tools(catalog: Catalog) -> None:
    catalog.add(
        name="travel.book_flight",
        description="Book a flight between two airports.",
        parameters={
            "type": "object",
            "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
            "required": ["origin", "destination"],
        },
        handler=lambda origin, destination: {"booking": f"{origin}-{destination}", "seat": "12A"},
    )
    catalog.add(
        name="travel.book_hotel",
        description="Book a hotel room in a city for some nights.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}}},
        handler=lambda city="", nights=1: {"hotel": f"{city} Plaza", "nights": nights},
    )


BUSINESS_STEPS = [
    Step(code='found = await tools.search("list customer invoices")\nreturn {"found": [t["name"] for t in found]}'),
    Step(code="rows = await tools.billing_list_invoice(limit=3, status='open')\nreturn [r['id'] for r in rows]"),
    Step(
        code='found = await tools.search("create a support ticket in the helpdesk", max_results=3)\n'
        'ticket = await getattr(tools, found[0]["name"])(title="Printer on fire", tags=["urgent"])\n'
        'return {"found": [t["name"] for t in found], "ticket": ticket}'
    ),
    Step(
        code="import asyncio\n"
        "days = await asyncio.gather(*[tools['weather_get_forecast'](id=f'forecast-{i}') for i in range(3)])\n"
        "print(len(days), 'forecasts')",
        then=replace_description("billing_list_invoice", "List the customer invoices, newest first, 5 per page."),
    ),
    Step(
        code='found = await tools.search("list customer invoices")\nreturn {"found": [t["name"] for t in found]}',
        then=add_tools,
    ),
    Step(
        code='found = await tools.search("book a flight", max_results=2)\n'
        'booking = await tools.travel_book_flight(origin="LIS", destination="OSL")\n'
        'return {"found": [t["name"] for t in found], "booking": booking}'
    ),
    Step(
        code="try:\n    await tools.hr_assign_employee(id='employee-1')\nexcept ToolError as e:\n    print(e)\n"
        'print(await tools.describe("hr_get_employee"))',
        then=lambda catalog: catalog.remove("support-create-ticket"),
    ),
    Step(code="counts = await tools.inventory_count_product()\nreturn counts['open']"),
    Step(
        code='names = [t["name"] for t in await tools.search("share a shared document by email", max_results=4)]\n'
        "for name in names:\n    print(name, (await tools.describe(name)).count('Args:'))\n"
        'return {"found": names}',
        then=replace_description("hr_get_employee", "Get one employee record by id, with their manager."),
    ),
    Step(code="return await tools.payroll_export_payslip(limit=2)"),
    Step(code='return await tools.search("merge duplicate contacts in the CRM", max_results=1)'),
    Step(
        code="rows = await tools.crm_search_contact(query='ada')\n"
        "merged = await tools['crm.merge_contact'](keep=rows[0]['id'], drop=rows[1]['id'])\nreturn merged",
        then=lambda catalog: catalog.remove("travel.book_hotel"),
    ),
    Step(code="return sum([len(await tools.mail_list_message(limit=n)) for n in (1, 2, 3)])"),
    Step(code="print('nothing to discover')"),
]
GITHUB_STEPS = [
    Step(
        code='found = await tools.search("open a pull request on github", max_results=3)\n'
        'return {"found": [t["name"] for t in found]}'
    ),
    Step(
        code="try:\n"
        "    await tools.github_create_issue(owner='octo', repo='hello', title='Bug')\n"
        "except ToolError as e:\n    print(e)\n"
        'return len(await tools.describe("github.list_issues"))'
    ),
]


def discovered_names(catalog: Catalog, result: ExecuteResult) -> set[str]:
    """Original names of the tools a step's code found (its returned `found` list) or called."""
    value = result.run.value
    found = value.get("found", []) if isinstance(value, dict) else []
    if isinstance(value, list):  # a bare search result
        found = [item["name"] for item in value if isinstance(item, dict) and "signature" in item]
    assert isinstance(found, list)
    names = {call.name for call in result.calls}
    for alias in found:
        tool = catalog.get(str(alias))
        assert tool is not None
        names.add(tool.name)
    return names


async def converse(
    cm: CodeMode, catalog: Catalog, steps: list[Step], history: list[str] | None = None
) -> tuple[DiscoveryState, list[ExecuteResult]]:
    """Run the steps as one conversation (continuing `history`), checking the code tool and the state after each."""
    tool_bytes = json.dumps(cm.tool.to_json())
    history = [] if history is None else history
    state = cm.state_from_history(history)
    results = []
    for number, step in enumerate(steps):
        result = await cm.execute(step.code, state)
        assert result.ok, (number, step.code, result.text)
        history += [step.code, result.text]
        if result.announcement is not None:
            history.append(result.announcement)
        assert json.dumps(cm.tool.to_json()) == tool_bytes, number
        assert DiscoveryState.from_history(history) == state, number
        assert discovered_names(catalog, result) <= state.announced.keys(), number
        results.append(result)
        if step.then is not None:
            step.then(catalog)
    return state, results


def announced_markers(results: list[ExecuteResult]) -> list[tuple[str, str]]:
    """(original name, stub hash) of every stub announced in the conversation, new or updated."""
    return [
        (name, stub_hash(stub))
        for result in results
        for name, stub in (*result.announced.new, *result.announced.updated)
    ]


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_long_conversation_announces_every_stub_once_and_keeps_the_code_tool_fixed(
    isolation: Literal["inline", "process"],
) -> None:
    """Many steps over ~300 tools: each stub is announced once, `cm.tool` never changes, the history is the state."""
    catalog = business_catalog()
    steps = list(BUSINESS_STEPS)
    if GITHUB_TOOLS.exists():
        catalog.load_jsonl(GITHUB_TOOLS, prefix="github.")
        steps[6:6] = GITHUB_STEPS
    assert len(catalog) >= 195

    with anyio.fail_after(30):
        async with CodeMode(catalog, isolation=isolation) as cm:
            state, results = await converse(cm, catalog, steps)
            compact = set(state.compact)
            final = await cm.execute(
                "return {name: await tools.describe(name) for name in " + repr(sorted(state.announced)) + "}", state
            )

    markers = announced_markers(results)
    assert len(results) >= 12
    assert len({name for name, _ in markers}) >= 6
    assert [marker for marker, count in Counter(markers).items() if count > 1] == []
    assert final.ok
    assert compact
    assert {name for name, _ in final.announced.new} == compact  # described: the tools seen as a line, in full
    assert not final.announced.updated
    assert not final.announced.seen
    assert not state.compact
    assert isinstance(final.run.value, dict)
    assert {name: stub_hash(str(stub)) for name, stub in final.run.value.items()} == state.announced
    kinds = Counter(
        kind for result in results for kind in ("new", "updated", "removed") if getattr(result.announced, kind)
    )
    assert kinds["updated"] >= 2
    assert kinds["removed"] >= 2
    assert "support-create-ticket" not in state.announced
    assert "travel.book_hotel" not in state.announced
    assert state.announced.keys() >= {
        "billing_list_invoice",
        "hr_get_employee",
        "travel.book_flight",
        "crm.merge_contact",
    }
    if GITHUB_TOOLS.exists():
        github_call = next(call for result in results for call in result.calls if call.name.startswith("github."))
        assert github_call.ok is False
        assert "has no handler" in (github_call.error or "")
        assert any(name.startswith("github.") for name in state.announced)


async def test_the_conversation_continues_from_its_history_on_a_fresh_code_mode() -> None:
    """Halfway through, a new `CodeMode` with the state read from the history picks up without repeating a stub."""
    catalog = business_catalog()
    history: list[str] = []
    async with CodeMode(catalog, isolation="inline") as first:
        _, before = await converse(first, catalog, BUSINESS_STEPS[:7], history)
    stored = json.loads(json.dumps(history))

    async with CodeMode(catalog, isolation="inline") as second:
        state, after = await converse(second, catalog, BUSINESS_STEPS[7:], stored)

    markers = announced_markers(before) + announced_markers(after)
    assert [marker for marker, count in Counter(markers).items() if count > 1] == []
    assert DiscoveryState.from_history(stored) == state
    announcements = "\n".join(result.announcement or "" for result in after)
    assert re.search(r"^# removed tool: support-create-ticket$", announcements, re.MULTILINE)
    assert re.search(r"^# updated tool: hr_get_employee ", announcements, re.MULTILINE)
