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
  ok     send_email(to="ann@example.com", subject="Invoice", body="Dear Ann, xxxxxxxxxxxxxxxxxxxxxxxxxx...)
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


async def test_a_long_run_shows_the_first_and_last_calls_and_exact_counts() -> None:
    """40 calls then a call limit: the first and last three, and how many of each outcome lie between."""
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
  ... 33 more (30 ok, 3 failed)
  ok     get_order(order_id="A36")
  ok     get_order(order_id="A37")
  ok     get_order(order_id="A38")\
""")


async def test_a_returned_value_cut_at_the_display_limit_says_so_in_the_result() -> None:
    """`ExecuteResult.value_truncated` is true when the text cut the returned value, and false otherwise."""
    long = await execute('return "x" * 50_000')
    short = await execute('return "x" * 50')

    assert long.value_truncated is True
    assert "more characters cut" in long.text
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
        "tools.create_invoice() did not finish within its 0.05 s limit; it may still have taken effect: check before you repeat it"
    )
    assert [(call.ok, call.in_flight) for call in result.calls] == [(False, True)]
    assert posted == ["acme"]
