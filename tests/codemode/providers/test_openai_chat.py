"""The OpenAI Chat Completions wire format and `OpenAIChatModel`, through the official SDK against a fake server."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest
from inline_snapshot import snapshot
from provider_fakes import (
    ANNOUNCEMENT,
    SAVE_AFTER,
    STEPS,
    SYSTEM,
    TOOL,
    Conversation,
    FakeServer,
    Resumed,
    announced_names,
    assert_prefix_stable,
    chat_usage,
    full_run,
    prompt_json,
)

from codemode import DiscoveryState
from codemode.providers.base import CodeCall, ToolOutcome, Usage
from codemode.providers.openai_chat import OpenAIChatModel, OpenAIChatWire, read_usage

PROVIDER = "openai-chat"


async def test_a_long_conversation_keeps_every_request_a_prefix_of_the_next(
    run: tuple[Conversation, FakeServer],
) -> None:
    """Fourteen requests, eight announcements: same tools and system message, each prompt a byte prefix."""
    conversation, server = run
    stream = bool(server.bodies[0].get("stream"))
    assert len(server.bodies) == len(STEPS) == 14
    assert len(conversation.announcements) >= 6
    assert_prefix_stable(PROVIDER, server.bodies)
    assert server.bodies[0]["tools"] == conversation.tools
    assert {json.dumps(body["messages"][0]) for body in server.bodies} == {
        json.dumps({"role": "system", "content": SYSTEM})
    }
    assert conversation.turns[-1].text == STEPS[-1].text
    assert "".join(conversation.streamed) == ("".join(step.text for step in STEPS) if stream else "")
    if stream:
        assert all(body["stream_options"] == {"include_usage": True} for body in server.bodies)


async def test_each_stub_is_announced_exactly_once_and_the_history_rebuilds_the_state(
    run: tuple[Conversation, FakeServer],
) -> None:
    """Every announced tool appears once in the final history; the state read back equals the live one."""
    conversation, _ = run
    texts = conversation.wire.history_texts(conversation.messages)
    names = announced_names(texts)
    assert len(names) == len(set(names)) == len(conversation.state.announced) >= 10
    assert DiscoveryState.from_history(texts) == conversation.state


async def test_a_validation_error_and_a_tool_exception_reach_the_model_as_tool_messages(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The request after a failing run carries its message in the `tool` message."""
    _, server = run
    for request, expected in ((3, "argument `city`: 5 is not of type 'string'"), (7, "contact c-42 is locked")):
        result = next(m for m in reversed(server.bodies[request]["messages"]) if m["role"] == "tool")
        assert expected in result["content"]


async def test_usage_is_normalised_from_the_chat_completions_fields(run: tuple[Conversation, FakeServer]) -> None:
    """Cached tokens are a part of `prompt_tokens`: the rest is uncached; chat reports no cache writes."""
    conversation, _ = run
    for n, turn in enumerate(conversation.turns):
        usage = chat_usage(n)
        cached = usage["prompt_tokens_details"]["cached_tokens"]
        assert turn.usage == Usage(
            cache_read_tokens=cached,
            uncached_input_tokens=usage["prompt_tokens"] - cached,
            output_tokens=usage["completion_tokens"],
        )
        assert turn.usage.input_tokens == usage["prompt_tokens"]


async def test_a_conversation_saved_after_five_steps_continues_in_a_new_process(
    runs: dict[bool, tuple[Conversation, FakeServer]], resumed: dict[str, Resumed]
) -> None:
    """The resumed requests equal those of the uninterrupted run, so the prefix property holds across."""
    whole, whole_server = runs[True]
    before, after, final = resumed[PROVIDER]
    assert len(before) == SAVE_AFTER
    assert_prefix_stable(PROVIDER, before + after)
    prompts = [prompt_json(PROVIDER, body) for body in before + after]
    assert prompts == [prompt_json(PROVIDER, body) for body in whole_server.bodies]
    assert final["messages"] == whole.messages
    assert DiscoveryState.from_json(final["state"]) == whole.state


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
    outcomes = [
        ToolOutcome(call_id="call_1", text="found 1 tool", announcement=ANNOUNCEMENT),
        ToolOutcome(call_id="call_2", text="Error: boom", is_error=True),
    ]
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
    for placement in ("user", "tool_result", "system"):
        texts = wire.history_texts(wire.results(outcomes, placement))
        assert DiscoveryState.from_history(texts).announced == {"get_weather": "17a110ed48b9"}


@pytest.mark.parametrize("placement", ["user", "tool_result", "system"])
async def test_every_placement_keeps_the_prefix_property_and_rebuilds_the_state(placement: Any) -> None:
    """Whatever the placement, the conversation stays prefix-stable and its history holds the state."""
    conversation, server = await full_run(PROVIDER, stream=False, placement=placement, max_requests=5)
    assert_prefix_stable(PROVIDER, server.bodies)
    texts = conversation.wire.history_texts(conversation.messages)
    assert DiscoveryState.from_history(texts) == conversation.state
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


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (429, openai.RateLimitError),
        (503, openai.InternalServerError),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_api_errors_raise_the_sdks_exceptions(status: int, error: type[Exception], stream: bool) -> None:
    """Rate limits, overload, bad requests and bad keys propagate as the SDK's own exception types."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json={"error": {"message": f"status {status}", "type": "x", "code": None}})

    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    client = openai.AsyncOpenAI(api_key="test", base_url="http://test/v1", http_client=http_client, max_retries=0)
    model = OpenAIChatModel(client=client, stream=stream)
    wire = OpenAIChatWire()
    request = wire.request(model="m", system="S", messages=wire.user_message("hi"), tools=[], max_tokens=8)
    with pytest.raises(error):
        await model.complete(request)


def test_the_model_builds_its_client_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a client, the SDK reads the key and base URL from `OPENAI_API_KEY` / `OPENAI_BASE_URL`."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = OpenAIChatModel()
    assert str(model.client.base_url).startswith("http://127.0.0.1:9/v1")
    assert model.wire.name == "openai-chat"
