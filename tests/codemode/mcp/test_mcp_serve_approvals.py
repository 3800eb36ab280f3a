"""`codemode serve` and approvals: MCP elicitation where the client offers it, else a result that says how."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from approval_shop import SECRET, make_shop
from mcp import Client

from codemode import CodeMode, Policy
from codemode.mcp import build_server

CODE = 'order = await tools.get_order(order_id="A1")\nreturn await tools.refund(order_id="A1", amount=order["total"])'
DENIABLE = """
try:
    await tools.refund(order_id="A1", amount=150)
except ToolError as error:
    print(error)
"""


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


async def test_an_eliciting_client_is_asked_and_the_approved_call_is_made_in_the_same_request() -> None:
    """The client's elicitation callback sees the call; accepting makes the refund, once."""
    shop = make_shop()
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with (
        CodeMode(shop.catalog, isolation="inline", policy=Policy(secret=SECRET)) as cm,
        Client(build_server(cm), elicitation_callback=elicit, mode="legacy") as client,
    ):
        result = await client.call_tool("code", {"code": CODE})
    assert not result.is_error
    assert texts(result)[0] == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
    assert asked == ['The code wants to call refund(order_id="A1", amount=150.0). Approve it?']
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


async def test_a_declined_elicitation_denies_the_call_with_the_persons_reason() -> None:
    """Declining (with a reason) raises `ToolError` in the code, which prints it."""
    shop = make_shop()

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"approve": False, "reason": "ask finance"})

    async with (
        CodeMode(shop.catalog, isolation="inline", policy=Policy(secret=SECRET)) as cm,
        Client(build_server(cm), elicitation_callback=elicit, mode="legacy") as client,
    ):
        result = await client.call_tool("code", {"code": DENIABLE})
    assert texts(result)[0] == "tools.refund() was not approved: ask finance"
    assert shop.made["refund"] == 0


async def test_a_client_without_elicitation_gets_how_to_approve_and_a_stateless_server_resumes_from_meta() -> None:
    """An `isError` result names the call and the `_meta` to send; sending it back to a stateless server runs it."""
    shop = make_shop()
    async with (
        CodeMode(shop.catalog, isolation="inline", policy=Policy(secret=SECRET)) as cm,
        Client(build_server(cm, stateless=True)) as client,
    ):
        paused = await client.call_tool("code", {"code": CODE})
        state = paused.meta["codemode/state"]
        approval = {"id": state["approval"]["signature"][:16], "approved": True}
        assert paused.is_error
        assert texts(paused)[0].startswith(
            'The call refund(order_id="A1", amount=150.0) needs a person\'s approval and was not made.'
        )
        assert f'"id": "{approval["id"]}"' in texts(paused)[0]
        forged = {**state, "approval": {**state["approval"], "signature": "0" * 64}}
        refused = await client.call_tool(
            "code", {"code": CODE}, meta={"codemode/state": forged, "codemode/approval": approval}
        )
        done = await client.call_tool(
            "code", {"code": CODE}, meta={"codemode/state": state, "codemode/approval": approval}
        )
    assert refused.is_error
    assert texts(refused)[0] == snapshot_refused()
    assert not done.is_error
    assert texts(done)[0] == 'Returned: {\n "order_id": "A1",\n "refunded": 150.0\n}'
    assert shop.made == {"get_order": 1, "get_order:A1": 1, "refund": 1}


def snapshot_refused() -> str:
    return (
        'The decision names no call waiting in this conversation: send the `_meta["codemode/state"]` of the '
        "result that asked for approval, with its id."
    )
