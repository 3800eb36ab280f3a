"""The approval flow through `CodeMode`: pause at a call that needs approval, resume by replaying a signed record."""

# Snapshots hold the messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio
import pytest
from approval_shop import SECRET, make_shop
from inline_snapshot import snapshot

from codemode import ApprovalError, CodeMode, DiscoveryState, Limits, Policy, ToolCall

if TYPE_CHECKING:
    from codemode.policy import CallInfo

REFUND = """
order = await tools.get_order(order_id="A1")
result = await tools.refund(order_id="A1", amount=order["total"])
print("refunded", result["refunded"])
return result
"""


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_refund_over_the_limit_pauses_and_runs_once_approved(isolation: Literal["inline", "process"]) -> None:
    """The run stops before the refund with the earlier call's result as data; approving makes only the refund."""
    shop = make_shop()
    async with shop.code_mode(isolation=isolation) as cm:
        state = cm.new_state()
        paused = await cm.execute(REFUND, state)
        assert paused.pending is not None
        assert not paused.ok
        assert (paused.pending.tool, paused.pending.arguments, paused.pending.reason) == (
            "refund",
            {"order_id": "A1", "amount": 150.0},
            None,
        )
        assert paused.pending.calls == (
            ToolCall(
                name="get_order",
                arguments={"order_id": "A1"},
                duration=0.0,
                ok=True,
                result={"order_id": "A1", "total": 150.0, "email": "a1@example.com"},
            ),
        )
        assert paused.text == snapshot(
            "Paused: `tools.refund(...)` needs a person's approval, so the run stopped before making it; the 1 call made before it will not be made again. The run continues from there once someone decides."
        )
        assert shop.made == {"get_order": 1, "get_order:A1": 1}
        assert cm.pending(state) == paused.pending

        done = await cm.resume(state, approved=True)

    assert done.ok, done.text
    assert done.text == snapshot('refunded 150.0\nReturned: {\n "order_id": "A1",\n "refunded": 150.0\n}')
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}
    assert [(call.name, call.replayed) for call in done.calls] == [("get_order", True), ("refund", False)]
    assert state.approval is None


async def test_the_state_names_the_waiting_call_by_the_id_a_decision_must_carry() -> None:
    """`approval_id` is the pending call's id and `paused_code` its run's code while it waits, then both None."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        state = cm.new_state()
        assert state.approval_id is None
        paused = await cm.execute(REFUND, state)
        assert paused.pending is not None
        assert state.approval is not None
        assert state.approval_id == paused.pending.id == str(state.approval["signature"])[:16]
        assert DiscoveryState.from_json(json.loads(json.dumps(state.to_json()))).approval_id == paused.pending.id
        assert state.paused_code == REFUND
        await cm.resume(state, approved=False)
    assert state.approval_id is None
    assert state.paused_code is None


async def test_a_denied_refund_raises_tool_error_with_the_reason_and_the_code_carries_on() -> None:
    """Denied, the refund raises `ToolError` in the code, which handles it; the handler never runs."""
    shop = make_shop()
    code = """
order = await tools.get_order(order_id="A1")
try:
    await tools.refund(order_id="A1", amount=order["total"])
except ToolError as error:
    print("not refunded:", error)
    await tools.log(note="refund refused")
return "done"
"""
    async with shop.code_mode() as cm:
        state = cm.new_state()
        assert (await cm.execute(code, state)).pending is not None
        done = await cm.resume(state, approved=False, reason="over the monthly budget")

    assert done.ok, done.text
    assert done.text == snapshot(
        'not refunded: tools.refund() was not approved: over the monthly budget\nReturned: "done"'
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "log": 1}


async def test_a_run_that_needs_two_approvals_pauses_twice_and_replays_the_first_decision() -> None:
    """After one approval, a second call needing approval pauses again; resuming it replays the approved refund."""
    shop = make_shop()
    code = """
await tools.refund(order_id="A1", amount=150)
await tools.delete_order(order_id="A1")
return "gone"
"""
    async with shop.code_mode() as cm:
        state = cm.new_state()
        first = await cm.execute(code, state)
        second = await cm.resume(state, approved=True)
        assert first.pending is not None
        assert second.pending is not None
        assert second.pending.tool == "delete_order"
        assert [call.name for call in second.pending.calls] == ["refund"]
        done = await cm.resume(state, approved=True)

    assert done.text == 'Returned: "gone"'
    assert shop.made == {"refund": 1, "delete_order": 1}


async def test_a_run_approved_in_another_process_replays_the_calls_made_before_the_restart(tmp_path: Path) -> None:
    """A child process pauses and exits; this process resumes from the state JSON with the same key."""
    shop_dir = Path(__file__).parent
    script = tmp_path / "pause.py"
    script.write_text(
        textwrap.dedent(f"""
        import json, sys
        import anyio
        sys.path.insert(0, {str(shop_dir)!r})
        from approval_shop import make_shop

        async def main():
            shop = make_shop()
            async with shop.code_mode() as cm:
                state = cm.new_state()
                result = await cm.execute({REFUND!r}, state)
            print(json.dumps({{"state": state.to_json(), "made": dict(shop.made)}}))

        anyio.run(main)
        """)
    )
    child = await anyio.run_process([sys.executable, str(script)], check=True)
    saved = json.loads(child.stdout)
    assert saved["made"] == {"get_order": 1, "get_order:A1": 1}

    shop = make_shop()
    async with shop.code_mode() as cm:
        done = await cm.resume(DiscoveryState.from_json(saved["state"]), approved=True)
    assert shop.made == {"refund": 1}
    assert done.text == 'refunded 150.0\nReturned: {\n "order_id": "A1",\n "refunded": 150.0\n}'


@pytest.mark.parametrize("edit", ["result", "arguments", "code", "signature"])
async def test_an_edited_approval_record_is_refused_and_nothing_runs(edit: str) -> None:
    """Changing a recorded result, argument, the code or the signature makes `resume` raise `ApprovalError`."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        state = cm.new_state()
        await cm.execute(REFUND, state)
        forged = json.loads(json.dumps(state.to_json()))
        record = forged["approval"]["record"]
        if edit == "result":
            record["calls"][0]["result"]["total"] = 15000.0
        elif edit == "arguments":
            record["calls"][1]["arguments"]["amount"] = 15000.0
        elif edit == "code":
            record["code"] = record["code"].replace("A1", "B2")
        else:
            forged["approval"]["signature"] = "0" * 64
        with pytest.raises(ApprovalError):
            await cm.resume(DiscoveryState.from_json(forged), approved=True)
    assert shop.made == {"get_order": 1, "get_order:A1": 1}


async def test_a_record_signed_with_another_key_is_refused() -> None:
    """A process with a different `Policy(secret=...)` cannot resume (nor read) the pending call."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        state = cm.new_state()
        await cm.execute(REFUND, state)
    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(secret=b"another key")) as other:
        with pytest.raises(ApprovalError):
            other.pending(state)
        with pytest.raises(ApprovalError):
            await other.resume(state, approved=True)
    assert shop.made["refund"] == 0


async def test_resuming_a_state_with_nothing_pending_raises() -> None:
    """`resume` on a state without a pending approval is the host's mistake: it raises `ApprovalError`."""
    async with CodeMode(make_shop().catalog, isolation="inline") as cm:
        with pytest.raises(ApprovalError):
            await cm.resume(cm.new_state(), approved=True)


async def test_a_replay_that_asks_for_other_arguments_stops_and_calls_nothing_new() -> None:
    """Code that reads a clock the sandbox does not fix asks for different arguments on replay: refused."""
    shop = make_shop()
    code = """
import time
await tools.log(note=f"started at {time.perf_counter_ns()}")
await tools.refund(order_id="A1", amount=150)
"""
    async with shop.code_mode() as cm:
        state = cm.new_state()
        await cm.execute(code, state)
        diverged = await cm.resume(state, approved=True)

    assert not diverged.ok
    assert diverged.pending is None
    assert diverged.run.error is not None
    message = diverged.run.error.message
    assert message.startswith('the resumed run went off its record: call 1 was tools.log(note="started at ')
    assert message.endswith(
        "Nothing more was called. A resumed run must make the same calls in the same order; run the code again to start over"
    )
    assert shop.made == {"log": 1}
    assert state.approval is None


async def test_random_ids_and_the_date_replay_identically_so_the_approved_call_matches() -> None:
    """`uuid4`, `random` and `datetime.now()` give the same values on replay, so arguments built from them match."""
    shop = make_shop()
    code = """
import datetime, random, uuid
note = f"{uuid.uuid4()} {random.randint(1, 10**9)} {datetime.datetime.now().isoformat()}"
await tools.log(note=note)
await tools.refund(order_id=note, amount=150)
return note
"""
    async with shop.code_mode(isolation="process") as cm:
        state = cm.new_state()
        paused = await cm.execute(code, state)
        done = await cm.resume(state, approved=True)
    assert paused.pending is not None
    assert done.ok, done.text
    assert done.run.value == paused.pending.arguments["order_id"]
    assert shop.made == {"log": 1, "refund": 1}


async def test_calls_in_flight_beside_the_paused_one_finish_are_recorded_and_not_repeated() -> None:
    """In a gather, a lookup in flight when the refund pauses completes and is replayed; a later one runs on resume."""
    shop = make_shop()
    refund_seen = anyio.Event()
    lookups: list[str] = []

    @shop.catalog.tool
    async def lookup(order_id: str) -> str:
        """Look an order up slowly."""
        lookups.append(order_id)
        if order_id == "A1":
            await refund_seen.wait()  # still in flight when the refund asks for approval
        return f"found {order_id}"

    def watch(call: CallInfo) -> None:
        if call.tool == "refund":
            refund_seen.set()

    code = """
import asyncio
found, refunded, later = await asyncio.gather(
    tools.lookup(order_id="A1"),
    tools.refund(order_id="A1", amount=150),
    tools.lookup(order_id="B2"),
)
return [found, refunded["refunded"], later]
"""
    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(before=[watch], secret=SECRET)) as cm:
        state = cm.new_state()
        paused = await cm.execute(code, state)
        assert paused.pending is not None
        assert [(call.name, call.result) for call in paused.pending.calls] == [("lookup", "found A1")]
        assert lookups == ["A1"]
        done = await cm.resume(state, approved=True)

    assert done.run.value == ["found A1", 150, "found B2"]
    assert lookups == ["A1", "B2"]
    assert shop.made == {"refund": 1}


async def test_a_small_refund_runs_without_approval_and_a_large_one_pauses() -> None:
    """The approval rule reads the validated arguments: 50 goes through, 500 waits for a person."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        small = await cm.execute('return await tools.refund(order_id="A1", amount=50)', cm.new_state())
        large = await cm.execute('return await tools.refund(order_id="A1", amount=500)', cm.new_state())
    assert small.ok
    assert small.pending is None
    assert small.run.value == {"order_id": "A1", "refunded": 50}
    assert large.pending is not None
    assert large.pending.arguments == {"order_id": "A1", "amount": 500}
    assert shop.made == {"refund": 1}


async def test_a_resume_that_times_out_while_replaying_reports_the_timeout_and_makes_no_call() -> None:
    """A resumed run that runs out of time before it reaches the approved call stops with `timeout`."""
    shop = make_shop()
    code = """
import asyncio
order = await tools.get_order(order_id="A1")
await asyncio.sleep(0.3)
await tools.refund(order_id="A1", amount=order["total"])
"""
    async with shop.code_mode() as cm:
        state = cm.new_state()
        await cm.execute(code, state)
    async with shop.code_mode(limits=Limits(timeout=0.1)) as hurried:
        timed_out = await hurried.resume(state, approved=True)

    assert timed_out.run.error is not None
    assert timed_out.run.error.kind == "timeout"
    assert timed_out.text == snapshot(
        """\
Error: the code ran past its 0.1 s time limit waiting on tools or sleeps; do less per run, or split the work over several runs
Tool calls before the run stopped: 1 completed (1 ok, 0 failed):
  ok     get_order(order_id="A1")
(the resumed run stopped before it reached `tools.refund(...)`, which was not made)\
"""
    )
    assert shop.made == {"get_order": 1, "get_order:A1": 1}
    assert state.approval is None


async def test_a_paused_run_with_kept_variables_resumes_from_the_variables_it_started_with() -> None:
    """With `persist_variables`, the replay starts from the variables of the paused run, and keeps its own after."""
    shop = make_shop()
    cm = shop.code_mode(persist_variables=True)
    async with cm:
        state = cm.new_state()
        await cm.execute("amount = 150", state)
        paused = await cm.execute('amount = amount + 1\nawait tools.refund(order_id="A1", amount=amount)', state)
        assert paused.pending is not None
        assert state.variables == {"amount": 150}
        done = await cm.resume(state, approved=True)
    assert done.ok, done.text
    assert state.variables == {"amount": 151}
    assert shop.made == {"refund": 1}


async def test_the_tools_a_paused_run_found_are_announced_by_the_run_that_finishes() -> None:
    """The model never reads a paused run, so its discoveries are announced once, with the resumed run's result."""
    shop = make_shop()
    code = 'found = await tools.search("refund an order")\nreturn await tools.refund(order_id="A1", amount=150.0)'
    async with shop.code_mode() as cm:
        state = cm.new_state()
        paused = await cm.execute(code, state)
        assert paused.pending is not None
        assert (paused.announcement, bool(paused.announced), dict(state.announced)) == (None, False, {})

        done = await cm.resume(state, approved=True)
        assert done.ok
        assert done.announcement is not None
        assert "def refund(" in done.announcement
        assert "refund" in state.announced
