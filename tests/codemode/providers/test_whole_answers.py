"""A streaming request answered with one JSON body (a proxy or local server that ignores `stream`) on every wire."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2
import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

import anthropic
import openai
from provider_fakes import SERVERS, FakeServer, build_catalog, converse, full_run, make_model, new_conversation

from codemode import CodeMode

if TYPE_CHECKING:
    from provider_fakes import Step

PROVIDERS = list(SERVERS)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_streaming_request_answered_whole_reads_as_the_whole_response(provider: str) -> None:
    """The conversation goes as it does without streaming: same texts, same code calls, same usage."""
    reply, turns = SERVERS[provider]

    def whole(turn: int, step: Step, stream: bool) -> httpx2.Response:
        return reply(turn, step, False)

    server = FakeServer(reply=whole, turns=turns)
    model = make_model(provider, server, stream=True)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        streamed = await converse(model, cm, new_conversation(model, cm), max_requests=3)
    plain, _ = await full_run(provider, stream=False, max_requests=3)

    assert all(body.get("stream") for body in server.bodies)
    assert [(t.text, [c.code for c in t.calls], t.usage) for t in streamed.turns] == [
        (t.text, [c.code for c in t.calls], t.usage) for t in plain.turns
    ]
    assert streamed.turns[0].text


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_streaming_request_answered_with_other_json_raises_the_sdks_api_error(provider: str) -> None:
    """A JSON body that is no response (a gateway's own answer) is an error that says so, never an empty answer."""

    def gateway(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"status": "ok"})

    model = make_model(provider, gateway, stream=True)
    wire = model.wire
    request = wire.request(model="m", system="S", messages=wire.user_message("hi"), tools=[], max_tokens=8)
    error = anthropic.APIError if provider == "anthropic" else openai.APIError

    with pytest.raises(error) as raised:
        await model.complete(request)

    assert "answered a streaming request with JSON that is not a" in str(raised.value)
