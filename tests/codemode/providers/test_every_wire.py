"""What every provider wire promises alike, checked on each through its official SDK against a fake server.

The checks that differ by wire (request shape, usage fields, where a result goes) stay in the wire's own file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx2
import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

import anthropic
import openai
from provider_fakes import (
    OUTCOMES,
    SAVE_AFTER,
    SERVERS,
    STEPS,
    announced_names,
    assert_prefix_stable,
    chat_usage,
    make_model,
    prompt_json,
    responses_usage,
    seen_names,
)

from codemode import DiscoveryState
from codemode.providers.anthropic import AnthropicModel
from codemode.providers.base import Usage
from codemode.providers.openai_chat import OpenAIChatModel
from codemode.providers.openai_responses import OpenAIResponsesModel

if TYPE_CHECKING:
    from collections.abc import Callable

    from provider_fakes import Conversation, FakeServer, Resumed

PROVIDERS = list(SERVERS)
MODELS: dict[str, type[AnthropicModel | OpenAIChatModel | OpenAIResponsesModel]] = {
    "anthropic": AnthropicModel,
    "openai-chat": OpenAIChatModel,
    "openai-responses": OpenAIResponsesModel,
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_long_conversation_keeps_every_request_a_prefix_of_the_next(
    every_run: dict[str, dict[bool, tuple[Conversation, FakeServer]]], provider: str, stream: bool
) -> None:
    """Fourteen requests, eight announcements: same tools and system, each prompt a byte prefix of the next."""
    conversation, server = every_run[provider][stream]
    assert len(server.bodies) == len(STEPS) == 14
    assert len(conversation.announcements) >= 6
    assert_prefix_stable(provider, server.bodies)
    assert server.bodies[0]["tools"] == conversation.tools
    assert conversation.turns[-1].text == STEPS[-1].text
    assert "".join(conversation.streamed) == ("".join(step.text for step in STEPS) if stream else "")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_each_stub_is_announced_exactly_once_and_the_history_rebuilds_the_state(
    every_run: dict[str, dict[bool, tuple[Conversation, FakeServer]]], provider: str, stream: bool
) -> None:
    """Every announced tool appears once in each form in the final history; the state read back equals the live one."""
    conversation, _ = every_run[provider][stream]
    texts = conversation.wire.history_texts(conversation.messages)
    names, lines = announced_names(texts), seen_names(texts)
    assert len(names) == len(set(names))
    assert len(lines) == len(set(lines))
    assert set(names) | set(lines) == conversation.state.announced.keys()
    assert len(conversation.state.announced) >= 10
    assert DiscoveryState.from_history(texts) == conversation.state


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_conversation_saved_after_five_steps_continues_in_a_new_process(
    every_run: dict[str, dict[bool, tuple[Conversation, FakeServer]]], resumed: dict[str, Resumed], provider: str
) -> None:
    """The resumed requests equal those of the uninterrupted run, so the prefix property holds across."""
    whole, whole_server = every_run[provider][True]
    before, after, final = resumed[provider]
    assert len(before) == SAVE_AFTER
    assert_prefix_stable(provider, before + after)
    prompts = [prompt_json(provider, body) for body in before + after]
    assert prompts == [prompt_json(provider, body) for body in whole_server.bodies]
    assert final["messages"] == whole.messages
    assert DiscoveryState.from_json(final["state"]) == whole.state


@pytest.mark.parametrize(
    ("provider", "status", "error"),
    [
        ("anthropic", 400, anthropic.BadRequestError),
        ("anthropic", 401, anthropic.AuthenticationError),
        ("anthropic", 429, anthropic.RateLimitError),
        ("anthropic", 529, anthropic.OverloadedError),
        *[
            (provider, status, error)
            for provider in ("openai-chat", "openai-responses")
            for status, error in (
                (400, openai.BadRequestError),
                (401, openai.AuthenticationError),
                (429, openai.RateLimitError),
                (503, openai.InternalServerError),
            )
        ],
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_api_errors_raise_the_sdks_exceptions(
    provider: str, status: int, error: type[Exception], stream: bool
) -> None:
    """Rate limits, overload, bad requests and bad keys propagate as the SDK's own exception types."""

    def refuse(request: httpx2.Request) -> httpx2.Response:
        # The error body both SDKs read: Anthropic's `type`/`error`, and OpenAI's `error` with a `code`.
        body = {"type": "error", "error": {"type": "some_error", "message": f"status {status}", "code": None}}
        return httpx2.Response(status, json=body)

    model = make_model(provider, refuse, stream=stream)
    wire = model.wire
    request = wire.request(model="m", system="S", messages=wire.user_message("hi"), tools=[], max_tokens=8)
    with pytest.raises(error):
        await model.complete(request)


@pytest.mark.parametrize(
    ("provider", "variable", "base_url"),
    [
        ("anthropic", "ANTHROPIC", "http://127.0.0.1:9"),
        ("openai-chat", "OPENAI", "http://127.0.0.1:9/v1"),
        ("openai-responses", "OPENAI", "http://127.0.0.1:9/v1"),
    ],
)
def test_the_model_builds_its_client_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, provider: str, variable: str, base_url: str
) -> None:
    """Without a client, the SDK reads the key and base URL from `<PROVIDER>_API_KEY` / `<PROVIDER>_BASE_URL`."""
    monkeypatch.setenv(f"{variable}_API_KEY", "sk-test")
    monkeypatch.setenv(f"{variable}_BASE_URL", base_url)
    model = MODELS[provider]()
    assert str(model.client.base_url).startswith(base_url)
    assert model.wire.name == provider


@pytest.mark.parametrize(
    ("provider", "usage_of", "input_key", "output_key"),
    [
        ("openai-chat", chat_usage, "prompt_tokens", "completion_tokens"),
        ("openai-responses", responses_usage, "input_tokens", "output_tokens"),
    ],
)
async def test_openai_usage_counts_the_cached_tokens_as_a_part_of_the_input(
    every_run: dict[str, dict[bool, tuple[Conversation, FakeServer]]],
    provider: str,
    usage_of: Callable[[int], dict[str, Any]],
    input_key: str,
    output_key: str,
) -> None:
    """Both OpenAI wires: the input count includes `<input>_details.cached_tokens`; no cache writes are reported."""
    for stream in (False, True):
        conversation, _ = every_run[provider][stream]
        for n, turn in enumerate(conversation.turns):
            usage = usage_of(n)
            cached = usage[f"{input_key}_details"]["cached_tokens"]
            assert turn.usage == Usage(
                cache_read_tokens=cached,
                uncached_input_tokens=usage[input_key] - cached,
                output_tokens=usage[output_key],
            )
            assert turn.usage.input_tokens == usage[input_key]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_results_at_every_placement_give_the_announcement_back_from_the_history(provider: str) -> None:
    """Wherever the announcement is written (user, tool result, system), the history's texts rebuild the state."""
    wire = make_model(provider, refuse_all, stream=False).wire
    for placement in ("user", "tool_result", "system"):
        texts = wire.history_texts(wire.results(list(OUTCOMES), placement))
        assert DiscoveryState.from_history(texts).announced == {"get_weather": "17a110ed48b9"}


def refuse_all(request: httpx2.Request) -> httpx2.Response:
    """A server for a model whose wire alone is used: nothing may reach it."""
    raise AssertionError(f"no request was expected, got {request.url}")
