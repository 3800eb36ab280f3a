"""Tool-call policy through `CodeMode`: hooks that deny, redact and audit, and per-tool limits."""

# Snapshots hold the messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
from __future__ import annotations

import threading
import time

import anyio
import pytest
from approval_shop import SECRET, make_shop
from inline_snapshot import snapshot

from codemode import (
    CallInfo,
    CallOutcome,
    Catalog,
    CodeMode,
    Deny,
    Policy,
    ReplaceResult,
    RequireApproval,
    ToolLimits,
)


async def test_a_before_hook_that_denies_gives_the_code_its_reason_and_the_handler_never_runs() -> None:
    """`Deny(reason)` fails the call with a `ToolError` naming the reason; the code can carry on."""
    shop = make_shop()

    def no_deletes(call: CallInfo) -> Deny | None:
        return Deny("orders are never deleted; archive them instead") if call.tool == "delete_order" else None

    code = """
try:
    await tools.delete_order(order_id="A1")
except ToolError as error:
    print(error)
return await tools.get_order(order_id="A1")
"""
    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(before=[no_deletes])) as cm:
        result = await cm.execute(code, cm.new_state())

    assert result.ok, result.text
    assert result.text.splitlines()[0] == snapshot(
        "tools.delete_order() was refused by the host's policy: orders are never deleted; archive them instead"
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1}
    assert [(call.name, call.ok) for call in result.calls] == [("delete_order", False), ("get_order", True)]


async def test_an_async_before_hook_can_require_approval_for_any_tool() -> None:
    """A hook's `RequireApproval(reason)` pauses a tool that has no rule of its own, with the reason as data."""
    shop = make_shop()

    async def big_spenders(call: CallInfo) -> RequireApproval | None:
        return RequireApproval("customer A1 is on the watch list") if call.arguments.get("order_id") == "A1" else None

    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(before=[big_spenders], secret=SECRET)) as cm:
        result = await cm.execute(
            'await tools.get_order(order_id="B2")\nawait tools.get_order(order_id="A1")', cm.new_state()
        )

    assert result.pending is not None
    assert (result.pending.tool, result.pending.reason) == ("get_order", "customer A1 is on the watch list")
    assert shop.made == {"get_order": 1, "get_order:B2": 1}


async def test_a_before_hook_that_raises_denies_the_call() -> None:
    """A broken hook fails closed: the call is not made, and the model is told the host's check failed."""
    shop = make_shop()

    def broken(call: CallInfo) -> None:
        raise KeyError("oops")

    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(before=[broken])) as cm:
        result = await cm.execute('await tools.get_order(order_id="A1")', cm.new_state())

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.get_order() was refused by the host's policy: the host's policy check failed (KeyError); the call was not made (line 1)"
    )
    assert shop.made == {}


async def test_an_after_hook_redacts_a_result_before_the_code_and_the_record_see_it() -> None:
    """`ReplaceResult` hands the code the redacted value; the approval record stores only that value."""
    shop = make_shop()

    def redact(outcome: CallOutcome) -> ReplaceResult | None:
        if isinstance(outcome.result, dict) and "email" in outcome.result:
            return ReplaceResult({**outcome.result, "email": "[redacted]"})
        return None

    code = """
order = await tools.get_order(order_id="A1")
print(order["email"])
await tools.refund(order_id="A1", amount=order["total"])
"""
    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(after=[redact], secret=SECRET)) as cm:
        state = cm.new_state()
        paused = await cm.execute(code, state)
        done = await cm.resume(state, approved=True)

    assert paused.pending is not None
    assert paused.pending.calls[0].result == {"order_id": "A1", "total": 150.0, "email": "[redacted]"}
    assert "a1@example.com" not in str(paused.announcement) + str(state.to_json())
    assert done.text.splitlines()[0] == "[redacted]"


async def test_an_after_hook_sees_every_call_once_for_audit() -> None:
    """Audit hooks see each call that ran, with its outcome and duration, and not the calls replayed on resume."""
    shop = make_shop()
    seen: list[tuple[str, bool, str | None]] = []

    def audit(outcome: CallOutcome) -> None:
        assert outcome.duration >= 0
        seen.append((outcome.call.tool, outcome.ok, outcome.error))

    code = """
await tools.get_order(order_id="A1")
await tools.refund(order_id="A1", amount=-1 if False else "lots")
"""
    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(after=[audit], secret=SECRET)) as cm:
        await cm.execute(code, cm.new_state())
        state = cm.new_state()
        await cm.execute('await tools.get_order(order_id="B2")\nawait tools.refund(order_id="B2", amount=500)', state)
        await cm.resume(state, approved=True)

    assert seen == [("get_order", True, None), ("get_order", True, None), ("refund", True, None)]


async def test_a_failing_after_hook_withholds_the_result() -> None:
    """A broken redaction fails the call rather than hand the code the unredacted result."""
    shop = make_shop()

    def broken(outcome: CallOutcome) -> None:
        raise RuntimeError("redactor down")

    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(after=[broken])) as cm:
        result = await cm.execute('return await tools.get_order(order_id="A1")', cm.new_state())

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: the host's after-call hook failed (RuntimeError); the result is withheld (line 1)"
    )


async def test_a_call_past_its_tool_timeout_fails_with_a_clear_error() -> None:
    """An async handler that outlives `ToolLimits(timeout=...)` is cancelled; the code reads that it may have acted."""
    catalog = Catalog()
    never = anyio.Event()

    @catalog.tool(limits=ToolLimits(timeout=0.05))
    async def slow_report(region: str) -> str:
        """Build a report."""
        await never.wait()
        return "report"

    async with CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute(
            'try:\n    await tools.slow_report(region="eu")\nexcept ToolError as e:\n    print(e)', cm.new_state()
        )
    assert result.text == snapshot(
        """\
tools.slow_report() did not finish within its 0.05 s limit; it may still have taken effect: check before you repeat it
The run ended with 1 tool call still in flight (given up on, never awaited, or cut off):
  in flight, may have happened: slow_report(region="eu")
Check whether the calls in flight took effect before you repeat them.\
"""
    )


async def test_a_blocking_sync_handler_past_its_timeout_is_abandoned_not_waited_for() -> None:
    """A sync handler stuck in its thread does not hold the run: the call fails at its timeout."""
    catalog = Catalog()
    release = threading.Event()

    @catalog.tool(limits=ToolLimits(timeout=0.05))
    def stuck(path: str) -> str:
        """Read a file from a slow disk."""
        release.wait(10)
        return "data"

    try:
        async with CodeMode(catalog, isolation="inline") as cm:
            result = await cm.execute('await tools.stuck(path="/x")', cm.new_state())
    finally:
        release.set()
    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.stuck() did not finish within its 0.05 s limit; it may still have taken effect: check before you repeat it (line 1)"
    )


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_calls_beyond_the_concurrency_cap_wait_for_a_slot(isolation: str) -> None:
    """With `max_concurrent=2`, eight calls in a gather all finish, never more than two at once."""
    catalog = Catalog()
    active = 0
    peak = 0

    @catalog.tool(limits=ToolLimits(max_concurrent=2))
    async def fetch(page: int) -> int:
        """Fetch a page."""
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await anyio.sleep(0.01)
        active -= 1
        return page

    code = "import asyncio\nreturn await asyncio.gather(*[tools.fetch(page=i) for i in range(8)])"
    async with CodeMode(catalog, isolation=isolation) as cm:  # type: ignore[arg-type]  # the two literals
        result = await cm.execute(code, cm.new_state())
    assert result.run.value == list(range(8))
    assert peak == 2


async def test_calls_beyond_the_rate_wait_their_turn_spaced_evenly() -> None:
    """With `rate=20` (calls per second), call k starts no sooner than k/20 s after the run began; all finish."""
    catalog = Catalog()
    starts: list[float] = []

    @catalog.tool(limits=ToolLimits(rate=20))
    async def send(to: str) -> str:
        """Send a message."""
        starts.append(time.monotonic())
        return to

    code = "import asyncio\nreturn await asyncio.gather(*[tools.send(to=f'u{i}') for i in range(4)])"
    async with CodeMode(catalog, isolation="inline") as cm:
        began = time.monotonic()
        result = await cm.execute(code, cm.new_state())
    assert result.run.value == ["u0", "u1", "u2", "u3"]
    late = [start - (began + k / 20) for k, start in enumerate(starts)]
    assert all(delay >= -0.002 for delay in late), late  # the gate's reserved slots, within the clock's resolution


def test_tool_limits_refuse_values_that_are_not_positive() -> None:
    """`ToolLimits(timeout=0)` is the host's mistake: it raises at once."""
    with pytest.raises(ValueError):
        ToolLimits(timeout=0)
    with pytest.raises(ValueError):
        ToolLimits(max_concurrent=-1)
