"""OpenAI Chat Completions: `OpenAIChatWire` (the sans-IO wire format) and `OpenAIChatModel` (the SDK call).

OpenAI caches prompt prefixes automatically (no markers), so the request is the fixed `tools`, the system
prompt as the first message, then the history, appended to only: request N is a byte prefix of request N+1.
The chat API reports cache reads (`prompt_tokens_details.cached_tokens`, part of `prompt_tokens`) and no
cache writes.

Announcements: `user` (default) appends a user message after the tool messages; `tool_result` appends the
announcement to the tool message's content; `system` appends a `system` message. We use `system` rather than
`developer` mid-conversation: OpenAI treats `system` as `developer` for models that expect the latter, and
compatible servers know `system` far more widely.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from codemode.providers._openai import content_texts, openai_client, read_function_call, read_openai_usage
from codemode.providers._whole import read_whole
from codemode.providers.base import Turn, json_objects, place_announcements, token_count

if TYPE_CHECKING:
    from collections.abc import Sequence

    from openai import AsyncOpenAI

    from codemode.code_tool import CodeTool
    from codemode.providers.base import CodeCall, Placement, TextSink, ToolOutcome, Usage, WireFormat
    from sandbox import JsonObject, JsonValue


class OpenAIChatWire:
    """The Chat Completions shapes: function tools, `tool_calls`, `tool` messages.

    Args:
        tool_name: The name the `code` tool is given to the model under.
    """

    name: str = "openai-chat"

    def __init__(self, *, tool_name: str = "code") -> None:
        self.tool_name = tool_name

    def tools(self, tool: CodeTool) -> list[JsonObject]:
        """The `tools` field: the `code` tool as a function."""
        function: JsonObject = {
            "name": tool.name,
            "description": tool.description,
            "parameters": copy.deepcopy(tool.input_schema),
        }
        return [{"type": "function", "function": function}]

    def user_message(self, text: str) -> list[JsonObject]:
        """A user message."""
        return [{"role": "user", "content": text}]

    def request(
        self, *, model: str, system: str, messages: Sequence[JsonObject], tools: list[JsonObject], max_tokens: int
    ) -> JsonObject:
        """The `chat.completions.create` body: the system prompt first, then the history."""
        head: list[JsonValue] = [{"role": "system", "content": system}] if system else []
        sent: list[JsonValue] = [*head, *copy.deepcopy(list(messages))]
        return {"model": model, "max_completion_tokens": max_tokens, "tools": [*tools], "messages": sent}

    def read(self, response: JsonObject) -> Turn:
        """Text, `code` calls and usage of a `ChatCompletion` (as `model_dump(mode="json")` gives it)."""
        choices = json_objects(response.get("choices"))
        reply = choices[0].get("message") if choices else None
        reply = reply if isinstance(reply, dict) else {}
        content, refusal = reply.get("content"), reply.get("refusal")
        text = content if isinstance(content, str) else refusal if isinstance(refusal, str) else ""
        tool_calls = [_tool_call(call) for call in json_objects(reply.get("tool_calls"))]
        message: JsonObject = {"role": "assistant", "content": content if isinstance(content, str) else None}
        if isinstance(refusal, str):
            message["refusal"] = refusal
        elif message["content"] is None and not tool_calls:
            message["content"] = ""
        if tool_calls:
            message["tool_calls"] = [*tool_calls]
        calls = tuple(self._call(call) for call in tool_calls)
        cut = bool(choices) and choices[0].get("finish_reason") == "length"
        return Turn(text=text, calls=calls, usage=read_usage(response.get("usage")), messages=(message,), cut=cut)

    def _call(self, call: JsonObject) -> CodeCall:
        call_id = str(call.get("id", ""))
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        return read_function_call(call_id, function.get("name"), function.get("arguments"), tool_name=self.tool_name)

    def results(self, outcomes: Sequence[ToolOutcome], placement: Placement) -> list[JsonObject]:
        """A `tool` message per outcome, then the announcements as one user or system message if so placed."""
        results, announcements = place_announcements(outcomes, placement)
        messages: list[JsonObject] = [
            {"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in results
        ]
        if announcements:
            messages.append({"role": "system" if placement == "system" else "user", "content": announcements})
        return messages

    def history_texts(self, messages: Sequence[JsonObject]) -> list[str]:
        """Every text of a chat history: string contents and text parts."""
        texts: list[str] = []
        for message in messages:
            texts.extend(content_texts(message.get("content")))
        return texts


def read_usage(usage: JsonValue) -> Usage:
    """Normalise a chat `usage` object (`prompt_tokens` includes the cached tokens)."""
    return read_openai_usage(usage, input_key="prompt_tokens", output_key="completion_tokens")


def _tool_call(call: JsonObject) -> JsonObject:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    arguments = function.get("arguments")
    clean: JsonObject = {"name": function.get("name"), "arguments": arguments if isinstance(arguments, str) else ""}
    return {"id": call.get("id"), "type": "function", "function": clean}


class OpenAIChatModel:
    """Chat Completions through the official `openai` SDK (which reads `OPENAI_API_KEY`/`_BASE_URL`).

    API errors (rate limit, overload, bad request, authentication) raise the SDK's own exceptions, after the
    SDK's own retries.

    Example:
        ```python
        model = OpenAIChatModel()
        request = model.wire.request(model="gpt-4.1", system="...", messages=history, tools=tools, max_tokens=4096)
        turn = model.wire.read(await model.complete(request, on_text=print))
        ```

    Args:
        client: An `openai.AsyncOpenAI` to use; by default one is made from the environment.
        stream: Stream the response (text reaches `on_text` as it arrives) or make one plain request.
    """

    def __init__(self, *, client: AsyncOpenAI | None = None, stream: bool = True) -> None:
        if client is None:
            client = openai_client()
        self.client = client
        self.stream = stream
        self.wire: WireFormat = OpenAIChatWire()

    async def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> JsonObject:
        """Send `request` and return a `ChatCompletion` as JSON data (accumulated from chunks when streamed)."""
        params: dict[str, Any] = dict(request)
        if not self.stream:
            completion = await self.client.chat.completions.create(**params)
            data: JsonObject = completion.model_dump(mode="json")
            return data
        chunks = await self.client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        from openai import APIError

        whole = await read_whole(chunks.response, key="object", value="chat.completion", error=APIError)
        if whole is not None:
            return whole
        accumulator = _ChunkAccumulator()
        async for chunk in chunks:
            text = accumulator.add(chunk.model_dump(mode="json"))
            if text and on_text is not None:
                on_text(text)
        return accumulator.completion()


class _ChunkAccumulator:
    """Builds a `ChatCompletion`-shaped dict from `ChatCompletionChunk`s (content and tool-call fragments)."""

    def __init__(self) -> None:
        self.head: JsonObject = {}
        self.content: list[str] = []
        self.tool_calls: dict[int, JsonObject] = {}
        self.finish_reason: JsonValue = None
        self.usage: JsonValue = None

    def add(self, chunk: JsonObject) -> str:
        """Take one chunk; return its text delta."""
        self.head = self.head or {key: chunk.get(key) for key in ("id", "created", "model")}
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        text = ""
        for choice in json_objects(chunk.get("choices")):
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            if isinstance(delta.get("content"), str):
                text += str(delta["content"])
            for fragment in json_objects(delta.get("tool_calls")):
                self._add_tool_call(fragment)
        self.content.append(text)
        return text

    def _add_tool_call(self, fragment: JsonObject) -> None:
        index = token_count(fragment.get("index"))
        call = self.tool_calls.setdefault(index, {"id": None, "type": "function", "name": "", "arguments": ""})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function")
        if isinstance(function, dict):
            call["name"] = f"{call['name']}{function.get('name') or ''}"
            call["arguments"] = f"{call['arguments']}{function.get('arguments') or ''}"

    def completion(self) -> JsonObject:
        """The accumulated response."""
        message: JsonObject = {"role": "assistant", "content": "".join(self.content) or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for _, call in sorted(self.tool_calls.items())
            ]
        choice: JsonObject = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {**self.head, "object": "chat.completion", "choices": [choice], "usage": self.usage}
