"""Test doubles for codemode users: `ScriptedModel` replays a fixed script offline in any provider's format.

It answers each request with the next scripted step, shaped exactly like that provider's response, and reports
usage the way a provider with prefix caching would: the part of the request shared with the previous request
is read from the cache, the rest is written (Anthropic) or uncached (OpenAI). Tokens are estimated as bytes/4.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemode.providers.base import TextSink, WireFormat
    from sandbox import JsonObject, JsonValue

BYTES_PER_TOKEN = 4


@dataclass(frozen=True, kw_only=True)
class ScriptStep:
    """One scripted model response: some text, and zero or more `code` calls."""

    text: str = ""
    """What the assistant says (the final answer when there is no code)."""
    code: tuple[str, ...] = ()
    """The `code` calls, in order."""


def step(text: str = "", *code: str) -> ScriptStep:
    """A `ScriptStep` from text and code calls."""
    return ScriptStep(text=text, code=code)


def prompt_text(request: JsonObject) -> str:
    """The request as the provider caches it: everything but the history, then each history entry on a line.

    Cache markers are left out. Entries are written one by one (no enclosing list), so a request whose
    history only grew is an exact text prefix of the next one.
    """
    stripped = _strip_cache_markers(request)
    key = "input" if isinstance(stripped.get("input"), list) else "messages"
    history = stripped.pop(key, None) or []
    lines = [json.dumps(stripped, ensure_ascii=False, sort_keys=True)]
    lines += [json.dumps(entry, ensure_ascii=False) for entry in history]
    return "\n".join(lines) + "\n"


def _strip_cache_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_markers(v) for v in value]
    return value


def shared_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # binary search on prefix equality: fast for long prompts
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class ScriptedModel:
    """A `Model` that plays `script` one step per request, in `wire`'s response format.

    Example:
        ```python
        model = ScriptedModel(AnthropicWire(), [step("", 'print(await tools.search("weather"))'), step("Done.")])
        result = await Agent(cm, model).run("What's the weather?")
        ```
    """

    wire: WireFormat
    """The provider format to answer in."""
    script: Sequence[ScriptStep]
    """The responses, in order; running past the end answers with a final text."""
    requests: list[JsonObject] = field(default_factory=list)
    """Every request received."""
    _previous: str = ""

    async def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> JsonObject:
        """The next scripted response, with simulated cache usage."""
        self.requests.append(request)
        index = len(self.requests) - 1
        scripted = self.script[index] if index < len(self.script) else ScriptStep(text="(end of script)")
        if on_text and scripted.text:
            for word in scripted.text.split(" "):
                on_text(word + " ")
            on_text("\n")
        text = prompt_text(request)
        cached = shared_prefix(self._previous, text) // BYTES_PER_TOKEN
        total = len(text) // BYTES_PER_TOKEN
        self._previous = text
        output = (len(scripted.text) + sum(len(code) for code in scripted.code)) // BYTES_PER_TOKEN + 5
        builder = _BUILDERS[self.wire.name]
        return builder(index, str(request.get("model") or "scripted"), scripted, cached, total - cached, output)


def _anthropic(index: int, model: str, scripted: ScriptStep, cached: int, fresh: int, output: int) -> JsonObject:
    content: list[JsonValue] = [{"type": "text", "text": scripted.text}] if scripted.text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{index:03d}_{n}", "name": "code", "input": {"code": code}}
        for n, code in enumerate(scripted.code)
    ]
    return {
        "id": f"msg_{index:03d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if scripted.code else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 0,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": fresh,
            "output_tokens": output,
        },
    }


def _openai_chat(index: int, model: str, scripted: ScriptStep, cached: int, fresh: int, output: int) -> JsonObject:
    message: JsonObject = {"role": "assistant", "content": scripted.text or None}
    if scripted.code:
        message["tool_calls"] = [
            {
                "id": f"call_{index:03d}_{n}",
                "type": "function",
                "function": {"name": "code", "arguments": json.dumps({"code": code})},
            }
            for n, code in enumerate(scripted.code)
        ]
    return {
        "id": f"chatcmpl-{index:03d}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if scripted.code else "stop"}],
        "usage": {
            "prompt_tokens": cached + fresh,
            "completion_tokens": output,
            "total_tokens": cached + fresh + output,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def _openai_responses(index: int, model: str, scripted: ScriptStep, cached: int, fresh: int, output: int) -> JsonObject:
    items: list[JsonValue] = []
    if scripted.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{index:03d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": scripted.text, "annotations": []}],
            }
        )
    items += [
        {
            "type": "function_call",
            "id": f"fc_{index:03d}_{n}",
            "call_id": f"call_{index:03d}_{n}",
            "name": "code",
            "arguments": json.dumps({"code": code}),
            "status": "completed",
        }
        for n, code in enumerate(scripted.code)
    ]
    return {
        "id": f"resp_{index:03d}",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": items,
        "usage": {
            "input_tokens": cached + fresh,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": cached + fresh + output,
        },
    }


_BUILDERS = {"anthropic": _anthropic, "openai-chat": _openai_chat, "openai-responses": _openai_responses}
