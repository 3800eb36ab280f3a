"""OpenAI Responses: `OpenAIResponsesWire` (the sans-IO wire format) and `OpenAIResponsesModel` (the SDK call).

The whole input is sent each time with `store: false`: no server-side conversation, so the history is the
state and a conversation can move to another process or provider. The system prompt is `instructions` and
the history is `input`, appended to only: request N is a byte prefix of request N+1, and OpenAI's automatic
prompt cache reads it (`input_tokens_details.cached_tokens`, part of `input_tokens`; no cache writes are
reported). Output items are kept in the history as returned (reasoning items included; reasoning models with
`store: false` need `encrypted_reasoning=True` so those items can be sent back).

Announcements: `user` (default) appends a user message item, `tool_result` appends the announcement to the
`function_call_output`, `system` appends a `developer` message item (the Responses API's mid-conversation
instructions role).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from codemode.providers._openai import content_texts, openai_client, read_function_call, read_openai_usage
from codemode.providers._whole import read_whole
from codemode.providers.base import Turn, json_objects, place_announcements

if TYPE_CHECKING:
    from collections.abc import Sequence

    from openai import AsyncOpenAI

    from codemode.code_tool import CodeTool
    from codemode.providers.base import CodeCall, Placement, TextSink, ToolOutcome, Usage, WireFormat
    from sandbox import JsonObject, JsonValue

_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class OpenAIResponsesWire:
    """The Responses API shapes: function tools, `function_call` / `function_call_output` items.

    Args:
        encrypted_reasoning: Ask for `reasoning.encrypted_content`, so reasoning items can be sent back with
            `store: false` (reasoning models only; others reject it).
        tool_name: The name the `code` tool is given to the model under.
    """

    name: str = "openai-responses"

    def __init__(self, *, encrypted_reasoning: bool = False, tool_name: str = "code") -> None:
        self.encrypted_reasoning = encrypted_reasoning
        self.tool_name = tool_name

    def tools(self, tool: CodeTool) -> list[JsonObject]:
        """The `tools` field: the `code` tool as a (non-strict) function."""
        return [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": copy.deepcopy(tool.input_schema),
                "strict": False,
            }
        ]

    def user_message(self, text: str) -> list[JsonObject]:
        """A user message item."""
        return [{"role": "user", "content": text}]

    def request(
        self, *, model: str, system: str, messages: Sequence[JsonObject], tools: list[JsonObject], max_tokens: int
    ) -> JsonObject:
        """The `responses.create` body: `instructions`, the whole `input`, `store: false`."""
        body: JsonObject = {"model": model, "max_output_tokens": max_tokens, "store": False}
        if self.encrypted_reasoning:
            body["include"] = ["reasoning.encrypted_content"]
        if system:
            body["instructions"] = system
        body["tools"] = [*tools]
        body["input"] = [*copy.deepcopy(list(messages))]
        return body

    def read(self, response: JsonObject) -> Turn:
        """Text, `code` calls and usage of a `Response` (as `model_dump(mode="json")` gives it)."""
        items = [_clean_item(item) for item in json_objects(response.get("output"))]
        texts = [
            str(part["text"])
            for item in items
            if item.get("type") == "message"
            for part in json_objects(item.get("content"))
            if part.get("type") == "output_text" and isinstance(part.get("text"), str)
        ]
        calls = tuple(self._call(item) for item in items if item.get("type") == "function_call")
        details = response.get("incomplete_details")
        cut = isinstance(details, dict) and details.get("reason") == "max_output_tokens"
        usage = read_usage(response.get("usage"))
        return Turn(text="".join(texts), calls=calls, usage=usage, messages=tuple(items), cut=cut)

    def _call(self, item: JsonObject) -> CodeCall:
        call_id = str(item.get("call_id", ""))
        return read_function_call(call_id, item.get("name"), item.get("arguments"), tool_name=self.tool_name)

    def results(self, outcomes: Sequence[ToolOutcome], placement: Placement) -> list[JsonObject]:
        """A `function_call_output` item per outcome, then the announcements as a message item if so placed."""
        results, announcements = place_announcements(outcomes, placement)
        items: list[JsonObject] = [
            {"type": "function_call_output", "call_id": call_id, "output": text} for call_id, text in results
        ]
        if announcements:
            items.append({"role": "developer" if placement == "system" else "user", "content": announcements})
        return items

    def history_texts(self, messages: Sequence[JsonObject]) -> list[str]:
        """Every text of a Responses input: message contents, text parts, function call outputs."""
        texts: list[str] = []
        for item in messages:
            for key in ("content", "output"):
                texts.extend(content_texts(item.get(key)))
        return texts


def read_usage(usage: JsonValue) -> Usage:
    """Normalise a Responses `usage` object (`input_tokens` includes the cached tokens)."""
    return read_openai_usage(usage, input_key="input_tokens", output_key="output_tokens")


def _clean_item(item: JsonObject) -> JsonObject:
    # Response-only fields the SDK dumps as null are not valid input; content parts are cleaned the same way.
    clean: JsonObject = {key: value for key, value in item.items() if value is not None}
    if isinstance(clean.get("content"), list):
        clean["content"] = [
            {key: value for key, value in part.items() if value is not None} if isinstance(part, dict) else part
            for part in _list(clean["content"])
        ]
    return clean


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


class OpenAIResponsesModel:
    """The Responses API through the official `openai` SDK (which reads `OPENAI_API_KEY`/`_BASE_URL`).

    API errors (rate limit, overload, bad request, authentication) raise the SDK's own exceptions, after the
    SDK's own retries; a streamed response that fails, or ends without a final response, raises
    `openai.APIError`.

    Example:
        ```python
        model = OpenAIResponsesModel()
        request = model.wire.request(model="gpt-5", system="...", messages=history, tools=tools, max_tokens=4096)
        turn = model.wire.read(await model.complete(request, on_text=print))
        ```

    Args:
        client: An `openai.AsyncOpenAI` to use; by default one is made from the environment.
        stream: Stream the response (text reaches `on_text` as it arrives) or make one plain request.
        wire: The wire format (to ask for encrypted reasoning).
    """

    def __init__(
        self, *, client: AsyncOpenAI | None = None, stream: bool = True, wire: OpenAIResponsesWire | None = None
    ) -> None:
        self.client = client or openai_client()
        self.stream = stream
        self.wire: WireFormat = wire or OpenAIResponsesWire()

    async def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> JsonObject:
        """Send `request` and return the final `Response` as JSON data."""
        params: dict[str, Any] = dict(request)
        if not self.stream:
            response = await self.client.responses.create(**params)
            data: JsonObject = response.model_dump(mode="json")
            return data
        events = await self.client.responses.create(**params, stream=True)
        from openai import APIError

        whole = await read_whole(events.response, key="object", value="response", error=APIError)
        if whole is not None:
            return whole
        final: JsonObject | None = None
        problem = "the stream ended without a final response"
        async for event in events:
            if event.type == "response.output_text.delta" and on_text is not None:
                on_text(event.delta)
            elif event.type == "error":
                problem = f"{event.code}: {event.message}"
            elif event.type in _FINAL_EVENTS:
                final = event.model_dump(mode="json")["response"]
        if final is None or final.get("status") == "failed":
            error = final.get("error") if final else None
            if isinstance(error, dict):
                problem = f"{error.get('code')}: {error.get('message')}"
            raise APIError(f"The response failed ({problem}).", events.response.request, body=final)
        return final
