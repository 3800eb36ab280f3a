"""The demo's task and the scripted model's side of it.

The script searches, calls tools concurrently, handles an error, discovers more, corrects a mistake, and answers.
"""

from __future__ import annotations

from codemode.testing import ScriptStep, step

TASK = (
    "Which of our Berlin customers have overdue invoices? Check whether we meet any of them soon and what the "
    "weather will be, then email each of them a friendly payment reminder."
)

_FIND = """\
for query in ["customers in a city", "overdue invoices", "calendar events of an attendee"]:
    for tool in await tools.search(query, max_results=3):
        print(f"{query!r:34} {tool['signature']}")
"""

_JOIN = """\
import asyncio

customers, overdue = await asyncio.gather(
    tools.crm_list_customers(city="Berlin"),
    tools.billing_list_invoices(status="overdue"),
)
by_id = {customer["id"]: customer for customer in customers}
late = [invoice | {"customer": by_id[invoice["customer_id"]]} for invoice in overdue if invoice["customer_id"] in by_id]
for invoice in late:
    print(f"{invoice['customer']['name']:18} {invoice['id']}  {invoice['amount']:>9,.2f} EUR  due {invoice['due']}")
return [invoice["customer"]["email"] for invoice in late]
"""

_MEETINGS = """\
import asyncio

async def meetings(email):
    try:
        return email, await tools.calendar_list_events(attendee_email=email)
    except ToolError as error:
        return email, f"unknown ({error})"

for email, events in await asyncio.gather(*(meetings(e) for e in
                                            ["ops@kestrel.example", "finance@spree.example", "hi@kreuzberg.example"])):
    print(email, "->", events)
"""

_WEATHER = """\
found = await tools.search("weather forecast for a city", max_results=2)
print("found:", [tool["name"] for tool in found])
forecast = await tools.weather_get_forecast(city="Berlin", days=3)
for day in forecast["days"]:
    print(day["date"], f"{day['summary']:12}", f"{day['low_c']}..{day['high_c']} C")
"""

_FIRST_EMAIL = """\
print([tool["name"] for tool in await tools.search("send an email", max_results=2)])
return await tools.mail_send_message(to="ops@kestrel.example", subject="Invoice INV-2001", body=["Hello"])
"""

_EMAILS = """\
import asyncio

reminders = {
    "ops@kestrel.example": ("INV-2001", 12400.00, "See you at the quarterly review on 2 Dec at 10:00."),
    "finance@spree.example": ("INV-2003", 4150.50, "Talk soon on our renewal call on 3 Dec at 14:30."),
    "hi@kreuzberg.example": ("INV-2005", 640.00, "Thanks for being a customer."),
}
sent = await asyncio.gather(*(
    tools.mail_send_message(
        to=to,
        subject=f"Friendly reminder: invoice {number} is overdue",
        body=f"Hello,\\n\\ninvoice {number} over {amount:,.2f} EUR is past due. {note}\\n\\nBest regards",
    )
    for to, (number, amount, note) in reminders.items()
))
return {message["to"]: message["status"] for message in sent}
"""

_ANSWER = (
    "Three Berlin customers have overdue invoices: Kestrel Robotics (INV-2001, 12,400.00 EUR), Spree Analytics "
    "(INV-2003, 4,150.50 EUR) and Kreuzberg Coffee (INV-2005, 640.00 EUR). We meet Kestrel on 2 Dec at 10:00 "
    "(overcast, -1 to 3 C) and Spree on 3 Dec at 14:30 (rain, 2 to 5 C); Kreuzberg's calendar is private. "
    "A payment reminder went to each of the three."
)

SCRIPT: tuple[ScriptStep, ...] = (
    step("Let me find the tools for customers, invoices and meetings.", _FIND),
    step("I'll fetch Berlin customers and overdue invoices together and join them.", _JOIN),
    step("Now their upcoming meetings.", _MEETINGS),
    step("Checking the weather for the meeting days.", _WEATHER),
    step("Next, the email tool.", _FIRST_EMAIL),
    step("The body must be a string; sending all three reminders at once.", _EMAILS),
    step(_ANSWER),
)
