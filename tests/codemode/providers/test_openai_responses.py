"""The OpenAI Responses wire format and `OpenAIResponsesModel`, through the official SDK against a fake server."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

pytest.importorskip("openai")

import openai
from inline_snapshot import snapshot
from provider_fakes import (
    ANNOUNCEMENT,
    OUTCOMES,
    SYSTEM,
    TOOL,
    Conversation,
    FakeServer,
    placed_run,
    sse,
)

from codemode.providers.base import CodeCall, Usage
from codemode.providers.openai_responses import OpenAIResponsesModel, OpenAIResponsesWire, read_usage

PROVIDER = "openai-responses"


async def test_every_request_of_a_long_conversation_sends_the_instructions_and_stores_nothing(
    run: tuple[Conversation, FakeServer],
) -> None:
    """Every request has the instructions and `store: false`; the reasoning items are kept in the history."""
    conversation, server = run
    assert {body["instructions"] for body in server.bodies} == {SYSTEM}
    assert all(body["store"] is False for body in server.bodies)
    reasoning = [item for item in conversation.messages if item.get("type") == "reasoning"]
    assert reasoning[0] == {"type": "reasoning", "id": "rs_00", "summary": []}


async def test_a_validation_error_and_a_tool_exception_reach_the_model_as_function_call_outputs(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The request after a failing run carries its message in the `function_call_output` item."""
    _, server = run
    for request, expected in ((3, "argument `city`: 5 is not of type 'string'"), (7, "contact c-42 is locked")):
        result = next(i for i in reversed(server.bodies[request]["input"]) if i.get("type") == "function_call_output")
        assert expected in result["output"]


def test_usage_normalisation_matches_the_documented_fields() -> None:
    """`input_tokens` includes `input_tokens_details.cached_tokens`; absent details mean no cache read."""
    documented = {
        "input_tokens": 5240,
        "input_tokens_details": {"cached_tokens": 4992},
        "output_tokens": 873,
        "output_tokens_details": {"reasoning_tokens": 512},
        "total_tokens": 6113,
    }
    assert read_usage(documented) == Usage(cache_read_tokens=4992, uncached_input_tokens=248, output_tokens=873)
    assert read_usage({"input_tokens": 9, "output_tokens": 1}) == Usage(uncached_input_tokens=9, output_tokens=1)
    assert read_usage(None) == Usage()


def test_results_place_announcements_in_a_user_item_the_output_or_a_developer_item() -> None:
    """`user` and `system` (as `developer`) append one message item after the outputs; `tool_result` nests it."""
    wire = OpenAIResponsesWire()
    outcomes = list(OUTCOMES)
    assert wire.results(outcomes, "user") == snapshot(
        [
            {"type": "function_call_output", "call_id": "call_1", "output": "found 1 tool"},
            {"type": "function_call_output", "call_id": "call_2", "output": "Error: boom"},
            {
                "role": "user",
                "content": """\
<tools-discovered>
# new tool: get_weather [17a110ed48b9]
async def get_weather(): ...
</tools-discovered>\
""",
            },
        ]
    )
    assert wire.results(outcomes, "system")[-1] == {"role": "developer", "content": ANNOUNCEMENT}
    assert wire.results(outcomes, "tool_result") == snapshot(
        [
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": """\
found 1 tool

<tools-discovered>
# new tool: get_weather [17a110ed48b9]
async def get_weather(): ...
</tools-discovered>\
""",
            },
            {"type": "function_call_output", "call_id": "call_2", "output": "Error: boom"},
        ]
    )


@pytest.mark.parametrize("placement", ["user", "tool_result", "system"])
async def test_every_placement_keeps_the_prefix_property_and_rebuilds_the_state(placement: Any) -> None:
    """Whatever the placement, the conversation stays prefix-stable and its history holds the state."""
    conversation = await placed_run(PROVIDER, placement)
    kinds = [item.get("role") or item["type"] for item in conversation.messages[:6]]
    expected = {"user": "user", "system": "developer", "tool_result": "reasoning"}[placement]
    assert kinds == ["user", "reasoning", "assistant", "function_call", "function_call_output", expected]


def test_the_request_sends_instructions_the_whole_input_and_store_false() -> None:
    """`tools()` and `request()` build the Responses body; encrypted reasoning is asked for on demand."""
    wire = OpenAIResponsesWire()
    body = wire.request(
        model="gpt-x", system="Be brief.", messages=wire.user_message("hi"), tools=wire.tools(TOOL), max_tokens=64
    )
    assert body == snapshot(
        {
            "model": "gpt-x",
            "max_output_tokens": 64,
            "store": False,
            "instructions": "Be brief.",
            "tools": [
                {
                    "type": "function",
                    "name": "code",
                    "description": "Run Python.",
                    "parameters": {"type": "object"},
                    "strict": False,
                }
            ],
            "input": [{"role": "user", "content": "hi"}],
        }
    )
    reasoning = OpenAIResponsesWire(encrypted_reasoning=True).request(
        model="o", system="", messages=[], tools=[], max_tokens=8
    )
    assert reasoning["include"] == ["reasoning.encrypted_content"]
    assert "instructions" not in reasoning


def test_read_turns_bad_json_and_other_tools_into_calls_with_errors() -> None:
    """Unparsable arguments or another tool's name come back as an error result; all items are kept."""
    response = {
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA", "status": None},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "code", "arguments": '{"code": "x'},
            {"type": "function_call", "id": "fc_2", "call_id": "c2", "name": "shell", "arguments": "{}"},
            {"type": "function_call", "id": "fc_3", "call_id": "c3", "name": "code", "arguments": '{"src": 1}'},
            {"type": "function_call", "id": "fc_4", "call_id": "c4", "name": "code", "arguments": '{"code": "1"}'},
        ],
    }
    turn = OpenAIResponsesWire().read(response)
    assert turn.calls == snapshot(
        (
            CodeCall(
                id="c1",
                code="",
                error='The arguments are not valid JSON (Unterminated string starting at); send `{"code": ...}`.',
            ),
            CodeCall(id="c2", code="", error="Unknown tool 'shell': the only tool is `code`."),
            CodeCall(id="c3", code="", error='The `code` tool takes `{"code": "<python source>"}`.'),
            CodeCall(id="c4", code="1"),
        )
    )
    assert turn.messages[0] == {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    assert len(turn.messages) == 5
    assert turn.text == ""


@pytest.mark.parametrize(
    "events",
    [
        [{"type": "response.created", "response": {"id": "r", "output": []}}],
        [{"type": "error", "code": "server_error", "message": "boom", "param": None}],
        [
            {
                "type": "response.failed",
                "response": {
                    "id": "r",
                    "status": "failed",
                    "output": [],
                    "error": {"code": "server_error", "message": "boom"},
                },
            }
        ],
    ],
    ids=["cut", "error-event", "failed"],
)
async def test_a_stream_that_fails_or_ends_early_raises_the_sdks_api_error(events: list[dict[str, Any]]) -> None:
    """A failed response or a stream cut before `response.completed` is an `openai.APIError`, not an answer."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        numbered = [(event["type"], {**event, "sequence_number": n}) for n, event in enumerate(events)]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(numbered))

    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    client = openai.AsyncOpenAI(api_key="test", base_url="http://test/v1", http_client=http_client, max_retries=0)
    wire = OpenAIResponsesWire()
    request = wire.request(model="m", system="S", messages=wire.user_message("hi"), tools=[], max_tokens=8)
    with pytest.raises(openai.APIError):
        await OpenAIResponsesModel(client=client).complete(request)
