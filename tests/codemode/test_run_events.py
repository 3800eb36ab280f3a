"""Progress while a run goes on (`on_event`), and the run log a person reads afterwards (`log=`, `log_line`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio
from approval_shop import SECRET, make_shop
from dirty_equals import IsFloat, IsStr
from watched_tools import watched_catalog

from codemode import CodeMode, Policy
from codemode.events import CallFinished, CallHeld, CallStarted, RunEvent
from codemode.runlog import RunLog
from sandbox import Limits

if TYPE_CHECKING:
    from pathlib import Path


async def test_each_call_reports_its_start_and_its_end_with_the_runs_own_record() -> None:
    """Starts come as calls begin; each end carries the very `ToolCall` that `ExecuteResult.calls` holds."""
    events: list[RunEvent] = []
    code = (
        'await tools.get_weather(city="Oslo")\ntry:\n    await tools.charge_card(amount=3)\nexcept ToolError:\n    pass'
    )
    async with CodeMode(watched_catalog(), isolation="inline") as cm:
        result = await cm.execute(code, cm.new_state(), on_event=events.append)
    assert [(type(e).__name__, e.index) for e in events] == [
        ("CallStarted", 1),
        ("CallFinished", 1),
        ("CallStarted", 2),
        ("CallFinished", 2),
    ]
    started = events[0]
    assert isinstance(started, CallStarted)
    assert (started.name, started.arguments) == ("get_weather", {"city": "Oslo"})
    finished = [e.call for e in events if isinstance(e, CallFinished)]
    assert finished[0] is result.calls[0]
    assert finished[1] is result.calls[1]
    assert (finished[1].ok, finished[1].error) == (False, "ValueError: card declined")


async def test_events_arrive_while_the_run_is_still_going() -> None:
    """A start is seen before the call ends: the test opens the gate only once it has seen the start."""
    gate = anyio.Event()
    events: list[RunEvent] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if isinstance(event, CallStarted) and event.name == "wait_for_gate":
            gate.set()

    async with CodeMode(watched_catalog(gate), isolation="process") as cm:
        result = await cm.execute("return await tools.wait_for_gate()", cm.new_state(), on_event=on_event)
    assert result.text == 'Returned: "through"'
    assert [type(e).__name__ for e in events] == ["CallStarted", "CallFinished"]


async def test_a_call_in_flight_when_the_run_stops_ends_with_its_in_flight_record() -> None:
    """A timeout cuts a call off: its end event still comes, marked in flight, as in `ExecuteResult.calls`."""
    events: list[RunEvent] = []
    async with CodeMode(watched_catalog(), isolation="inline", limits=Limits(timeout=0.5)) as cm:
        result = await cm.execute("await tools.wait_for_gate()", cm.new_state(), on_event=events.append)
    end = events[-1]
    assert isinstance(end, CallFinished)
    assert end.call is result.calls[0]
    assert end.call.in_flight


async def test_a_failing_event_callback_never_reaches_the_models_run() -> None:
    """The host's callback raising is logged; the run goes on as if nothing happened."""

    def broken(event: RunEvent) -> None:
        raise RuntimeError("display broke")

    async with CodeMode(watched_catalog(), isolation="inline") as cm:
        result = await cm.execute('return await tools.get_weather(city="Oslo")', cm.new_state(), on_event=broken)
    assert result.text == 'Returned: {\n "city": "Oslo",\n "celsius": 21\n}'


async def test_the_run_log_has_one_readable_json_line_per_execute(tmp_path: Path) -> None:
    """`log=` appends the code, each call with arguments, duration and outcome, the error and the output sizes."""
    path = tmp_path / "runs.jsonl"
    code = 'w = await tools.get_weather(city="Oslo")\nprint(w["city"])\nawait tools.charge_card(amount=3)'
    async with CodeMode(watched_catalog(), isolation="inline", log=path) as cm:
        state = cm.new_state()
        first = await cm.execute(code, state)
        await cm.execute("return 1", state)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0]) == {
        "time": IsStr(regex=r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"),
        "ok": False,
        "duration": IsFloat(ge=0),
        "code": code,
        "calls": [
            {
                "name": "get_weather",
                "arguments": {"city": "Oslo"},
                "duration": IsFloat(ge=0),
                "ok": True,
                "error": None,
                "in_flight": False,
            },
            {
                "name": "charge_card",
                "arguments": {"amount": 3},
                "duration": IsFloat(ge=0),
                "ok": False,
                "error": "ValueError: card declined",
                "in_flight": False,
            },
        ],
        "error": {"kind": "runtime", "message": "ToolError: ValueError: card declined (line 3)", "line": 3},
        "output": {"stdout_chars": 5, "value_bytes": 0, "text_chars": len(first.text)},
        "announced": ["get_weather", "charge_card"],
    }
    assert json.loads(lines[1])["output"] == {"stdout_chars": 0, "value_bytes": 1, "text_chars": 11}
    assert json.loads(first.log_line()) == {key: value for key, value in json.loads(lines[0]).items() if key != "time"}


async def test_the_run_log_lists_the_variables_kept_with_persistence_on(tmp_path: Path) -> None:
    """With persistence on, each line names the variables the run left for the next (not their values)."""
    log = RunLog(tmp_path / "runs.jsonl")
    async with CodeMode(watched_catalog(), isolation="inline", log=log, persist_variables=True) as cm:
        await cm.execute("rows = [1, 2]\ntotal = 3", cm.new_state())
    assert json.loads((tmp_path / "runs.jsonl").read_text(encoding="utf-8"))["variables"] == ["rows", "total"]


async def test_watching_a_run_leaves_the_helpers_as_they_are_and_reports_only_tool_calls() -> None:
    """With `on_event`, `dir(tools)`, `tools.list()` and `tools.describe()` answer as without; none is a call."""
    code = "names = dir(tools)\npage = await tools.list()\nstub = await tools.describe('get_weather')\nreturn names"
    async with CodeMode(watched_catalog(), isolation="inline") as cm:
        plain = await cm.execute(code, cm.new_state())
        events: list[RunEvent] = []
        watched = await cm.execute(code, cm.new_state(), on_event=events.append)
    assert watched.text == plain.text
    assert "get_weather" in plain.text
    assert events == []


async def test_a_call_held_for_approval_ends_as_held_and_its_resumed_run_reports_the_replay() -> None:
    """The paused run's call that waits for a person ends with `CallHeld`; the resumed run reports both calls."""
    shop = make_shop()
    code = (
        'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
    )
    async with CodeMode(shop.catalog, isolation="inline", policy=Policy(secret=SECRET)) as cm:
        state = cm.new_state()
        paused_events: list[RunEvent] = []
        paused = await cm.execute(code, state, on_event=paused_events.append)
        resumed_events: list[RunEvent] = []
        done = await cm.resume(state, approved=True, on_event=resumed_events.append)
    assert paused.pending is not None
    assert [type(e).__name__ for e in paused_events] == ["CallStarted", "CallFinished", "CallStarted", "CallHeld"]
    held = paused_events[-1]
    assert isinstance(held, CallHeld)
    assert (held.index, held.name, held.arguments) == (2, "refund", {"order_id": "A1", "amount": 150.0})
    finished = [e.call for e in resumed_events if isinstance(e, CallFinished)]
    assert finished == list(done.calls)
    assert [(call.name, call.replayed) for call in finished] == [("get_order", True), ("refund", False)]
