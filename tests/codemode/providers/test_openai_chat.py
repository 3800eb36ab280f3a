"""The OpenAI Chat Completions wire format and `OpenAIChatModel`, through the official SDK against a fake server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from inline_snapshot import snapshot
from provider_fakes import (
    OUTCOMES,
    SYSTEM,
    TOOL,
    Conversation,
    FakeServer,
    placed_run,
)

from codemode.providers.base import CodeCall, Usage
from codemode.providers.openai_chat import OpenAIChatWire, read_usage

PROVIDER = "openai-chat"


async def test_every_request_of_a_long_conversation_starts_with_the_system_message(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The system message is the first of every request; a stream asks for its usage."""
    _, server = run
    stream = bool(server.bodies[0].get("stream"))
    assert {json.dumps(body["messages"][0]) for body in server.bodies} == {
        json.dumps({"role": "system", "content": SYSTEM})
    }
    if stream:
        assert all(body["stream_options"] == {"include_usage": True} for body in server.bodies)


async def test_a_validation_error_and_a_tool_exception_reach_the_model_as_tool_messages(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The request after a failing run carries its message in the `tool` message."""
    _, server = run
    for request, expected in ((3, "argument `city`: 5 is not of type 'string'"), (7, "contact c-42 is locked")):
        result = next(m for m in reversed(server.bodies[request]["messages"]) if m["role"] == "tool")
        assert expected in result["content"]


def test_usage_normalisation_matches_the_documented_fields() -> None:
    """`prompt_tokens` includes `prompt_tokens_details.cached_tokens`; absent details mean no cache read."""
    documented = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    assert read_usage(documented) == Usage(cache_read_tokens=1920, uncached_input_tokens=86, output_tokens=300)
    assert read_usage({"prompt_tokens": 9, "completion_tokens": 1}) == Usage(uncached_input_tokens=9, output_tokens=1)
    assert read_usage(None) == Usage()


def test_results_place_announcements_in_a_user_message_the_tool_message_or_a_system_message() -> None:
    """`user` and `system` append one message after the `tool` messages; `tool_result` appends to the content."""
    wire = OpenAIChatWire()
    outcomes = list(OUTCOMES)
    assert wire.results(outcomes, "user") == snapshot(
        [
            {"role": "tool", "tool_call_id": "call_1", "content": "found 1 tool"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: boom"},
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
    assert wire.results(outcomes, "system")[-1]["role"] == "system"
    assert wire.results(outcomes, "tool_result") == snapshot(
        [
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": """\
found 1 tool

<tools-discovered>
# new tool: get_weather [17a110ed48b9]
async def get_weather(): ...
</tools-discovered>\
""",
            },
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: boom"},
        ]
    )


@pytest.mark.parametrize("placement", ["user", "tool_result", "system"])
async def test_every_placement_keeps_the_prefix_property_and_rebuilds_the_state(placement: Any) -> None:
    """Whatever the placement, the conversation stays prefix-stable and its history holds the state."""
    conversation = await placed_run(PROVIDER, placement)
    roles = [message["role"] for message in conversation.messages[:4]]
    expected = {"user": "user", "system": "system", "tool_result": "assistant"}[placement]
    assert roles == ["user", "assistant", "tool", expected]


def test_the_request_puts_the_system_prompt_first_and_the_code_tool_as_a_function() -> None:
    """`tools()` and `request()` build the Chat Completions body."""
    wire = OpenAIChatWire()
    body = wire.request(
        model="gpt-x", system="Be brief.", messages=wire.user_message("hi"), tools=wire.tools(TOOL), max_tokens=64
    )
    assert body == snapshot(
        {
            "model": "gpt-x",
            "max_completion_tokens": 64,
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "code", "description": "Run Python.", "parameters": {"type": "object"}},
                }
            ],
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        }
    )


def test_read_turns_bad_json_and_other_tools_into_calls_with_errors() -> None:
    """Unparsable arguments or another tool's name come back as an error result, not an exception."""
    response = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "code", "arguments": '{"code": "x'}},
                        {"id": "c2", "type": "function", "function": {"name": "shell", "arguments": "{}"}},
                        {"id": "c3", "type": "function", "function": {"name": "code", "arguments": '{"src": 1}'}},
                        {"id": "c4", "type": "function", "function": {"name": "code", "arguments": '{"code": "1"}'}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    turn = OpenAIChatWire().read(response)
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
    assert turn.messages[0]["content"] is None
    assert turn.text == ""


def test_a_refusal_is_the_turns_text_and_is_kept_in_the_history() -> None:
    """A refusal reads as the final text; the assistant message sent back keeps it."""
    message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    turn = OpenAIChatWire().read({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    assert turn.text == "I can't help with that."
    assert turn.calls == ()
    assert turn.messages == ({"role": "assistant", "content": None, "refusal": "I can't help with that."},)
