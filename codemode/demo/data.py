"""The demo's fixed world: customers, invoices, meetings and weather, the same on every run."""

from __future__ import annotations

from typing import Any

CUSTOMERS: list[dict[str, Any]] = [
    {
        "id": "C-101",
        "name": "Kestrel Robotics",
        "city": "Berlin",
        "email": "ops@kestrel.example",
        "segment": "enterprise",
    },
    {
        "id": "C-102",
        "name": "Nordlicht Bakery",
        "city": "Hamburg",
        "email": "hello@nordlicht.example",
        "segment": "smb",
    },
    {"id": "C-103", "name": "Spree Analytics", "city": "Berlin", "email": "finance@spree.example", "segment": "mid"},
    {"id": "C-104", "name": "Alpen Outdoor", "city": "Munich", "email": "team@alpen.example", "segment": "mid"},
    {
        "id": "C-105",
        "name": "Tegel Logistics",
        "city": "Berlin",
        "email": "billing@tegel.example",
        "segment": "enterprise",
    },
    {
        "id": "C-106",
        "name": "Rhein Medical",
        "city": "Cologne",
        "email": "admin@rhein.example",
        "segment": "enterprise",
    },
    {"id": "C-107", "name": "Kreuzberg Coffee", "city": "Berlin", "email": "hi@kreuzberg.example", "segment": "smb"},
    {"id": "C-108", "name": "Elbe Shipping", "city": "Hamburg", "email": "accounts@elbe.example", "segment": "mid"},
]

INVOICES: list[dict[str, Any]] = [
    {
        "id": "INV-2001",
        "customer_id": "C-101",
        "amount": 12400.0,
        "currency": "EUR",
        "status": "overdue",
        "due": "2026-10-31",
    },
    {
        "id": "INV-2002",
        "customer_id": "C-102",
        "amount": 830.0,
        "currency": "EUR",
        "status": "paid",
        "due": "2026-11-05",
    },
    {
        "id": "INV-2003",
        "customer_id": "C-103",
        "amount": 4150.5,
        "currency": "EUR",
        "status": "overdue",
        "due": "2026-11-10",
    },
    {
        "id": "INV-2004",
        "customer_id": "C-105",
        "amount": 22990.0,
        "currency": "EUR",
        "status": "open",
        "due": "2026-12-15",
    },
    {
        "id": "INV-2005",
        "customer_id": "C-107",
        "amount": 640.0,
        "currency": "EUR",
        "status": "overdue",
        "due": "2026-11-20",
    },
    {
        "id": "INV-2006",
        "customer_id": "C-104",
        "amount": 3100.0,
        "currency": "EUR",
        "status": "overdue",
        "due": "2026-11-01",
    },
    {
        "id": "INV-2007",
        "customer_id": "C-106",
        "amount": 15800.0,
        "currency": "EUR",
        "status": "paid",
        "due": "2026-10-20",
    },
]

MEETINGS: dict[str, list[dict[str, Any]]] = {
    "ops@kestrel.example": [{"title": "Quarterly review", "date": "2026-12-02", "time": "10:00", "city": "Berlin"}],
    "finance@spree.example": [{"title": "Renewal call", "date": "2026-12-03", "time": "14:30", "city": "Berlin"}],
}

FORECASTS: dict[str, list[dict[str, Any]]] = {
    "Berlin": [
        {"date": "2026-12-01", "summary": "light snow", "high_c": 1, "low_c": -3},
        {"date": "2026-12-02", "summary": "overcast", "high_c": 3, "low_c": -1},
        {"date": "2026-12-03", "summary": "rain", "high_c": 5, "low_c": 2},
    ],
}
