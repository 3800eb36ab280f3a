"""The demo catalog: about 300 tools across 13 services, with handlers that return deterministic data.

Most tools are made from a table of services and entities (list, get, search, create, update, delete each),
so the catalog has the size and the near-duplicates of a real one; a handful are written out because the
scripted task uses them (customers, invoices, meetings, weather, email).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from codemode.catalog import Catalog
from codemode.demo.data import CUSTOMERS, FORECASTS, INVOICES, MEETINGS

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox import JsonValue

# service -> (description, {entity: (plural, {field: (json type, description)})})
_Fields = dict[str, tuple[str, str]]
SERVICES: dict[str, tuple[str, dict[str, tuple[str, _Fields]]]] = {
    "crm": (
        "customer relationship management",
        {
            "customer": (
                "customers",
                {
                    "name": ("string", "Company name"),
                    "city": ("string", "City of the head office"),
                    "email": ("string", "Main contact email"),
                    "segment": ("string", "smb, mid or enterprise"),
                },
            ),
            "contact": (
                "contacts",
                {
                    "name": ("string", "Full name"),
                    "email": ("string", "Email address"),
                    "customer_id": ("string", "The customer this contact works for"),
                },
            ),
            "deal": (
                "deals",
                {
                    "title": ("string", "Deal title"),
                    "value": ("number", "Expected value in EUR"),
                    "stage": ("string", "Pipeline stage"),
                },
            ),
            "note": (
                "notes",
                {"customer_id": ("string", "Customer the note is about"), "text": ("string", "Note text")},
            ),
        },
    ),
    "billing": (
        "invoices, payments and subscriptions",
        {
            "invoice": (
                "invoices",
                {
                    "customer_id": ("string", "Billed customer"),
                    "amount": ("number", "Amount due"),
                    "status": ("string", "open, paid or overdue"),
                },
            ),
            "payment": ("payments", {"invoice_id": ("string", "Invoice paid"), "amount": ("number", "Amount paid")}),
            "subscription": (
                "subscriptions",
                {"customer_id": ("string", "Subscriber"), "plan": ("string", "Plan name")},
            ),
            "refund": ("refunds", {"payment_id": ("string", "Refunded payment"), "reason": ("string", "Why")}),
        },
    ),
    "calendar": (
        "calendars, meetings and rooms",
        {
            "event": (
                "events",
                {
                    "title": ("string", "Event title"),
                    "date": ("string", "Date, YYYY-MM-DD"),
                    "attendee_email": ("string", "Attendee's email"),
                },
            ),
            "room": ("rooms", {"name": ("string", "Room name"), "capacity": ("integer", "Seats")}),
            "reminder": ("reminders", {"event_id": ("string", "Event"), "minutes_before": ("integer", "Lead time")}),
        },
    ),
    "mail": (
        "email messages, drafts and templates",
        {
            "message": ("messages", {"to": ("string", "Recipient"), "subject": ("string", "Subject line")}),
            "draft": ("drafts", {"to": ("string", "Recipient"), "body": ("string", "Draft text")}),
            "template": ("templates", {"name": ("string", "Template name"), "body": ("string", "Template text")}),
        },
    ),
    "weather": (
        "weather forecasts and alerts",
        {
            "station": ("stations", {"city": ("string", "City"), "elevation_m": ("number", "Elevation in metres")}),
            "alert": ("alerts", {"region": ("string", "Region"), "severity": ("string", "minor, moderate or severe")}),
        },
    ),
    "travel": (
        "flights, hotels and trips",
        {
            "flight": (
                "flights",
                {
                    "origin": ("string", "IATA code"),
                    "destination": ("string", "IATA code"),
                    "date": ("string", "YYYY-MM-DD"),
                },
            ),
            "hotel": ("hotels", {"city": ("string", "City"), "stars": ("integer", "Rating")}),
            "booking": (
                "bookings",
                {"traveller": ("string", "Traveller email"), "kind": ("string", "flight or hotel")},
            ),
        },
    ),
    "support": (
        "customer support tickets",
        {
            "ticket": ("tickets", {"subject": ("string", "Subject"), "priority": ("string", "low, normal or urgent")}),
            "agent": ("agents", {"name": ("string", "Agent name"), "team": ("string", "Team")}),
            "macro": ("macros", {"name": ("string", "Macro name"), "reply": ("string", "Canned reply")}),
        },
    ),
    "inventory": (
        "products, stock and warehouses",
        {
            "product": ("products", {"sku": ("string", "Stock keeping unit"), "name": ("string", "Product name")}),
            "warehouse": ("warehouses", {"city": ("string", "City"), "capacity": ("integer", "Pallet places")}),
            "shipment": ("shipments", {"order_id": ("string", "Order"), "carrier": ("string", "Carrier")}),
            "order": ("orders", {"customer_id": ("string", "Customer"), "total": ("number", "Order total")}),
        },
    ),
    "hr": (
        "employees, leave and payroll",
        {
            "employee": ("employees", {"name": ("string", "Full name"), "department": ("string", "Department")}),
            "leave_request": ("leave_requests", {"employee_id": ("string", "Employee"), "days": ("integer", "Days")}),
            "payslip": ("payslips", {"employee_id": ("string", "Employee"), "month": ("string", "YYYY-MM")}),
        },
    ),
    "analytics": (
        "metrics, dashboards and reports",
        {
            "report": ("reports", {"name": ("string", "Report name"), "period": ("string", "e.g. 2026-Q4")}),
            "dashboard": ("dashboards", {"title": ("string", "Title"), "owner": ("string", "Owner email")}),
            "metric": ("metrics", {"name": ("string", "Metric name"), "unit": ("string", "Unit")}),
        },
    ),
    "docs": (
        "documents, folders and sharing",
        {
            "document": ("documents", {"title": ("string", "Title"), "folder_id": ("string", "Folder")}),
            "folder": ("folders", {"name": ("string", "Folder name"), "parent_id": ("string", "Parent folder")}),
            "share": ("shares", {"document_id": ("string", "Document"), "email": ("string", "Shared with")}),
        },
    ),
    "chat": (
        "team chat channels and messages",
        {
            "channel": ("channels", {"name": ("string", "Channel name"), "topic": ("string", "Topic")}),
            "post": ("posts", {"channel_id": ("string", "Channel"), "text": ("string", "Message text")}),
            "user": ("users", {"handle": ("string", "Handle"), "status": ("string", "Status text")}),
        },
    ),
    "marketing": (
        "campaigns, audiences and newsletters",
        {
            "campaign": ("campaigns", {"name": ("string", "Campaign name"), "budget": ("number", "Budget in EUR")}),
            "audience": ("audiences", {"name": ("string", "Audience name"), "size": ("integer", "Contacts")}),
            "newsletter": ("newsletters", {"subject": ("string", "Subject"), "send_date": ("string", "YYYY-MM-DD")}),
        },
    ),
    "security": (
        "accounts, roles and audit logs",
        {
            "account": ("accounts", {"email": ("string", "Login email"), "role": ("string", "Role name")}),
            "role": ("roles", {"name": ("string", "Role name"), "permissions": ("string", "Comma-separated")}),
            "audit_entry": ("audit_entries", {"actor": ("string", "Who"), "action": ("string", "What")}),
        },
    ),
    "finance": (
        "budgets, expenses and ledger",
        {
            "budget": ("budgets", {"department": ("string", "Department"), "amount": ("number", "EUR")}),
            "expense": ("expenses", {"employee_id": ("string", "Employee"), "amount": ("number", "EUR")}),
            "ledger_entry": ("ledger_entries", {"account": ("string", "Ledger account"), "amount": ("number", "EUR")}),
        },
    ),
    "projects": (
        "projects, tasks and milestones",
        {
            "project": ("projects", {"name": ("string", "Project name"), "lead": ("string", "Lead's email")}),
            "task": ("tasks", {"title": ("string", "Task title"), "assignee": ("string", "Assignee email")}),
            "milestone": ("milestones", {"name": ("string", "Milestone"), "due": ("string", "YYYY-MM-DD")}),
        },
    ),
}


def _record(entity: str, record_id: str, fields: _Fields) -> dict[str, Any]:
    seed = int(hashlib.sha256(f"{entity}:{record_id}".encode()).hexdigest()[:8], 16)
    record: dict[str, Any] = {"id": record_id}
    for position, (name, (kind, _)) in enumerate(sorted(fields.items())):
        value = (seed >> position) % 1000
        record[name] = {"string": f"{name}-{value}", "number": float(value), "integer": value}.get(kind, value)
    return record


def _generic(service: str, entity: str, plural: str, fields: _Fields, op: str) -> Callable[..., Any]:
    prefix = entity[:3].upper()

    def handler(**kwargs: Any) -> Any:
        if op in ("list", "search"):
            limit = int(kwargs.get("limit") or 3)
            return [_record(entity, f"{prefix}-{n}", fields) for n in range(1, min(limit, 10) + 1)]
        record_id = str(kwargs.get(f"{entity}_id") or f"{prefix}-new")
        if op == "delete":
            return {"deleted": record_id}
        record = _record(entity, record_id, fields)
        record.update({k: v for k, v in kwargs.items() if k in fields})
        return record

    return handler


def _id_param(entity: str) -> dict[str, Any]:
    return {f"{entity}_id": {"type": "string", "description": f"The {entity.replace('_', ' ')}'s id"}}


def _schemas(entity: str, plural: str, fields: _Fields, op: str) -> tuple[str, dict[str, Any], list[str]]:
    readable, readable_plural = entity.replace("_", " "), plural.replace("_", " ")
    props = {name: {"type": kind, "description": text} for name, (kind, text) in fields.items()}
    if op == "list":
        filters = {
            name: dict(schema, description=f"Only {readable_plural} with this {name}") for name, schema in props.items()
        }
        limit = {
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 20,
                "description": "Most results to return",
            }
        }
        return f"List {readable_plural}, optionally filtered.", {**filters, **limit}, []
    if op == "search":
        return (
            f"Search {readable_plural} by free text.",
            {"query": {"type": "string", "description": "Words to look for"}},
            ["query"],
        )
    if op == "get":
        return f"Get one {readable} by id.", _id_param(entity), [f"{entity}_id"]
    if op == "create":
        return f"Create a new {readable}.", props, sorted(props)[:1]
    if op == "update":
        return f"Update fields of an existing {readable}.", {**_id_param(entity), **props}, [f"{entity}_id"]
    return f"Delete a {readable} permanently.", _id_param(entity), [f"{entity}_id"]


def _add_generated(catalog: Catalog, skip: set[str]) -> None:
    for service, (about, entities) in SERVICES.items():
        for entity, (plural, fields) in entities.items():
            for op in ("list", "search", "get", "create", "update", "delete"):
                name = f"{service}.{op}_{plural if op in ('list', 'search') else entity}"
                if name in skip:
                    continue
                summary, props, required = _schemas(entity, plural, fields, op)
                needed: list[JsonValue] = list(required)
                catalog.add(
                    name=name,
                    description=f"{summary} Part of the {service} service ({about}).",
                    parameters={"type": "object", "properties": props, "required": needed},
                    handler=_generic(service, entity, plural, fields, op),
                )


def build_demo_catalog() -> Catalog:
    """The demo's catalog of about 300 tools."""
    catalog = Catalog(check_schemas=False)  # our own, known-good schemas: skip the meta-schema check (~2 ms a tool)
    _add_task_tools(catalog)
    _add_generated(catalog, skip={tool.name for tool in catalog})
    return catalog


def _add_task_tools(catalog: Catalog) -> None:
    """The tools the scripted task uses, with data from `codemode.demo.data`."""

    def list_customers(city: str | None = None, segment: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        rows = [c for c in CUSTOMERS if city in (None, c["city"]) and segment in (None, c["segment"])]
        return rows[:limit]

    def list_invoices(
        status: str | None = None, customer_id: str | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        rows = [i for i in INVOICES if status in (None, i["status"]) and customer_id in (None, i["customer_id"])]
        return rows[:limit]

    async def list_events(attendee_email: str, date: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        if attendee_email not in MEETINGS and attendee_email.endswith("kreuzberg.example"):
            raise PermissionError(f"calendar of {attendee_email} is private")
        return [e for e in MEETINGS.get(attendee_email, []) if date in (None, e["date"])][:limit]

    async def get_forecast(city: str, days: int = 3) -> dict[str, Any]:
        if city not in FORECASTS:
            raise LookupError(f"no forecast for {city!r}")
        return {"city": city, "days": FORECASTS[city][:days]}

    async def send(to: str, subject: str, body: str, cc: list[str] | None = None) -> dict[str, Any]:
        return {
            "status": "sent",
            "to": to,
            "subject": subject,
            "message_id": "MSG-" + hashlib.sha256(to.encode()).hexdigest()[:6],
        }

    fields = SERVICES["crm"][1]["customer"][1]
    _, props, _ = _schemas("customer", "customers", fields, "list")
    catalog.add(
        name="crm.list_customers",
        description="List customers, optionally filtered by city or segment. "
        "Part of the crm service (customer relationship management).",
        parameters={"type": "object", "properties": props},
        handler=list_customers,
    )
    invoice_fields = SERVICES["billing"][1]["invoice"][1]
    _, invoice_props, _ = _schemas("invoice", "invoices", invoice_fields, "list")
    invoice_props["status"] = {"type": "string", "enum": ["open", "paid", "overdue"], "description": "Invoice status"}
    catalog.add(
        name="billing.list_invoices",
        description="List invoices, optionally filtered by status or customer. "
        "Part of the billing service (invoices, payments and subscriptions).",
        parameters={"type": "object", "properties": invoice_props},
        handler=list_invoices,
    )
    catalog.add(
        name="calendar.list_events",
        description="List calendar events an attendee is invited to. "
        "Part of the calendar service (calendars, meetings and rooms).",
        parameters={
            "type": "object",
            "required": ["attendee_email"],
            "properties": {
                "attendee_email": {"type": "string", "description": "The attendee's email"},
                "date": {"type": "string", "description": "Only events on this date, YYYY-MM-DD"},
                "limit": {"type": "integer", "default": 20, "description": "Most results to return"},
            },
        },
        handler=list_events,
    )
    catalog.add(
        name="weather.get_forecast",
        description="Get the daily weather forecast for a city.",
        parameters={
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3, "description": "Number of days"},
            },
        },
        handler=get_forecast,
    )
    catalog.add(
        name="mail.send_message",
        description="Send an email message. Part of the mail service.",
        parameters={
            "type": "object",
            "required": ["to", "subject", "body"],
            "properties": {
                "to": {"type": "string", "description": "Recipient email"},
                "subject": {"type": "string", "description": "Subject line"},
                "body": {"type": "string", "description": "Plain-text body"},
                "cc": {"type": "array", "items": {"type": "string"}, "description": "Copy recipients"},
            },
        },
        handler=send,
    )
