"""The Anthropic Messages API: `AnthropicWire` (the sans-IO wire format) and `AnthropicModel` (the SDK call).

Prompt caching. The cache covers tools -> system -> messages up to a `cache_control` breakpoint. `request()`
marks three blocks, all in the request copy only (the history it is given is never changed, so a stored
conversation holds no marker): the system block (tools + system, reusable across conversations), the last
block of the last message (writes this request's prefix), and the last block before the last assistant
message, which is exactly where the previous request put its moving marker (reads that entry without relying
on the 20-block look-back, which a turn with many parallel calls could exceed). That is three of the four
breakpoints allowed. The markers move as the conversation grows (the multi-turn pattern Anthropic documents),
so request N is a byte prefix of request N+1 *once `cache_control` keys are removed*; the tests compare
requests that way and check where the markers sit. String contents are sent as one text block in every
request so a marker can sit on them without changing their shape later. `caching="automatic"` sends the
top-level `cache_control` instead (the API marks the last cacheable block itself) and keeps the messages
byte-exact; `caching="off"` sends no marker.

Announcements: Anthropic has no mid-conversation system message, so `placement="system"` falls back to
`"user"`: text blocks after the `tool_result` blocks of the same user message (the API requires tool results
first in that message).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Literal

from codemode.providers._whole import read_whole
from codemode.providers.base import Turn, Usage, code_from_input, json_objects, token_count, unknown_tool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from anthropic import AsyncAnthropic

    from codemode.code_tool import CodeTool
    from codemode.providers.base import CodeCall, Placement, TextSink, ToolOutcome, WireFormat
    from sandbox import JsonObject, JsonValue

Caching = Literal["breakpoints", "automatic", "off"]
"""How requests ask for prompt caching (see the module docstring)."""

_EPHEMERAL: JsonObject = {"type": "ephemeral"}


class AnthropicWire:
    """The Messages API shapes: `tools`, `system` blocks, `tool_use` / `tool_result` content blocks.

    Args:
        caching: `breakpoints` (default; explicit moving markers), `automatic` (top-level `cache_control`),
            or `off`.
        tool_name: The name the `code` tool is given to the model under.
    """

    name: str = "anthropic"

    def __init__(self, *, caching: Caching = "breakpoints", tool_name: str = "code") -> None:
        self.caching: Caching = caching
        self.tool_name = tool_name

    def tools(self, tool: CodeTool) -> list[JsonObject]:
        """The `tools` field: the `code` tool with its input schema."""
        return [{"name": tool.name, "description": tool.description, "input_schema": copy.deepcopy(tool.input_schema)}]

    def user_message(self, text: str) -> list[JsonObject]:
        """A user message with one text block (a block, so a breakpoint can be put on it)."""
        return [{"role": "user", "content": [{"type": "text", "text": text}]}]

    def request(
        self, *, model: str, system: str, messages: Sequence[JsonObject], tools: list[JsonObject], max_tokens: int
    ) -> JsonObject:
        """The `messages.create` body; breakpoints are added to a copy of the history, never to it."""
        system_block: JsonObject = {"type": "text", "text": system}
        sent = copy.deepcopy(list(messages))
        body: JsonObject = {"model": model, "max_tokens": max_tokens}
        if self.caching == "breakpoints":
            system_block["cache_control"] = dict(_EPHEMERAL)
            _mark_breakpoints(sent)
        elif self.caching == "automatic":
            body["cache_control"] = dict(_EPHEMERAL)
        if system:
            body["system"] = [system_block]
        body["tools"] = [*tools]
        body["messages"] = [*sent]
        return body

    def read(self, response: JsonObject) -> Turn:
        """Text, `code` calls and usage of a `Message` (as `model_dump(mode="json")` gives it)."""
        blocks = [_clean_block(block) for block in json_objects(response.get("content"))]
        blocks = [block for block in blocks if not (block.get("type") == "text" and not block.get("text"))]
        texts = [str(block["text"]) for block in blocks if block.get("type") == "text"]
        calls = tuple(self._call(block) for block in blocks if block.get("type") == "tool_use")
        # nothing left (Claude may end a turn with an empty text block): no message, since the API refuses an
        # assistant message with empty content anywhere but last, and merges the user messages around it
        messages: tuple[JsonObject, ...] = ({"role": "assistant", "content": [*blocks]},) if blocks else ()
        cut = response.get("stop_reason") == "max_tokens"
        usage = read_usage(response.get("usage"))
        return Turn(text="".join(texts), calls=calls, usage=usage, messages=messages, cut=cut)

    def _call(self, block: JsonObject) -> CodeCall:
        call_id = str(block.get("id", ""))
        name = block.get("name")
        if name != self.tool_name:
            return unknown_tool(call_id, name, self.tool_name)
        return code_from_input(call_id, block.get("input"))

    def results(self, outcomes: Sequence[ToolOutcome], placement: Placement) -> list[JsonObject]:
        """One user message: a `tool_result` block per outcome, then announcements as text blocks if so placed."""
        content: list[JsonValue] = []
        trailing: list[JsonValue] = []
        for outcome in outcomes:
            parts: list[JsonValue] = [{"type": "text", "text": outcome.text}]
            if outcome.announcement is not None:
                # Anthropic has no mid-conversation system message: `system` is sent as `user`.
                if placement == "tool_result":
                    parts.append({"type": "text", "text": outcome.announcement})
                else:
                    trailing.append({"type": "text", "text": outcome.announcement})
            block: JsonObject = {"type": "tool_result", "tool_use_id": outcome.call_id, "content": parts}
            if outcome.is_error:
                block["is_error"] = True
            content.append(block)
        return [{"role": "user", "content": content + trailing}]

    def history_texts(self, messages: Sequence[JsonObject]) -> list[str]:
        """Every text of a Messages API history: string contents, text blocks, `tool_result` contents."""
        texts: list[str] = []
        for message in messages:
            _collect_texts(message.get("content"), texts)
        return texts


def read_usage(usage: JsonValue) -> Usage:
    """Normalise a Messages API `usage` object (`input_tokens` counts only the uncached input)."""
    fields = usage if isinstance(usage, dict) else {}
    return Usage(
        cache_read_tokens=token_count(fields.get("cache_read_input_tokens")),
        cache_write_tokens=token_count(fields.get("cache_creation_input_tokens")),
        uncached_input_tokens=token_count(fields.get("input_tokens")),
        output_tokens=token_count(fields.get("output_tokens")),
    )


def _mark_breakpoints(messages: list[JsonObject]) -> None:
    """Mark the last block, and the last block before the last assistant message (the previous request's end)."""
    for message in messages:
        # A string content is sent as one text block in every request, so a marker can sit on it.
        if isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    positions = {len(messages) - 1, last_assistant - 1} - {-1, -2}
    for position in positions:
        content = messages[position].get("content")
        if isinstance(content, list) and content and isinstance(content[-1], dict):
            content[-1]["cache_control"] = dict(_EPHEMERAL)


def _collect_texts(content: JsonValue, texts: list[str]) -> None:
    if isinstance(content, str):
        texts.append(content)
        return
    for block in json_objects(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(str(block["text"]))
        elif block.get("type") == "tool_result":
            _collect_texts(block.get("content"), texts)


def _clean_block(block: JsonObject) -> JsonObject:
    # Response-only fields the SDK dumps as null (`citations`, `caller`...) are not valid in a request.
    return {key: value for key, value in block.items() if value is not None}


class AnthropicModel:
    """The Messages API through the official `anthropic` SDK (which reads `ANTHROPIC_API_KEY`/`_BASE_URL`).

    API errors (rate limit, overload, bad request, authentication) raise the SDK's own exceptions, after the
    SDK's own retries. Without streaming, the SDK refuses a `max_tokens` it expects to take over ten minutes.

    Example:
        ```python
        model = AnthropicModel()
        wire = model.wire
        request = wire.request(model="claude-sonnet-4-5", system="...", messages=history, tools=tools,
                               max_tokens=4096)
        turn = wire.read(await model.complete(request, on_text=print))
        ```

    Args:
        client: An `anthropic.AsyncAnthropic` to use; by default one is made from the environment.
        stream: Stream the response (text reaches `on_text` as it arrives) or make one plain request.
        wire: The wire format (to choose its caching mode).
    """

    def __init__(
        self, *, client: AsyncAnthropic | None = None, stream: bool = True, wire: AnthropicWire | None = None
    ) -> None:
        if client is None:
            try:
                from anthropic import AsyncAnthropic
            except ImportError as e:  # pragma: no cover - depends on the environment
                raise ImportError('Install the `anthropic` extra: pip install "codemode[anthropic]"') from e
            client = AsyncAnthropic()
        self.client = client
        self.stream = stream
        self.wire: WireFormat = wire or AnthropicWire()

    async def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> JsonObject:
        """Send `request` and return the final `Message` as JSON data."""
        params: dict[str, Any] = dict(request)
        if not self.stream:
            message = await self.client.messages.create(**params)
            data: JsonObject = message.model_dump(mode="json")
            return data
        async with self.client.messages.stream(**params) as stream:
            from anthropic import APIError

            whole = await read_whole(stream.response, key="type", value="message", error=APIError)
            if whole is not None:
                return whole
            async for text in stream.text_stream:
                if on_text is not None:
                    on_text(text)
            final = await stream.get_final_message()
        data = final.model_dump(mode="json")
        return data
