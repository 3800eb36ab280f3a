"""Who asked for a run (`Caller`) reaches the policy hooks, the run log, the traces and a paused run's record."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("opentelemetry.sdk")


from approval_shop import REFUND_CODE, REFUNDED, SECRET, make_shop
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from codemode import ApprovalError, Caller, CallInfo, Deny, Policy
from codemode.tracing import Tracing

if TYPE_CHECKING:
    from pathlib import Path

ALICE = Caller(subject="alice")
BOB = Caller(subject="bob")
ALICE_OF_ANOTHER_ISSUER = Caller(subject="alice", issuer="https://evil.example", claims={"sub": "alice"})


async def test_hooks_see_the_caller_and_may_deny_per_caller() -> None:
    """A `before` hook reads `CallInfo.caller`: Bob's call is refused, Alice's and a caller-less one go through."""
    shop = make_shop()

    def no_bob(call: CallInfo) -> Deny | None:
        return Deny("not bob") if call.caller == BOB else None

    code = 'return await tools.get_order(order_id="A1")'
    async with shop.code_mode(policy=Policy(before=[no_bob], secret=SECRET)) as cm:
        results = [await cm.execute(code, cm.new_state(), caller=who) for who in (ALICE, BOB, None)]
    assert [result.ok for result in results] == [True, False, True]
    assert "refused by the host's policy: not bob" in results[1].text
    assert shop.made["get_order"] == 2


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(BOB, id="another subject"),
        pytest.param(ALICE_OF_ANOTHER_ISSUER, id="the same subject of another issuer"),
        pytest.param(None, id="no caller"),
    ],
)
async def test_only_the_caller_who_started_a_paused_run_can_resume_it(other: Caller | None) -> None:
    """Resuming as anyone else raises `ApprovalError` and makes nothing; the state still holds the paused run."""
    shop = make_shop()
    async with shop.code_mode() as cm:
        state = cm.new_state()
        paused = await cm.execute(REFUND_CODE, state, caller=ALICE)
        with pytest.raises(ApprovalError):
            await cm.resume(state, approved=True, caller=other)
        refused_made = shop.made["refund"]
        resumed = await cm.resume(state, approved=True, caller=ALICE)
    assert paused.pending is not None
    assert refused_made == 0
    assert resumed.text.startswith(REFUNDED)
    assert resumed.decision is not None
    assert resumed.decision.decided_by == "alice"
    assert shop.made["refund"] == 1


async def test_the_run_log_and_the_trace_record_the_caller_and_who_decided(tmp_path: Path) -> None:
    """Each log line names the caller; the resumed run's names the decision and who made it; spans say `enduser.id`."""
    shop = make_shop()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    log = tmp_path / "runs.jsonl"
    async with shop.code_mode(log=log, tracing=Tracing(tracer_provider=provider)) as cm:
        state = cm.new_state()
        await cm.execute(REFUND_CODE, state, caller=ALICE)
        await cm.resume(state, approved=False, reason="too much", caller=ALICE)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["caller"] for line in lines] == [{"subject": "alice", "issuer": None}] * 2
    assert "decision" not in lines[0]
    assert lines[1]["decision"] == {"approved": False, "reason": "too much", "decided_by": "alice"}
    runs = [span for span in exporter.get_finished_spans() if span.name == "codemode execute"]
    assert [dict(span.attributes or {}).get("enduser.id") for span in runs] == ["alice", "alice"]
    assert (runs[1].attributes or {})["codemode.approval.decided_by"] == "alice"


async def test_without_a_caller_the_log_and_record_are_as_before(tmp_path: Path) -> None:
    """No caller: no `caller` in the log line, and a paused run resumes without one."""
    shop = make_shop()
    log = tmp_path / "runs.jsonl"
    async with shop.code_mode(log=log) as cm:
        state = cm.new_state()
        await cm.execute(REFUND_CODE, state)
        resumed = await cm.resume(state, approved=True)
    assert resumed.ok
    assert all("caller" not in json.loads(line) for line in log.read_text().splitlines())
