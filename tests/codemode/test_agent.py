# Snapshots hold one-line error messages, which are longer than a source line.
# ruff: noqa: E501
"""The agent loop through its public API: `Agent` with `ScriptedModel` in each wire format, inline sandbox."""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

import anthropic
import openai
from inline_snapshot import snapshot
from providers.provider_fakes import seen_names

from codemode import Catalog, CodeMode, DiscoveryState
from codemode.agent import Agent, AgentEvents, AgentResult, describe_api_error
from codemode.discovery import OPEN_TAG
from codemode.providers.anthropic import AnthropicModel, AnthropicWire
from codemode.providers.openai_chat import OpenAIChatModel, OpenAIChatWire
from codemode.providers.openai_responses import OpenAIResponsesModel, OpenAIResponsesWire
from codemode.testing import BYTES_PER_TOKEN, ScriptedModel, ScriptStep, prompt_text, step

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from codemode.providers.base import CodeCall, Model, TextSink, WireFormat
    from sandbox import JsonObject

SYSTEM = "You are a test assistant. Use the `code` tool."
PROMPT = "Check the weather, the customer's invoices, and tell Ana."
FOLLOW_UP = "Now convert 100 EUR to USD and put a review in the calendar."
FINAL = "Paris is clear at 19 C; Ana has one open invoice and got an email."
TOOL_NAMES = [
    "get_weather",
    "get_forecast",
    "find_customer",
    "list_invoices",
    "delete_contact",
    "convert_currency",
    "get_stock_price",
    "send_email",
    "create_event",
    "translate_text",
]

WIRES: list[WireFormat] = [AnthropicWire(), OpenAIChatWire(), OpenAIResponsesWire()]
"""The three wire formats; each test parametrized over them gets its own copy."""


@pytest.fixture(params=WIRES, ids=[wire.name for wire in WIRES])
def wire(request: pytest.FixtureRequest) -> WireFormat:
    """One provider's wire format."""
    chosen: WireFormat = copy.deepcopy(request.param)
    return chosen


def build_catalog() -> Catalog:
    """Ten small tools with deterministic handlers; `delete_contact` always raises."""
    catalog = Catalog()

    @catalog.tool
    async def get_weather(city: str) -> dict[str, object]:
        """Get the current weather for a city."""
        return {"city": city, "temp_c": 19, "sky": "clear"}

    @catalog.tool
    async def get_forecast(city: str, days: int) -> list[str]:
        """Get the weather forecast for a city for the next days."""
        return [f"{city}: day {n + 1} sunny" for n in range(days)]

    @catalog.tool
    async def find_customer(name: str) -> dict[str, str]:
        """Find a customer in the CRM by name."""
        return {"id": "c-1", "name": name, "email": f"{name.lower()}@example.com"}

    @catalog.tool
    async def list_invoices(customer_id: str) -> list[dict[str, object]]:
        """List the invoices of a customer."""
        return [{"id": "INV-1", "customer_id": customer_id, "amount": 120.5, "status": "open"}]

    @catalog.tool
    async def delete_contact(contact_id: str) -> None:
        """Delete a CRM contact by id."""
        raise PermissionError(f"contact {contact_id} is locked")

    @catalog.tool
    async def convert_currency(amount: float, source: str, target: str) -> dict[str, object]:
        """Convert an amount of money between currencies."""
        return {"amount": round(amount * 1.1, 2), "currency": target}

    @catalog.tool
    async def get_stock_price(symbol: str) -> float:
        """Get the latest stock price of a ticker symbol."""
        return 42.0

    @catalog.tool
    async def send_email(to: str, subject: str, body: str) -> dict[str, str]:
        """Send an email message to a recipient."""
        return {"to": to, "status": "sent"}

    @catalog.tool
    async def create_event(title: str, date: str) -> dict[str, str]:
        """Create a calendar event on a date."""
        return {"id": "ev-1", "title": title, "date": date}

    @catalog.tool
    async def translate_text(text: str, language: str) -> str:
        """Translate a text into another language."""
        return f"[{language}] {text}"

    return catalog


SCRIPT: tuple[ScriptStep, ...] = (
    step("Looking for weather tools.", 'print(await tools.search("weather forecast for a city", max_results=2))'),
    step("Paris now.", 'return await tools.get_weather(city="Paris")'),
    step("And with a number.", "return await tools.get_weather(city=5)"),
    step("", 'print(await tools.describe("find_customer"))'),
    step(
        "The customer and her invoices.",
        'customer = await tools.find_customer(name="Ana")\nreturn await tools.list_invoices(customer_id=customer["id"])',
    ),
    step("Removing the old contact.", 'return await tools.delete_contact(contact_id="c-9")'),
    step(
        "Two at once.",
        'return await tools.convert_currency(amount=100, source="EUR", target="USD")',
        'return await tools.get_stock_price(symbol="ACME")',
    ),
    step("Telling Ana.", 'return await tools.send_email(to="ana@example.com", subject="Invoice", body="Due soon")'),
    step("A reminder.", 'return await tools.create_event(title="Call Ana", date="2026-12-02")'),
    step("In German too.", 'return await tools.translate_text(text="hello", language="de")'),
    step("Weather again: nothing new.", 'print(await tools.search("weather forecast for a city", max_results=2))'),
    step("The forecast.", 'return await tools.get_forecast(city="Paris", days=2)'),
    step("A slip.", "return ("),
    step(FINAL),
)

FIRST_PART: tuple[ScriptStep, ...] = (
    step("Weather tools.", 'print(await tools.search("weather forecast for a city", max_results=2))'),
    step("Paris.", 'return await tools.get_weather(city="Paris")'),
    step("", 'c = await tools.find_customer(name="Ana")\nreturn await tools.list_invoices(customer_id=c["id"])'),
    step("Mail.", 'return await tools.send_email(to="ana@example.com", subject="Hi", body="Invoice")'),
    step("Contact.", 'return await tools.delete_contact(contact_id="c-9")'),
    step(FINAL),
)
"""A conversation that answers after five `code` steps: the point where it is saved."""

SECOND_PART: tuple[ScriptStep, ...] = (
    step("Converting.", 'return await tools.convert_currency(amount=100, source="EUR", target="USD")'),
    step("", 'print(await tools.search("calendar event", max_results=1))'),
    step("Booking.", 'return await tools.create_event(title="Review", date="2026-12-02")'),
    step("Done: 110.0 USD, and the review is on 2 Dec."),
)
"""The follow-up after the save: more discoveries, then a second answer."""

_NEW_TOOL = re.compile(r"^# new tool: (\S+) \[", re.MULTILINE)


async def run_agent(
    wire: WireFormat, script: Sequence[ScriptStep], prompt: str = PROMPT, **options: Any
) -> tuple[Agent, ScriptedModel, AgentResult]:
    """A fresh agent over a fresh catalog, run once on `script`."""
    model = ScriptedModel(wire, script)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        agent = Agent(cm, model, model_name="test-model", system=SYSTEM, **options)
        result = await agent.run(prompt)
    return agent, model, result


def system_of(request: JsonObject) -> object:
    """The system prompt of a request, wherever its wire format puts it."""
    if "instructions" in request:
        return request["instructions"]
    if "system" in request:
        return request["system"]
    messages = request["messages"]
    assert isinstance(messages, list)
    return messages[0]


def system_text(request: JsonObject) -> str:
    """The text of the system prompt of a request."""
    system = system_of(request)
    if isinstance(system, list):
        system = system[0]
    if isinstance(system, dict):
        system = system.get("text", system.get("content"))
    assert isinstance(system, str)
    return system


def assert_prefix_stable(requests: Sequence[JsonObject]) -> None:
    """Same `tools` bytes and system prompt in every request; each prompt a strict prefix of the next one's."""
    assert len({json.dumps(request["tools"]) for request in requests}) == 1
    assert len({json.dumps(system_of(request)) for request in requests}) == 1
    assert {system_text(request) for request in requests} == {SYSTEM}
    for before, after in itertools.pairwise(prompt_text(request) for request in requests):
        assert len(after) > len(before)
        assert after.startswith(before)


def announced_names(wire: WireFormat, messages: Sequence[JsonObject]) -> list[tuple[str, str]]:
    """(form, name) of the tools announced as new in a history, in full or as one line, as often as announced."""
    texts = wire.history_texts(messages)
    full = [("full", name) for text in texts for name in _NEW_TOOL.findall(text)]
    return full + [("line", name) for name in seen_names(texts)]


def assert_announced_once_each(names: list[tuple[str, str]], tools: Iterable[str]) -> None:
    """Each tool is announced at most once in each form, and every one of `tools` is announced."""
    assert [name for name, count in Counter(names).items() if count > 1] == []
    assert sorted({name for _, name in names}) == sorted(tools)


async def test_a_long_scripted_run_ends_with_the_final_answer(wire: WireFormat) -> None:
    """Fourteen requests with ten tools discovered over eight steps end in the scripted answer."""
    agent, model, result = await run_agent(wire, SCRIPT)
    assert (result.stopped, result.answer, result.error) == ("answer", FINAL, None)
    assert len(result.steps) == len(model.requests) == len(SCRIPT) == 14
    announcing = [step for step in result.steps if any(r is not None and r.announcement for _, r in step.executions)]
    assert len(announcing) >= 6
    assert sorted(agent.state.announced) == sorted(TOOL_NAMES)
    assert_announced_once_each(announced_names(wire, agent.messages), TOOL_NAMES)


def announcement_places(messages: Sequence[JsonObject]) -> list[str]:
    """Where each message holding an announcement puts it: `tool_result`, or the role of a message of its own."""
    places = []
    for message in messages:
        if OPEN_TAG not in json.dumps(message):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        in_results = [
            isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks if OPEN_TAG in json.dumps(b)
        ]
        if (
            message.get("role") == "tool"
            or message.get("type") == "function_call_output"
            or (in_results and all(in_results))
        ):
            places.append("tool_result")
        else:
            places.append(str(message.get("role")))
    return places


async def test_by_default_announcements_are_tool_output_and_a_user_message_stays_an_option(wire: WireFormat) -> None:
    """Third-party stubs go in the tool result of the run that found them; `placement="user"` still appends them."""
    default, _, result = await run_agent(wire, SCRIPT)
    as_user, model, _ = await run_agent(wire, SCRIPT, placement="user")

    assert result.stopped == "answer"
    assert set(announcement_places(default.messages)) == {"tool_result"}
    assert "user" in announcement_places(as_user.messages)
    assert_prefix_stable(model.requests)
    assert DiscoveryState.from_history(wire.history_texts(default.messages)) == default.state


async def test_every_request_keeps_tools_and_system_and_extends_the_previous_prompt(wire: WireFormat) -> None:
    """Across the long run the `tools` bytes and system prompt never change and each prompt extends the last."""
    _, model, _ = await run_agent(wire, SCRIPT)
    assert_prefix_stable(model.requests)


async def test_validation_errors_tool_exceptions_and_syntax_errors_reach_the_model_as_text(wire: WireFormat) -> None:
    """Failed runs come back as error results in the history, and the loop goes on to the answer."""
    agent, _, result = await run_agent(wire, SCRIPT)
    failed = {
        index: outcome.text
        for index, step_record in enumerate(result.steps)
        for _, outcome in step_record.executions
        if outcome is not None and not outcome.ok
    }
    assert sorted(failed) == [2, 5, 12]
    assert "city" in failed[2]
    assert "contact c-9 is locked" in failed[5]
    assert "SyntaxError" in failed[12]
    texts = wire.history_texts(agent.messages)
    assert all(any(text in history for history in texts) for text in failed.values())
    assert result.stopped == "answer"


async def test_the_events_fire_in_order_around_each_request_and_call(wire: WireFormat) -> None:
    """`on_request` before each request, `on_code` then `on_result` for each call, `on_text` with the text."""
    seen: list[tuple[str, ...]] = []
    texts: list[str] = []
    events = AgentEvents(
        on_text=texts.append,
        on_code=lambda call: seen.append(("code", call.code)),
        on_result=lambda call, result: seen.append(("result", call.code, str(result.ok))),
        on_request=lambda request: seen.append(("request", str(len(prompt_text(request))))),
    )
    script = (
        step("Two calls.", "return 1", "return 2"),
        step("One more.", "return 3"),
        step("Three."),
    )
    _, model, result = await run_agent(wire, script, events=events)
    sizes = [str(len(prompt_text(request))) for request in model.requests]
    assert seen == [
        ("request", sizes[0]),
        ("code", "return 1"),
        ("result", "return 1", "True"),
        ("code", "return 2"),
        ("result", "return 2", "True"),
        ("request", sizes[1]),
        ("code", "return 3"),
        ("result", "return 3", "True"),
        ("request", sizes[2]),
    ]
    assert "".join(texts).split() == ["Two", "calls.", "One", "more.", "Three."]
    assert result.answer == "Three."


async def test_max_steps_stops_the_loop_with_the_last_text(wire: WireFormat) -> None:
    """A model that keeps calling `code` is stopped after `max_steps` requests."""
    script = [step(f"Step {n}.", f"return {n}") for n in range(10)]
    _, model, result = await run_agent(wire, script, max_steps=3)
    assert (result.stopped, result.answer, result.error) == ("max_steps", "Step 2.", None)
    assert len(result.steps) == len(model.requests) == 3


async def test_scripted_usage_reads_the_whole_previous_prompt_from_the_cache(wire: WireFormat) -> None:
    """When the prompt only grew, request n+1 reads request n's prompt tokens (bytes/4) from the cache."""
    _, model, result = await run_agent(wire, SCRIPT)
    tokens = [len(prompt_text(request)) // BYTES_PER_TOKEN for request in model.requests]
    assert [usage.cache_read_tokens for usage in result.usage] == [0, *tokens[:-1]]
    assert [usage.input_tokens for usage in result.usage] == tokens
    assert all(usage.output_tokens > 0 for usage in result.usage)


async def test_a_saved_conversation_resumes_where_it_stopped(wire: WireFormat) -> None:
    """`save()` is JSON; `resume` rebuilds the state, and the follow-up's requests extend the saved history."""
    model = ScriptedModel(wire, FIRST_PART + SECOND_PART)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        live = Agent(cm, model, model_name="test-model", system=SYSTEM)
        first = await live.run(PROMPT)
        saved = live.save()
    assert first.stopped == "answer"
    assert len(live.state.announced) >= 5
    restored = json.loads(json.dumps(saved))
    assert restored == saved

    async with CodeMode(build_catalog(), isolation="inline") as cm:
        resumed = Agent.resume(cm, model, restored, model_name="test-model", system=SYSTEM)
        assert resumed.state == live.state
        assert resumed.messages == live.messages
        second = await resumed.run(FOLLOW_UP)

    assert (second.stopped, second.answer) == ("answer", SECOND_PART[-1].text)
    assert len(model.requests) == len(FIRST_PART) + len(SECOND_PART)
    assert_prefix_stable(model.requests)
    saved_prompt = prompt_text(model.requests[len(FIRST_PART) - 1])
    assert prompt_text(model.requests[len(FIRST_PART)]).startswith(saved_prompt)
    assert second.usage[0].cache_read_tokens == len(saved_prompt) // BYTES_PER_TOKEN
    assert_announced_once_each(announced_names(wire, resumed.messages), resumed.state.announced)


async def test_a_resumed_conversation_ends_exactly_like_an_uninterrupted_one(wire: WireFormat) -> None:
    """Saving and resuming between two prompts changes no request, no history entry and no state."""
    resumed_model = ScriptedModel(wire, FIRST_PART + SECOND_PART)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        first = Agent(cm, resumed_model, model_name="test-model", system=SYSTEM)
        await first.run(PROMPT)
        saved = json.loads(json.dumps(first.save()))
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        resumed = Agent.resume(cm, resumed_model, saved, model_name="test-model", system=SYSTEM)
        await resumed.run(FOLLOW_UP)

    straight_model = ScriptedModel(copy.deepcopy(wire), FIRST_PART + SECOND_PART)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        straight = Agent(cm, straight_model, model_name="test-model", system=SYSTEM)
        await straight.run(PROMPT)
        await straight.run(FOLLOW_UP)

    assert resumed.messages == straight.messages
    assert resumed.state == straight.state
    assert [prompt_text(r) for r in resumed_model.requests] == [prompt_text(r) for r in straight_model.requests]


async def test_resuming_in_another_wire_format_is_refused() -> None:
    """A conversation saved in one provider's format cannot be continued in another's."""
    agent, _, _ = await run_agent(AnthropicWire(), FIRST_PART)
    saved = agent.save()
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        with pytest.raises(ValueError) as error:
            Agent.resume(cm, ScriptedModel(OpenAIChatWire(), FIRST_PART), saved)
    assert str(error.value) == snapshot("the conversation was saved in the 'anthropic' format, not 'openai-chat'")


# --- model API errors -----------------------------------------------------------------------------------------


def answering(status: int, body: JsonObject, seen: list[httpx2.Request]) -> httpx2.AsyncClient:
    """An HTTP client whose every request gets `status` with the JSON `body`."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(status, json=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


ANTHROPIC_429: JsonObject = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down."}}
OPENAI_429: JsonObject = {
    "error": {"message": "Rate limit reached.", "type": "requests", "code": "rate_limit_exceeded"}
}


def rate_limited_model(provider: str, seen: list[httpx2.Request]) -> Model:
    """The provider's SDK-backed model whose API answers 429 to everything (and the SDK does not retry)."""
    if provider == "anthropic":
        client = anthropic.AsyncAnthropic(
            api_key="test", base_url="http://test", max_retries=0, http_client=answering(429, ANTHROPIC_429, seen)
        )
        return AnthropicModel(client=client, stream=False)
    openai_client = openai.AsyncOpenAI(
        api_key="test", base_url="http://test/v1", max_retries=0, http_client=answering(429, OPENAI_429, seen)
    )
    if provider == "openai-chat":
        return OpenAIChatModel(client=openai_client, stream=False)
    return OpenAIResponsesModel(client=openai_client, stream=False)


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses"])
async def test_a_rate_limited_model_ends_the_run_with_a_clear_error(provider: str) -> None:
    """The SDK's 429 becomes `stopped == "error"` with a one-line account naming the status and what to do."""
    seen: list[httpx2.Request] = []
    model = rate_limited_model(provider, seen)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        agent = Agent(cm, model, model_name="test-model", system=SYSTEM)
        result = await agent.run(PROMPT)
    assert (result.stopped, result.answer, result.steps) == ("error", "", ())
    assert result.error is not None
    assert result.error.startswith("model API error 429 (RateLimitError): ")
    assert result.error.endswith(" - rate limited even after the SDK's retries; wait and try again")
    assert "\n" not in result.error
    assert len(seen) == 1
    assert agent.messages == model.wire.user_message(PROMPT)


async def anthropic_error(status: int, error_type: str) -> Exception:
    """The exception the Anthropic SDK raises when its API answers `status`."""
    body: JsonObject = {"type": "error", "error": {"type": error_type, "message": "Details."}}
    client = anthropic.AsyncAnthropic(
        api_key="test", base_url="http://test", max_retries=0, http_client=answering(status, body, [])
    )
    try:
        await client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    except anthropic.APIError as error:
        return error
    raise AssertionError("the request did not fail")


async def test_describe_api_error_says_what_to_do_about_common_failures() -> None:
    """Bad key, unknown model and overload each get the status, the API's own message and advice, on one line."""
    advice = {
        401: "the API key was refused; check the *_API_KEY environment variable",
        404: "the model was not found; check --model",
        529: "the provider is overloaded; try again later",
    }
    for status, kind, sdk_class in [
        (401, "authentication_error", "AuthenticationError"),
        (404, "not_found_error", "NotFoundError"),
        (529, "overloaded_error", "OverloadedError"),
    ]:
        described = describe_api_error(await anthropic_error(status, kind))
        # The SDK's own wording between our prefix and advice changes between its releases: only its presence is ours.
        assert described.startswith(f"model API error {status} ({sdk_class}): ")
        assert described.endswith(f" - {advice[status]}")
        assert "Details." in described
        assert "\n" not in described


async def test_describe_api_error_points_at_the_base_url_when_the_api_cannot_be_reached() -> None:
    """A connection failure has no status; the advice is to check the network and base URL."""

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://test/v1",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)),
    )
    with pytest.raises(openai.APIConnectionError) as error:
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    described = describe_api_error(error.value)
    assert described.startswith("model API error (APIConnectionError): ")
    assert described.endswith(" - could not reach the API; check the network and *_BASE_URL")


# --- unreadable `code` calls ----------------------------------------------------------------------------------


def garble(wire_name: str, response: JsonObject) -> JsonObject:
    """The response with the arguments of its first `code` call made unreadable."""
    garbled: Any = copy.deepcopy(response)
    if wire_name == "anthropic":
        call = next(block for block in garbled["content"] if block["type"] == "tool_use")
        call["input"] = {"source": call["input"]["code"]}
    elif wire_name == "openai-chat":
        call = garbled["choices"][0]["message"]["tool_calls"][0]["function"]
        call["arguments"] = call["arguments"][:-1]
    else:
        call = next(item for item in garbled["output"] if item["type"] == "function_call")
        call["arguments"] = call["arguments"][:-1]
    result: JsonObject = garbled
    return result


@dataclass
class GarblingModel:
    """A `ScriptedModel` whose first response has a `code` call with unreadable arguments."""

    inner: ScriptedModel
    responses: list[JsonObject] = field(default_factory=list)
    wire: WireFormat = field(init=False)

    def __post_init__(self) -> None:
        self.wire = self.inner.wire

    async def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> JsonObject:
        response = await self.inner.complete(request, on_text=on_text)
        if not self.responses:
            response = garble(self.wire.name, response)
        self.responses.append(response)
        return response


async def test_a_code_call_with_unreadable_arguments_gets_an_error_result_and_the_loop_goes_on(
    wire: WireFormat,
) -> None:
    """The call is answered with an error instead of running; the next step runs and the model answers."""
    ran: list[CodeCall] = []
    model = GarblingModel(ScriptedModel(wire, [step("Oops.", "return 1"), step("Again.", "return 2"), step(FINAL)]))
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        agent = Agent(cm, model, system=SYSTEM, events=AgentEvents(on_code=ran.append))
        result = await agent.run(PROMPT)
    assert (result.stopped, result.answer) == ("answer", FINAL)
    [(bad, outcome)] = result.steps[0].executions
    assert outcome is None
    assert bad.error is not None
    assert bad.error in wire.history_texts(agent.messages)
    assert [call.code for call in ran] == ["return 2"]
    assert_prefix_stable(model.inner.requests)


async def test_a_run_stopped_by_max_steps_continues_without_a_new_prompt() -> None:
    """`run(None)` picks up where `max_steps` stopped, with no extra user message and the prefix intact."""
    from codemode import Catalog, CodeMode
    from codemode.agent import Agent
    from codemode.providers.anthropic import AnthropicWire
    from codemode.testing import ScriptedModel, prompt_text, step

    catalog = Catalog()
    catalog.add(name="ping", description="Answer pong.", parameters={"type": "object"}, handler=lambda: "pong")
    script = [step("", "return await tools.ping()"), step("", "return 2"), step("Done.")]
    async with CodeMode(catalog, isolation="inline") as cm:
        agent = Agent(cm, ScriptedModel(AnthropicWire(), script), max_steps=1)
        first = await agent.run("Ping it.")
        agent.max_steps = 5
        second = await agent.run(None)
    assert (first.stopped, second.stopped, second.answer) == ("max_steps", "answer", "Done.")
    requests = agent.model.requests  # type: ignore[attr-defined]
    prompts = [prompt_text(request) for request in requests]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(prompts))
    roles = [message["role"] for message in agent.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]


def cut(wire_name: str, response: JsonObject) -> JsonObject:
    """The response as the API gives it when it stopped at `max_tokens`."""
    marked: Any = copy.deepcopy(response)
    if wire_name == "anthropic":
        marked["stop_reason"] = "max_tokens"
    elif wire_name == "openai-chat":
        marked["choices"][0]["finish_reason"] = "length"
    else:
        marked["status"] = "incomplete"
        marked["incomplete_details"] = {"reason": "max_output_tokens"}
    result: JsonObject = marked
    return result


@dataclass
class CuttingModel(GarblingModel):
    """A `ScriptedModel` whose every response stopped at the output limit (the first with its code call cut)."""

    async def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> JsonObject:
        return cut(self.wire.name, await super().complete(request, on_text=on_text))


async def test_a_response_cut_at_max_tokens_says_so_for_a_code_call_and_stops_a_cut_answer(wire: WireFormat) -> None:
    """A cut call reads that the output limit cut it (not "not valid JSON"); a cut answer is `stopped="max_tokens"`."""
    model = CuttingModel(ScriptedModel(wire, [step("Working.", "return 1"), step("Here is the report: 1. Kestrel")]))
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        agent = Agent(cm, model, system=SYSTEM, max_tokens=1_000)
        result = await agent.run(PROMPT)
    assert (result.stopped, result.answer) == ("max_tokens", "Here is the report: 1. Kestrel")
    [(call, outcome)] = result.steps[0].executions
    assert outcome is None
    assert call.error == snapshot(
        "Your code was cut off at the output limit (1,000 tokens) before it ended, so it did not run. Send shorter code: split the work over several runs, and keep data out of the code."
    )
    assert call.error in wire.history_texts(agent.messages)
