"""Shared fakes for the provider tests: a catalog, a scripted conversation, fake servers speaking each
provider's wire format (JSON and SSE) behind `httpx2.MockTransport`, and a minimal agent loop.

Run as a script (`python provider_fakes.py PROVIDER SAVED.json`) it resumes a saved conversation in a new
process and prints each request body it sent as one JSON line, then the final discovery state.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx2

from codemode import Catalog, CodeMode, DiscoveryState
from codemode.code_tool import CodeTool
from codemode.providers.base import Model, Placement, ToolOutcome, Turn, WireFormat

if TYPE_CHECKING:
    from collections.abc import Callable

MODEL = "test-model"
TOOL = CodeTool(name="code", description="Run Python.", input_schema={"type": "object"})
"""A small `code` tool for the payload snapshots."""
ANNOUNCEMENT = (
    "<tools-discovered>\n# new tool: get_weather [17a110ed48b9]\nasync def get_weather(): ...\n</tools-discovered>"
)
"""A short announcement for the placement tests."""
OUTCOMES: Final = (
    ToolOutcome(call_id="call_1", text="found 1 tool", announcement=ANNOUNCEMENT),
    ToolOutcome(call_id="call_2", text="Error: boom", is_error=True),
)
"""Two results to write back: one that announces a tool, one that failed."""
SYSTEM = "You are a travel assistant. Use the `code` tool to find and call tools."
PROMPT = "Plan my two days in Paris: weather, a hotel, flights, and tell Ana."
MAX_TOKENS = 1024
SAVE_AFTER = 5
"""Requests made before the conversation is saved and resumed in another process."""

_SERVICES: dict[str, list[tuple[str, str, dict[str, str]]]] = {
    "weather": [
        ("get_weather", "Get the current weather for a city.", {"city": "string"}),
        (
            "get_forecast",
            "Get the weather forecast for a city for the next days.",
            {"city": "string", "days": "integer"},
        ),
        ("get_air_quality", "Get the air quality index of a city.", {"city": "string"}),
    ],
    "email": [
        (
            "send_email",
            "Send an email message to a recipient.",
            {"to": "string", "subject": "string", "body": "string"},
        ),
        ("list_inbox", "List the latest email messages in the inbox.", {"limit": "integer"}),
        ("read_email", "Read one email message by id.", {"message_id": "string"}),
    ],
    "calendar": [
        ("list_events", "List calendar events between two dates.", {"start": "string", "end": "string"}),
        ("create_event", "Create a calendar event.", {"title": "string", "start": "string"}),
        ("delete_event", "Delete a calendar event by id.", {"event_id": "string"}),
    ],
    "crm": [
        ("crm_find_contact", "Find a CRM contact by name.", {"name": "string"}),
        ("crm_create_contact", "Create a CRM contact.", {"name": "string", "email": "string"}),
        ("crm_delete_contact", "Delete a CRM contact by id.", {"contact_id": "string"}),
    ],
    "travel": [
        (
            "search_flights",
            "Search flights between two airports on a date.",
            {"origin": "string", "destination": "string", "date": "string"},
        ),
        ("book_flight", "Book a flight by its offer id.", {"offer_id": "string"}),
        ("search_hotels", "Search hotels in a city for a stay.", {"city": "string", "nights": "integer"}),
        ("book_hotel", "Book a hotel room by its offer id.", {"offer_id": "string"}),
    ],
    "money": [
        (
            "convert_currency",
            "Convert an amount of money between currencies.",
            {"amount": "number", "source": "string", "target": "string"},
        ),
        (
            "get_exchange_rate",
            "Get the exchange rate between two currencies.",
            {"source": "string", "target": "string"},
        ),
        ("create_invoice", "Create an invoice for a customer.", {"customer": "string", "amount": "number"}),
        ("list_invoices", "List the invoices of a customer.", {"customer": "string"}),
    ],
    "work": [
        ("create_task", "Create a task in the todo list.", {"title": "string"}),
        ("list_tasks", "List the open tasks of the todo list.", {"limit": "integer"}),
        ("complete_task", "Mark a todo task as done.", {"task_id": "string"}),
        ("create_note", "Write a note.", {"text": "string"}),
        ("list_notes", "List notes.", {"limit": "integer"}),
    ],
    "info": [
        ("get_stock_price", "Get the latest stock price of a ticker symbol.", {"symbol": "string"}),
        ("get_headlines", "Get the latest news headlines on a topic.", {"topic": "string"}),
        ("translate_text", "Translate a text into another language.", {"text": "string", "language": "string"}),
        ("geocode", "Get the coordinates of an address.", {"address": "string"}),
        ("directions", "Get directions between two places.", {"origin": "string", "destination": "string"}),
    ],
}


def _handler(name: str) -> Callable[..., Any]:
    def handler(**kwargs: Any) -> Any:
        if name == "crm_delete_contact":
            raise PermissionError(f"contact {kwargs['contact_id']} is locked")
        if name == "get_weather":
            return {"city": kwargs["city"], "temp_c": 18 + len(kwargs["city"]) % 5, "sky": "clear"}
        return {"tool": name, "args": kwargs, "ok": True}

    return handler


def build_catalog() -> Catalog:
    """About thirty tools with deterministic handlers; `crm_delete_contact` always raises."""
    catalog = Catalog()
    for tools in _SERVICES.values():
        for name, description, params in tools:
            properties: dict[str, Any] = {key: {"type": kind} for key, kind in params.items()}
            parameters = {"type": "object", "properties": properties, "required": list(params)}
            catalog.add(name=name, description=description, parameters=parameters, handler=_handler(name))
    return catalog


@dataclass(frozen=True)
class Step:
    """One scripted model turn: visible text and `code` calls (none: the final answer)."""

    text: str
    codes: tuple[str, ...] = ()


STEPS: tuple[Step, ...] = (
    Step(
        "Let me look for weather tools.", ('print(await tools.search("weather forecast for a city", max_results=2))',)
    ),
    Step("Checking Paris.", ('print(await tools.get_weather(city="Paris"))',)),
    Step("And with a number?", ("return await tools.get_weather(city=5)",)),
    Step("Now email.", ('print(await tools.search("send an email message", max_results=2))',)),
    Step("Sending.", ('return await tools.send_email(to="ana@example.com", subject="Paris", body="Booked!")',)),
    Step("Calendar next.", ('print(await tools.search("calendar events", max_results=2))',)),
    Step("Removing the old contact.", ('return await tools.crm_delete_contact(contact_id="c-42")',)),
    Step(
        "Money, concurrently.",
        (
            (
                "import asyncio\n"
                "a, b = await asyncio.gather(\n"
                '    tools.convert_currency(amount=100, source="EUR", target="USD"),\n'
                '    tools.get_exchange_rate(source="EUR", target="GBP"),\n'
                ")\nreturn [a, b]"
            ),
        ),
    ),
    Step("Weather again.", ('print(await tools.search("weather forecast for a city", max_results=2))',)),
    Step("Hotels.", ('print(await tools.describe("book_hotel"))',)),
    Step("Flights.", ('print(await tools.search("search flights airports", max_results=3))',)),
    Step(
        "Two things at once.",
        ('print(await tools.search("todo tasks", max_results=2))', 'return await tools.get_stock_price(symbol="ACME")'),
    ),
    Step("Both cities.", ('return [await tools.get_weather(city=c) for c in ["Paris", "Rome"]]',)),
    Step("Paris: clear, 19 °C. Ana has the booking; the hotel and flights are found."),
)


def prompt_tokens(turn: int) -> int:
    """A plausible prompt size for request `turn` (0-based), in tokens."""
    return 1900 + 620 * turn


def sse(events: list[tuple[str | None, dict[str, Any]]], *, done: bool = False) -> bytes:
    """Server-sent events bytes: `event:` (if any) and `data:` lines, a blank line after each event."""
    lines = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        lines.append(f"data: {json.dumps(data)}\n")
    if done:
        lines.append("data: [DONE]\n")
    return ("\n".join(lines) + "\n").encode()


def _pieces(text: str, count: int = 3) -> list[str]:
    size = max(len(text) // count, 1)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# --- Anthropic Messages -------------------------------------------------------------------------------------


def anthropic_usage(turn: int) -> dict[str, Any]:
    read = prompt_tokens(turn - 1) if turn else 0
    return {
        "input_tokens": 3,
        "cache_creation_input_tokens": prompt_tokens(turn) - read - 3,
        "cache_read_input_tokens": read,
        "output_tokens": 80 + 7 * turn,
    }


def anthropic_reply(turn: int, step: Step, stream: bool) -> httpx2.Response:
    content: list[dict[str, Any]] = [{"type": "text", "text": step.text, "citations": None}]
    content += [
        {"type": "tool_use", "id": f"toolu_{turn:02d}_{j}", "name": "code", "input": {"code": code}}
        for j, code in enumerate(step.codes)
    ]
    usage = anthropic_usage(turn)
    message = {
        "id": f"msg_{turn:02d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "tool_use" if step.codes else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    if not stream:
        return httpx2.Response(200, json=message)
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(content):
        if block["type"] == "text":
            first, deltas = (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])],
            )
        else:
            first = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(block["input"]))]
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": first}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}})
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(events))


def anthropic_turns(body: dict[str, Any]) -> int:
    return sum(message["role"] == "assistant" for message in body["messages"])


# --- OpenAI Chat Completions --------------------------------------------------------------------------------


def chat_usage(turn: int) -> dict[str, Any]:
    prompt, cached = prompt_tokens(turn), (prompt_tokens(turn - 1) // 128 * 128 if turn else 0)
    completion = 80 + 7 * turn
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def chat_reply(turn: int, step: Step, stream: bool) -> httpx2.Response:
    calls = [
        {
            "id": f"call_{turn:02d}_{j}",
            "type": "function",
            "function": {"name": "code", "arguments": json.dumps({"code": code})},
        }
        for j, code in enumerate(step.codes)
    ]
    head = {"id": f"chatcmpl-{turn:02d}", "created": 1_760_000_000 + turn, "model": MODEL}
    finish = "tool_calls" if calls else "stop"
    if not stream:
        message = {"role": "assistant", "content": step.text, "refusal": None, "annotations": []}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        body = {**head, "object": "chat.completion", "choices": [choice], "usage": chat_usage(turn)}
        return httpx2.Response(200, json=body)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in _pieces(step.text)]
    for j, call in enumerate(calls):
        first = {"index": j, "id": call["id"], "type": "function", "function": {"name": "code", "arguments": ""}}
        deltas.append({"tool_calls": [first]})
        deltas += [
            {"tool_calls": [{"index": j, "function": {"arguments": p}}]} for p in _pieces(call["function"]["arguments"])
        ]
    chunk = {**head, "object": "chat.completion.chunk", "usage": None}
    chunks = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({**chunk, "choices": [], "usage": chat_usage(turn)})
    content = sse([(None, c) for c in chunks], done=True)
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=content)


def chat_turns(body: dict[str, Any]) -> int:
    return sum(message["role"] == "assistant" for message in body["messages"])


# --- OpenAI Responses ---------------------------------------------------------------------------------------


def responses_usage(turn: int) -> dict[str, Any]:
    prompt, cached = prompt_tokens(turn), (prompt_tokens(turn - 1) // 128 * 128 if turn else 0)
    output = 80 + 7 * turn
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 24},
        "total_tokens": prompt + output,
    }


def responses_reply(turn: int, step: Step, stream: bool) -> httpx2.Response:
    text_part = {"type": "output_text", "text": step.text, "annotations": [], "logprobs": []}
    output: list[dict[str, Any]] = [
        {"type": "reasoning", "id": f"rs_{turn:02d}", "summary": [], "encrypted_content": None},
        {
            "type": "message",
            "id": f"msg_{turn:02d}",
            "status": "completed",
            "role": "assistant",
            "content": [text_part],
        },
    ]
    output += [
        {
            "type": "function_call",
            "id": f"fc_{turn:02d}_{j}",
            "call_id": f"call_{turn:02d}_{j}",
            "name": "code",
            "arguments": json.dumps({"code": code}),
            "status": "completed",
        }
        for j, code in enumerate(step.codes)
    ]
    response = {
        "id": f"resp_{turn:02d}",
        "object": "response",
        "created_at": 1_760_000_000 + turn,
        "status": "completed",
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": responses_usage(turn),
    }
    if not stream:
        return httpx2.Response(200, json=response)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": [], "usage": None}}
    ]
    for index, item in enumerate(output):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            events += [
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": p,
                    "logprobs": [],
                }
                for p in _pieces(step.text)
            ]
        elif item["type"] == "function_call":
            events += [
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": p,
                }
                for p in _pieces(item["arguments"])
            ]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    numbered = [(e["type"], {**e, "sequence_number": n}) for n, e in enumerate(events)]
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(numbered))


def responses_turns(body: dict[str, Any]) -> int:
    return sum(item.get("type") == "message" and item.get("role") == "assistant" for item in body["input"])


# --- Providers, server and loop -----------------------------------------------------------------------------


@dataclass
class FakeServer:
    """Records every request body and replies with the scripted step the history has reached."""

    reply: Callable[[int, Step, bool], httpx2.Response]
    turns: Callable[[dict[str, Any]], int]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        turn = self.turns(body)
        return self.reply(turn, STEPS[turn], bool(body.get("stream")))


def make_model(provider: str, server: Callable[[httpx2.Request], httpx2.Response], *, stream: bool) -> Model:
    """The provider's SDK-backed model, its official client talking to `server` (no retries: a fake never fails
    but on purpose)."""
    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    client_args: dict[str, Any] = {
        "api_key": "test",
        "base_url": "http://test/v1",
        "http_client": http_client,
        "max_retries": 0,
    }
    if provider == "anthropic":
        from anthropic import AsyncAnthropic

        from codemode.providers.anthropic import AnthropicModel

        return AnthropicModel(client=AsyncAnthropic(**{**client_args, "base_url": "http://test"}), stream=stream)
    from openai import AsyncOpenAI

    client = AsyncOpenAI(**client_args)
    if provider == "openai-chat":
        from codemode.providers.openai_chat import OpenAIChatModel

        return OpenAIChatModel(client=client, stream=stream)
    from codemode.providers.openai_responses import OpenAIResponsesModel

    return OpenAIResponsesModel(client=client, stream=stream)


SERVERS: dict[str, tuple[Callable[[int, Step, bool], httpx2.Response], Callable[[dict[str, Any]], int]]] = {
    "anthropic": (anthropic_reply, anthropic_turns),
    "openai-chat": (chat_reply, chat_turns),
    "openai-responses": (responses_reply, responses_turns),
}


def fake_server(provider: str) -> FakeServer:
    reply, turns = SERVERS[provider]
    return FakeServer(reply=reply, turns=turns)


@dataclass
class Conversation:
    """A conversation driven by the minimal loop below: plain-data history plus the live discovery state."""

    wire: WireFormat
    messages: list[dict[str, Any]]
    state: DiscoveryState
    tools: list[dict[str, Any]]
    turns: list[Turn] = field(default_factory=list)
    streamed: list[str] = field(default_factory=list)
    announcements: list[str] = field(default_factory=list)


async def converse(
    model: Model,
    cm: CodeMode,
    conversation: Conversation,
    *,
    placement: Placement = "tool_result",
    max_requests: int = 99,
) -> Conversation:
    """Request, run each `code` call, write the outcomes back; stop at a final answer or `max_requests`."""
    wire = conversation.wire
    for _ in range(max_requests):
        request = wire.request(
            model=MODEL, system=SYSTEM, messages=conversation.messages, tools=conversation.tools, max_tokens=MAX_TOKENS
        )
        turn = wire.read(await model.complete(request, on_text=conversation.streamed.append))
        conversation.turns.append(turn)
        conversation.messages.extend(turn.messages)
        if not turn.calls:
            break
        outcomes = []
        for call in turn.calls:
            if call.error is not None:
                outcomes.append(ToolOutcome(call_id=call.id, text=call.error, is_error=True))
                continue
            result = await cm.execute(call.code, conversation.state)
            if result.announcement is not None:
                conversation.announcements.append(result.announcement)
            outcomes.append(
                ToolOutcome(call_id=call.id, text=result.text, is_error=not result.ok, announcement=result.announcement)
            )
        conversation.messages.extend(wire.results(outcomes, placement))
    return conversation


def new_conversation(model: Model, cm: CodeMode) -> Conversation:
    return Conversation(
        wire=model.wire,
        messages=list(model.wire.user_message(PROMPT)),
        state=cm.new_state(),
        tools=model.wire.tools(cm.tool),
    )


def prompt_json(provider: str, body: dict[str, Any]) -> str:
    """The serialized prompt of a request (Anthropic's moving `cache_control` markers removed)."""
    messages = body["input"] if provider == "openai-responses" else body["messages"]
    return json.dumps(strip_cache_control(messages) if provider == "anthropic" else messages)


def strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: strip_cache_control(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(item) for item in value]
    return value


def system_of(provider: str, body: dict[str, Any]) -> str:
    match provider:
        case "anthropic":
            return json.dumps(body["system"])
        case "openai-chat":
            return json.dumps(body["messages"][0])
        case _:
            return json.dumps(body["instructions"])


async def full_run(
    provider: str, *, stream: bool, placement: Placement = "tool_result", max_requests: int = 99
) -> tuple[Conversation, FakeServer]:
    """A fresh conversation through the provider's SDK model and fake server."""
    server = fake_server(provider)
    model = make_model(provider, server, stream=stream)
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        conversation = await converse(
            model, cm, new_conversation(model, cm), placement=placement, max_requests=max_requests
        )
    return conversation, server


async def placed_run(provider: str, placement: Placement) -> Conversation:
    """Five requests with announcements at `placement`, checked to be prefix-stable and to hold the state."""
    conversation, server = await full_run(provider, stream=False, placement=placement, max_requests=5)
    assert_prefix_stable(provider, server.bodies)
    texts = conversation.wire.history_texts(conversation.messages)
    assert DiscoveryState.from_history(texts) == conversation.state
    return conversation


def assert_prefix_stable(provider: str, bodies: list[dict[str, Any]]) -> None:
    """Same tools and system bytes in every request; each prompt a strict byte prefix of the next one's."""
    assert len({json.dumps(body["tools"]) for body in bodies}) == 1
    assert len({system_of(provider, body) for body in bodies}) == 1
    prompts = [prompt_json(provider, body) for body in bodies]
    for before, after in itertools.pairwise(prompts):
        assert len(after) > len(before)
        assert after.startswith(before[:-1]), (before, after)


_NEW_TOOL = re.compile(r"^# new tool: (\S+) \[", re.MULTILINE)
_SEEN_TOOL = re.compile(r"^async def (\w+)\(.*  # \[[0-9a-f]{12}\](?: (.+))?$", re.MULTILINE)


def announced_names(texts: list[str]) -> list[str]:
    """Names of the tools announced as new in these texts, as often as they are announced."""
    return [name for text in texts for name in _NEW_TOOL.findall(text)]


def seen_names(texts: list[str]) -> list[str]:
    """Names of the tools announced as one line (found, not used) in these texts, as often as they are announced."""
    return [name or alias for text in texts for alias, name in _SEEN_TOOL.findall(text)]


Resumed = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]
"""Request bodies before the save, request bodies of the new process, and its final history and state."""


async def resume_in_new_process(
    provider: str, conversation: Conversation, tmp_path: Path
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Save `conversation` and continue it in a new Python process; its request bodies and final history."""
    saved = tmp_path / "saved.json"
    data = {"messages": conversation.messages, "state": conversation.state.to_json(), "tools": conversation.tools}
    await anyio.Path(saved).write_text(json.dumps(data))
    done = await anyio.run_process([sys.executable, __file__, provider, str(saved)], check=False)
    assert done.returncode == 0, done.stderr.decode()
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    return lines[:-1], lines[-1]


async def _resume(provider: str, saved: dict[str, Any]) -> None:
    """Continue a saved conversation (streamed) and print each request body, then the final state."""
    server = fake_server(provider)
    model = make_model(provider, server, stream=True)
    state = DiscoveryState.from_history(model.wire.history_texts(saved["messages"]))
    assert state == DiscoveryState.from_json(saved["state"]), (state, saved["state"])
    async with CodeMode(build_catalog(), isolation="inline") as cm:
        assert model.wire.tools(cm.tool) == saved["tools"]
        conversation = Conversation(
            wire=model.wire, messages=copy.deepcopy(saved["messages"]), state=state, tools=saved["tools"]
        )
        await converse(model, cm, conversation)
    for body in server.bodies:
        print(json.dumps(body))
    print(json.dumps({"state": conversation.state.to_json(), "messages": conversation.messages}))


if __name__ == "__main__":
    asyncio.run(_resume(sys.argv[1], json.loads(Path(sys.argv[2]).read_text())))
