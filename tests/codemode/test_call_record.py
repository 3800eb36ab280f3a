# Snapshots hold the texts the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""After any failure the model reads which tool calls completed and which were in flight; the host sees it too."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Literal

import anyio
import pytest
from dirty_equals import IsFloat
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode, Limits, ToolCall, ToolError, ToolLimits

if TYPE_CHECKING:
    from codemode import ExecuteResult


def mail_catalog() -> Catalog:
    catalog = Catalog()

    @catalog.tool
    async def send_email(to: str, subject: str, body: str = "") -> str:
        """Send an email."""
        return f"sent to {to}"

    @catalog.tool
    async def export_table(table: str) -> str:
        """Export a table (slow)."""
        await anyio.sleep(60)
        return "exported"

    @catalog.tool
    def get_order(order_id: str) -> dict[str, str]:
        """Get an order."""
        if order_id == "missing":
            raise ToolError("no order 'missing'")
        return {"id": order_id}

    return catalog


async def execute(
    code: str, *, isolation: Literal["inline", "process"] = "inline", limits: Limits | None = None
) -> ExecuteResult:
    async with CodeMode(mail_catalog(), isolation=isolation, limits=limits) as cm:
        return await cm.execute(code, cm.new_state())


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_timeout_lists_the_completed_call_and_the_one_in_flight(
    isolation: Literal["inline", "process"],
) -> None:
    """The text says the email went and the export may have started; `calls` holds both, the export in flight."""
    code = 'await tools.send_email(to="ann@example.com", subject="Invoice")\nawait tools.export_table(table="orders")'

    result = await execute(code, isolation=isolation, limits=Limits(timeout=1.0))

    assert result.run.error is not None
    assert result.run.error.kind == "timeout"
    assert result.calls == (
        ToolCall(
            name="send_email",
            arguments={"to": "ann@example.com", "subject": "Invoice"},
            duration=IsFloat(),
            ok=True,
            result="sent to ann@example.com",
        ),
        ToolCall(
            name="export_table", arguments={"table": "orders"}, duration=IsFloat(), ok=False, error=None, in_flight=True
        ),
    )
    assert result.text.split("\n", 1)[1] == snapshot("""\
Tool calls before the run stopped: 1 completed (1 ok, 0 failed), 1 in flight:
  ok     send_email(to="ann@example.com", subject="Invoice")
  in flight, may have happened: export_table(table="orders")
Check whether the calls in flight took effect before you repeat them.\
""")


async def test_a_runtime_error_after_calls_lists_them_with_their_outcome() -> None:
    """A completed call, a failed call, then a crash in the model's own code: both calls are listed."""
    code = (
        'await tools.send_email(to="ann@example.com", subject="Invoice", body="Dear Ann, ' + "x" * 200 + '")\n'
        "try:\n"
        '    await tools.get_order(order_id="missing")\n'
        "except ToolError:\n"
        "    pass\n"
        "1 / 0"
    )

    result = await execute(code)

    assert [(call.name, call.ok) for call in result.calls] == [("send_email", True), ("get_order", False)]
    assert result.text == snapshot("""\
Traceback (most recent call last):
  line 6, in <module>
    1 / 0
ZeroDivisionError: division by zero (line 6)
Tool calls before the run stopped: 2 completed (1 ok, 1 failed):
  ok     send_email(to="ann@example.com", subject="Invoice", body="Dear Ann, xxxxxxxxxxxxxxxxxxxx [... 181 characters cut ...])
  failed get_order(order_id="missing"): no order 'missing'\
""")


async def test_a_successful_run_does_not_list_its_calls() -> None:
    """The record is for failures: a run that worked reads as its output and value only."""
    result = await execute('return await tools.get_order(order_id="A1")')

    assert result.text == snapshot("""\
Returned: {
 "id": "A1"
}\
""")


async def test_a_long_run_shows_the_first_and_last_calls_every_failed_one_and_counts_the_ok_ones() -> None:
    """40 calls then a call limit: the first and last three, each failed call between named, the ok ones counted."""
    code = (
        "for i in range(40):\n"
        "    try:\n"
        '        await tools.get_order(order_id="missing" if i % 10 == 0 else f"A{i}")\n'
        "    except ToolError:\n"
        "        pass\n"
    )

    result = await execute(code, limits=Limits(calls=40 - 1))

    assert result.run.error is not None
    assert result.run.error.kind == "call_limit"
    assert len(result.calls) == 39
    assert result.text.split("\n", 1)[1] == snapshot("""\
Tool calls before the run stopped: 39 completed (35 ok, 4 failed):
  failed get_order(order_id="missing"): no order 'missing'
  ok     get_order(order_id="A1")
  ok     get_order(order_id="A2")
  ... 7 more ok
  failed get_order(order_id="missing"): no order 'missing'
  ... 9 more ok
  failed get_order(order_id="missing"): no order 'missing'
  ... 9 more ok
  failed get_order(order_id="missing"): no order 'missing'
  ... 5 more ok
  ok     get_order(order_id="A36")
  ok     get_order(order_id="A37")
  ok     get_order(order_id="A38")\
""")


async def test_a_returned_value_cut_at_the_display_limit_says_so_in_the_result() -> None:
    """`ExecuteResult.value_truncated` is true when the text cut the returned value, and false otherwise."""
    long = await execute('return "x" * 50_000')
    short = await execute('return "x" * 50')

    assert long.value_truncated is True
    assert "characters cut" in long.text
    assert short.value_truncated is False


async def test_a_sync_call_past_its_tool_timeout_is_recorded_as_may_have_happened_and_it_does_happen() -> None:
    """The thread of a sync handler cannot be stopped: the model is told to check, not to retry, and it was right."""
    catalog = Catalog()
    release, sent = threading.Event(), threading.Event()

    @catalog.tool
    async def find_customer(name: str) -> str:
        """Find a customer."""
        return "acme"

    @catalog.tool(limits=ToolLimits(timeout=0.05))
    def send_invoice(customer: str) -> str:
        """Send an invoice (slow SMTP)."""
        release.wait(10)
        sent.set()
        return "sent"

    code = 'customer = await tools.find_customer(name="Acme")\nawait tools.send_invoice(customer=customer)'
    try:
        async with CodeMode(catalog, isolation="inline") as cm:
            result = await cm.execute(code, cm.new_state())
    finally:
        release.set()
    message = "tools.send_invoice() did not finish within its 0.05 s limit; it may still have taken effect: check before you repeat it"
    assert result.calls[1] == ToolCall(
        name="send_invoice",
        arguments={"customer": "acme"},
        duration=IsFloat(),
        ok=False,
        error=message,
        in_flight=True,
    )
    assert result.text == snapshot("""\
Traceback (most recent call last):
  line 2, in <module>
    await tools.send_invoice(customer=customer)
ToolError: tools.send_invoice() did not finish within its 0.05 s limit; it may still have taken effect: check before you repeat it (line 2)
Tool calls before the run stopped: 1 completed (1 ok, 0 failed), 1 in flight:
  ok     find_customer(name="Acme")
  in flight, may have happened: send_invoice(customer="acme")
Check whether the calls in flight took effect before you repeat them.\
""")
    assert await anyio.to_thread.run_sync(sent.wait, 10)  # the abandoned thread went on and sent it


async def test_an_async_call_cancelled_at_its_tool_timeout_is_recorded_as_may_have_happened() -> None:
    """Cancellation stops an async handler at whatever it awaited (after a POST went out, say): the same record."""
    catalog = Catalog()
    posted: list[str] = []

    @catalog.tool(limits=ToolLimits(timeout=0.05))
    async def create_invoice(customer: str) -> str:
        """Create an invoice, then wait for the confirmation."""
        posted.append(customer)
        await anyio.sleep(60)
        return "confirmed"

    code = 'try:\n    await tools.create_invoice(customer="acme")\nexcept ToolError as error:\n    print(error)'
    async with CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute(code, cm.new_state())
    assert result.text == snapshot(
        """\
tools.create_invoice() did not finish within its 0.05 s limit; it may still have taken effect: check before you repeat it
The run ended with 1 tool call still in flight (given up on, never awaited, or cut off):
  in flight, may have happened: create_invoice(customer="acme")
Check whether the calls in flight took effect before you repeat them.\
"""
    )
    assert [(call.ok, call.in_flight) for call in result.calls] == [(False, True)]
    assert posted == ["acme"]


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_run_that_ends_well_names_a_sync_call_its_wait_for_gave_up_on_and_the_call_does_happen(
    isolation: Literal["inline", "process"],
) -> None:
    """`asyncio.wait_for` gives up on a sync tool whose thread runs on: the model reads that it may have happened."""
    catalog = Catalog()
    started, release, charged = threading.Event(), threading.Event(), threading.Event()

    @catalog.tool
    def charge_card(amount: int) -> str:
        """Charge the customer's card (slow)."""
        started.set()
        release.wait(10)
        charged.set()
        return "charged"

    @catalog.tool
    async def charge_started() -> bool:
        """Wait until the charge has begun on the host."""
        return await anyio.to_thread.run_sync(started.wait, 10)

    code = (
        "import asyncio\n"
        "charge = asyncio.create_task(tools.charge_card(amount=100))\n"
        "await tools.charge_started()\n"
        "try:\n"
        "    await asyncio.wait_for(charge, timeout=0.05)\n"
        "except asyncio.TimeoutError:\n"
        '    print("timed out, so not charged")\n'
    )
    try:
        async with CodeMode(catalog, isolation=isolation) as cm:
            result = await cm.execute(code, cm.new_state())
    finally:
        release.set()
    assert result.run.ok
    assert result.text == snapshot("""\
timed out, so not charged
The run ended with 1 tool call still in flight (given up on, never awaited, or cut off):
  in flight, may have happened: charge_card(amount=100)
Check whether the calls in flight took effect before you repeat them.\
""")
    assert [(call.name, call.in_flight) for call in result.calls] == [("charge_started", False), ("charge_card", True)]
    assert await anyio.to_thread.run_sync(charged.wait, 10)  # the thread went on and charged the card


def started_catalog(count: int) -> Catalog:
    """`send_email` calls that start and never answer, and `all_started`, which answers once `count` have started."""
    catalog = Catalog()
    started: list[str] = []
    ready = anyio.Event()

    @catalog.tool
    async def send_email(to: str) -> str:
        """Send an email (slow)."""
        started.append(to)
        if len(started) == count:
            ready.set()
        await anyio.sleep(60)
        return "sent"

    @catalog.tool
    async def all_started() -> str:
        """Wait until every email has started."""
        await ready.wait()
        return "ready"

    return catalog


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_run_that_ends_well_names_a_task_it_never_awaited(isolation: Literal["inline", "process"]) -> None:
    """A `create_task` the code never awaits was sent before the run ended: the model reads that it may have happened."""
    code = (
        "import asyncio\n"
        'asyncio.create_task(tools.send_email(to="boss@example.com"))\n'
        "await tools.all_started()\n"
        'print("queued the email")'
    )
    async with CodeMode(started_catalog(1), isolation=isolation) as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.run.ok
    assert result.text == snapshot("""\
queued the email
The run ended with 1 tool call still in flight (given up on, never awaited, or cut off):
  in flight, may have happened: send_email(to="boss@example.com")
Check whether the calls in flight took effect before you repeat them.\
""")


async def test_a_failed_run_names_every_call_in_flight() -> None:
    """Twelve emails in flight when the code raises: each is named, none hidden behind a count."""
    code = (
        "import asyncio\n"
        "for i in range(12):\n"
        '    asyncio.create_task(tools.send_email(to=f"c{i}@x"))\n'
        "await tools.all_started()\n"
        'raise RuntimeError("stop")'
    )
    async with CodeMode(started_catalog(12), isolation="inline") as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.text.split("\n", 4)[4] == snapshot("""\
Tool calls before the run stopped: 1 completed (1 ok, 0 failed), 12 in flight:
  ok     all_started()
  in flight, may have happened: send_email(to="c0@x")
  in flight, may have happened: send_email(to="c1@x")
  in flight, may have happened: send_email(to="c2@x")
  in flight, may have happened: send_email(to="c3@x")
  in flight, may have happened: send_email(to="c4@x")
  in flight, may have happened: send_email(to="c5@x")
  in flight, may have happened: send_email(to="c6@x")
  in flight, may have happened: send_email(to="c7@x")
  in flight, may have happened: send_email(to="c8@x")
  in flight, may have happened: send_email(to="c9@x")
  in flight, may have happened: send_email(to="c10@x")
  in flight, may have happened: send_email(to="c11@x")
Check whether the calls in flight took effect before you repeat them.\
""")
