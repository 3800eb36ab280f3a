"""`codemode serve` and approvals: MCP elicitation where the client offers it, else a result that says how."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp.client")

import mcp_types as types
from approval_shop import REFUND_CODE, REFUNDED, make_shop
from mcp import Client

from codemode.mcp import build_server

DENIABLE = """
try:
    await tools.refund(order_id="A1", amount=150)
except ToolError as error:
    print(error)
"""


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


@pytest.mark.parametrize(
    ("mode", "stateless"),
    [
        pytest.param("legacy", False, id="legacy: asked over the session, in the same request"),
        pytest.param("2026-07-28", True, id="2026-07-28: asked through an InputRequiredResult, stateless"),
    ],
)
async def test_an_eliciting_client_is_asked_and_the_approved_call_is_made_once(mode: str, stateless: bool) -> None:
    """The client's elicitation callback sees the call; accepting makes the refund, once, on either protocol."""
    shop = make_shop()
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with (
        shop.code_mode() as cm,
        Client(build_server(cm, stateless=stateless), elicitation_callback=elicit, mode=mode) as client,
    ):
        result = await client.call_tool("code", {"code": REFUND_CODE})
    assert not result.is_error
    assert texts(result)[0] == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
    assert "# new tool: refund [" in texts(result)[1]  # the resumed run announces what the paused one found
    assert asked == ['The code wants to call refund(order_id="A1", amount=150.0). Approve it?']
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


@pytest.mark.parametrize(
    ("mode", "action"),
    [
        pytest.param("legacy", "accept", id="legacy: the form accepted with approve unticked"),
        pytest.param("2026-07-28", "decline", id="2026-07-28: the form declined in the input-required round"),
    ],
)
async def test_a_person_who_says_no_denies_the_call_and_the_code_handles_it(mode: str, action: str) -> None:
    """Saying no (with a reason) raises `ToolError` in the code, which prints it; the refund is never made."""
    shop = make_shop()

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action=action, content={"approve": False, "reason": "ask finance"})

    async with (
        shop.code_mode() as cm,
        Client(build_server(cm), elicitation_callback=elicit, mode=mode) as client,
    ):
        result = await client.call_tool("code", {"code": DENIABLE})
    assert texts(result)[0] == "tools.refund() was not approved: ask finance"
    assert shop.made["refund"] == 0


async def test_a_client_without_elicitation_gets_how_to_approve_and_a_stateless_server_resumes_from_meta() -> None:
    """An `isError` result names the call and the `_meta` to send; sending it back to a stateless server runs it."""
    shop = make_shop()
    async with (
        shop.code_mode() as cm,
        Client(build_server(cm, stateless=True)) as client,
    ):
        paused = await client.call_tool("code", {"code": REFUND_CODE})
        state = paused.meta["codemode/state"]
        approval = {"id": state["approval"]["signature"][:16], "approved": True}
        assert paused.is_error
        assert texts(paused)[0].startswith("Paused: `tools.refund(...)` needs a person's approval")
        assert f'"id": "{approval["id"]}"' in texts(paused)[0]
        forged = {**state, "approval": {**state["approval"], "signature": "0" * 64}}
        refused = await client.call_tool(
            "code", {"code": REFUND_CODE}, meta={"codemode/state": forged, "codemode/approval": approval}
        )
        done = await client.call_tool(
            "code", {"code": REFUND_CODE}, meta={"codemode/state": state, "codemode/approval": approval}
        )
    assert refused.is_error
    assert texts(refused)[0] == snapshot_refused()
    assert not done.is_error
    assert texts(done)[0] == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_client_without_elicitation_reads_the_output_and_the_calls_already_made() -> None:
    """The paused result keeps what the run printed, says which calls took effect, and tells the model to ask the
    user, not to send `_meta` (a model cannot); the application resuming with `_meta` repeats nothing."""
    shop = make_shop()
    code = (
        'order = await tools.get_order(order_id="A1")\nprint("total", order["total"])\n'
        'return await tools.refund(order_id="A1", amount=order["total"])'
    )
    async with shop.code_mode() as cm, Client(build_server(cm)) as client:
        paused = await client.call_tool("code", {"code": code})
        state = paused.meta["codemode/state"]
        approval = {"id": state["approval"]["signature"][:16], "approved": True}
        done = await client.call_tool(
            "code", {"code": code}, meta={"codemode/state": state, "codemode/approval": approval}
        )
    assert paused.is_error
    assert texts(paused)[0] == (
        "total 150.0\n"
        "Paused: `tools.refund(...)` needs a person's approval, so the run stopped before making it; the 1 call "
        "made before it will not be made again. The run continues from there once someone decides.\n"
        "These calls were already made and took effect; resuming does not make them again, but new code would "
        "make them a second time:\n"
        '  ok     get_order(order_id="A1")\n'
        'refund(order_id="A1", amount=150.0) needs a person\'s approval, and this client cannot ask one (it has no '
        "MCP elicitation), so you cannot make this call from here: tell the user it waits for their approval, and "
        "do not run it again with new code (that pauses again, or repeats the calls above). (For the application, "
        "not the model: it approves by calling `code` again with the same code, this result's "
        f'`_meta["codemode/state"]`, and `_meta["codemode/approval"] = {{"id": "{approval["id"]}", "approved": '
        'true}`, or `"approved": false` with a `"reason"`.)'
    )
    assert texts(done)[0] == "total 150.0\n" + REFUNDED
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


def snapshot_refused() -> str:
    return (
        'The decision names no call waiting in this conversation: send the `_meta["codemode/state"]` of the '
        "result that asked for approval, with its id."
    )


async def test_an_input_required_retry_is_served_by_another_replica_and_an_edited_request_state_is_refused() -> None:
    """The `requestState` carries the signed record: a second server resumes it; an edited record calls nothing."""
    first, second = make_shop(), make_shop()
    approve = {"codemode/approval": types.ElicitResult(action="accept", content={"approve": True})}
    async with (
        first.code_mode() as cm_a,
        second.code_mode() as cm_b,
        Client(build_server(cm_a, stateless=True), elicitation_callback=never, mode="2026-07-28") as replica_a,
        Client(build_server(cm_b, stateless=True), mode="2026-07-28") as replica_b,
    ):
        paused = await replica_a.session.call_tool("code", {"code": REFUND_CODE}, allow_input_required=True)
        assert isinstance(paused, types.InputRequiredResult)
        assert paused.request_state is not None
        state = json.loads(paused.request_state)
        state["approval"]["record"]["calls"][0]["result"]["total"] = 1.0
        edited = await replica_b.session.call_tool(
            "code", {"code": REFUND_CODE}, input_responses=approve, request_state=json.dumps(state)
        )
        done = await replica_b.session.call_tool(
            "code", {"code": REFUND_CODE}, input_responses=approve, request_state=paused.request_state
        )
    assert edited.is_error
    assert texts(edited)[0].startswith("the approval record's signature does not match")
    assert texts(done)[0] == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
    assert first.made == {"get_order": 1, "get_order:A1": 1}
    assert second.made == {"refund": 1}


async def never(context: Any, params: Any) -> types.ElicitResult:
    """An elicitation callback (so the client declares the capability) that a test drives by hand instead."""
    raise AssertionError("the test answers the input request itself")
