"""The Anthropic Messages wire format and `AnthropicModel`, through the official SDK against a fake server."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx2
import pytest

pytest.importorskip("anthropic")

from anthropic import AsyncAnthropic
from inline_snapshot import snapshot
from provider_fakes import (
    ANNOUNCEMENT,
    SYSTEM,
    TOOL,
    Conversation,
    FakeServer,
    anthropic_usage,
    placed_run,
    prompt_json,
    strip_cache_control,
)

from codemode import Catalog, CodeMode
from codemode.agent import Agent
from codemode.providers.anthropic import AnthropicModel, AnthropicWire, read_usage
from codemode.providers.base import CodeCall, ToolOutcome, Usage

PROVIDER = "anthropic"
EPHEMERAL = {"type": "ephemeral"}


def marked_paths(body: dict[str, Any]) -> list[tuple[int, int]]:
    """(message index, block index) of every `cache_control` marker in the request's messages."""
    return [
        (i, j)
        for i, message in enumerate(body["messages"])
        for j, block in enumerate(message["content"])
        if "cache_control" in block
    ]


@pytest.mark.slow
async def test_every_request_of_a_long_conversation_sends_the_same_system_block(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The system block and the tool's keys are the same in every request."""
    conversation, server = run
    assert list(conversation.tools[0]) == ["name", "description", "input_schema"]
    assert {body["system"][0]["text"] for body in server.bodies} == {SYSTEM}


async def test_breakpoints_sit_on_the_system_the_last_block_and_the_previous_requests_end(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The moving markers are on the request copy only: last block, and where the previous request ended."""
    conversation, server = run
    assert "cache_control" not in json.dumps(conversation.messages)
    for n, body in enumerate(server.bodies):
        assert body["system"][0]["cache_control"] == EPHEMERAL
        last = (len(body["messages"]) - 1, len(body["messages"][-1]["content"]) - 1)
        if n == 0:
            assert marked_paths(body) == [last]
            continue
        previous = server.bodies[n - 1]["messages"]
        previous_end = (len(previous) - 1, len(previous[-1]["content"]) - 1)
        assert marked_paths(body) == [previous_end, last]
        assert strip_cache_control(body["messages"][: len(previous)]) == strip_cache_control(previous)


async def test_a_validation_error_and_a_tool_exception_reach_the_model_as_error_results(
    run: tuple[Conversation, FakeServer],
) -> None:
    """The request after a failing run carries its message in a `tool_result` marked `is_error`."""
    _, server = run
    for request, expected in ((3, "argument `city`: 5 is not of type 'string'"), (7, "contact c-42 is locked")):
        result = server.bodies[request]["messages"][-1]["content"][0]
        assert result["type"] == "tool_result"
        assert result["is_error"] is True
        assert expected in result["content"][0]["text"]


async def test_usage_is_normalised_from_the_messages_api_fields(run: tuple[Conversation, FakeServer]) -> None:
    """Each turn's usage maps cache reads, cache writes, uncached input and output from the SDK's response."""
    conversation, _ = run
    for n, turn in enumerate(conversation.turns):
        usage = anthropic_usage(n)
        assert turn.usage == Usage(
            cache_read_tokens=usage["cache_read_input_tokens"],
            cache_write_tokens=usage["cache_creation_input_tokens"],
            uncached_input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"],
        )
    assert conversation.turns[1].usage.input_tokens == 1900 + 620


def test_usage_normalisation_matches_the_documented_fields() -> None:
    """`input_tokens` is the uncached part; cache reads and writes come from their own fields."""
    documented = {
        "input_tokens": 50,
        "cache_creation_input_tokens": 248,
        "cache_read_input_tokens": 100000,
        "output_tokens": 503,
    }
    usage = read_usage(documented)
    assert usage == Usage(cache_read_tokens=100000, cache_write_tokens=248, uncached_input_tokens=50, output_tokens=503)
    assert usage.input_tokens == 100298
    assert read_usage({"input_tokens": 12, "output_tokens": 5, "cache_creation_input_tokens": None}) == Usage(
        uncached_input_tokens=12, output_tokens=5
    )


def test_results_place_announcements_after_the_tool_results_or_inside_them() -> None:
    """`user` and `system` append text blocks after all `tool_result` blocks; `tool_result` nests it."""
    wire = AnthropicWire()
    outcomes = [
        ToolOutcome(call_id="toolu_1", text="found 1 tool", announcement=ANNOUNCEMENT),
        ToolOutcome(call_id="toolu_2", text="Error: boom", is_error=True),
    ]
    assert wire.results(outcomes, "user") == snapshot(
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "found 1 tool"}],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [{"type": "text", "text": "Error: boom"}],
                        "is_error": True,
                    },
                    {
                        "type": "text",
                        "text": """\
<tools-discovered>
# new tool: get_weather [17a110ed48b9]
async def get_weather(): ...
</tools-discovered>\
""",
                    },
                ],
            }
        ]
    )
    assert wire.results(outcomes, "system") == wire.results(outcomes, "user")
    assert wire.results(outcomes, "tool_result") == snapshot(
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [
                            {"type": "text", "text": "found 1 tool"},
                            {
                                "type": "text",
                                "text": """\
<tools-discovered>
# new tool: get_weather [17a110ed48b9]
async def get_weather(): ...
</tools-discovered>\
""",
                            },
                        ],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [{"type": "text", "text": "Error: boom"}],
                        "is_error": True,
                    },
                ],
            }
        ]
    )


@pytest.mark.parametrize("placement", ["user", "tool_result", "system"])
async def test_every_placement_keeps_the_prefix_property_and_rebuilds_the_state(placement: Any) -> None:
    """Whatever the placement, the conversation stays prefix-stable and its history holds the state."""
    conversation = await placed_run(PROVIDER, placement)
    first_results = conversation.messages[2]["content"]
    kinds = [block["type"] for block in first_results]
    assert kinds == (["tool_result"] if placement == "tool_result" else ["tool_result", "text"])


def test_the_request_has_the_fixed_tool_the_system_block_and_no_marker_in_the_history() -> None:
    """`tools()` and `request()` build the Messages API body; the history passed in is left untouched."""
    wire = AnthropicWire()
    history = wire.user_message("hi")
    body = wire.request(model="claude-x", system="Be brief.", messages=history, tools=wire.tools(TOOL), max_tokens=64)
    assert body == snapshot(
        {
            "model": "claude-x",
            "max_tokens": 64,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "code", "description": "Run Python.", "input_schema": {"type": "object"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
            ],
        }
    )
    assert history == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_automatic_caching_sends_the_top_level_marker_and_byte_exact_messages() -> None:
    """`caching="automatic"` leaves every block unmarked; `off` sends no marker at all."""
    history = [*AnthropicWire().user_message("hi"), {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}]
    automatic = AnthropicWire(caching="automatic").request(
        model="m", system="S", messages=history, tools=[], max_tokens=8
    )
    assert automatic["cache_control"] == EPHEMERAL
    assert automatic["messages"] == history
    assert automatic["system"] == [{"type": "text", "text": "S"}]
    off = AnthropicWire(caching="off").request(model="m", system="S", messages=history, tools=[], max_tokens=8)
    assert "cache_control" not in json.dumps(off)


def test_string_contents_are_sent_as_text_blocks_so_the_prefix_holds() -> None:
    """A history with string contents (from elsewhere) is sent as blocks in every request, marked or not."""
    wire = AnthropicWire()
    history: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    requests = []
    for n in range(3):
        requests.append(wire.request(model="m", system="S", messages=history, tools=[], max_tokens=8))
        history += [{"role": "assistant", "content": f"answer {n}"}, {"role": "user", "content": f"more {n}"}]
    prompts = [prompt_json(PROVIDER, body) for body in requests]
    assert all(after.startswith(before[:-1]) for before, after in itertools.pairwise(prompts))
    assert requests[-1]["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert history[0] == {"role": "user", "content": "hi"}


def test_read_turns_other_tools_and_bad_input_into_calls_with_errors() -> None:
    """A call to another tool or without a `code` string comes back as an error result, not an exception."""
    response = {
        "content": [
            {"type": "text", "text": "", "citations": None},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}, "caller": None},
            {"type": "tool_use", "id": "t2", "name": "code", "input": {"source": "1"}},
            {"type": "tool_use", "id": "t3", "name": "code", "input": {"code": "return 1"}},
        ],
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    turn = AnthropicWire().read(response)
    assert turn.calls == snapshot(
        (
            CodeCall(id="t1", code="", error="Unknown tool 'bash': the only tool is `code`."),
            CodeCall(id="t2", code="", error='The `code` tool takes `{"code": "<python source>"}`.'),
            CodeCall(id="t3", code="return 1"),
        )
    )
    assert turn.messages == snapshot(
        (
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}},
                    {"type": "tool_use", "id": "t2", "name": "code", "input": {"source": "1"}},
                    {"type": "tool_use", "id": "t3", "name": "code", "input": {"code": "return 1"}},
                ],
            },
        )
    )


async def test_an_empty_answer_leaves_no_empty_assistant_message_so_the_next_request_is_valid() -> None:
    """Claude ending a turn with an empty text block, or with no content: nothing is stored for that turn."""
    replies = iter([[{"type": "text", "text": ""}], [], [{"type": "text", "text": "hi"}]])
    bodies: list[dict[str, Any]] = []

    def server(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        message = {"id": "m", "type": "message", "role": "assistant", "model": "m", "content": next(replies)}
        usage = {"input_tokens": 1, "output_tokens": 1}
        return httpx2.Response(200, json={**message, "stop_reason": "end_turn", "stop_sequence": None, "usage": usage})

    client = AsyncAnthropic(
        api_key="test",
        base_url="http://test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)),
    )
    async with CodeMode(Catalog(), isolation="inline") as cm:
        agent = Agent(cm, AnthropicModel(client=client, stream=False))
        answers = [(r.stopped, r.answer) for r in [await agent.run(p) for p in ("first", "second", "third")]]

    assert answers == [("answer", ""), ("answer", ""), ("answer", "hi")]
    assert [strip_cache_control(m) for m in bodies[-1]["messages"]] == [
        {"role": "user", "content": [{"type": "text", "text": "first"}]},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
        {"role": "user", "content": [{"type": "text", "text": "third"}]},
    ]
    assert agent.messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
