"""What the two OpenAI wire formats share: the SDK client, function-call arguments, usage, and message texts.

Chat Completions and Responses differ in their request and history shapes but agree on these: a function
call's arguments are a JSON string, the input token count includes the cached tokens (reported under
`<input key>_details.cached_tokens`, with no cache writes), and a content is a string or a list of parts with
a `text`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from codemode.providers.base import CodeCall, Usage, code_from_input, json_objects, token_count, unknown_tool

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from sandbox import JsonValue


def read_function_call(call_id: str, name: JsonValue, arguments: JsonValue, *, tool_name: str) -> CodeCall:
    """The `code` call in a function call named `name` whose arguments are a JSON string; an error call else."""
    if name != tool_name:
        return unknown_tool(call_id, name, tool_name)
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else None
    except json.JSONDecodeError as e:
        return CodeCall(
            id=call_id, code="", error=f'The arguments are not valid JSON ({e.msg}); send `{{"code": ...}}`.'
        )
    return code_from_input(call_id, parsed)


def read_openai_usage(usage: JsonValue, *, input_key: str, output_key: str) -> Usage:
    """Normalise an OpenAI `usage` object whose `input_key` count includes the cached tokens."""
    fields = usage if isinstance(usage, dict) else {}
    details = fields.get(f"{input_key}_details")
    cached = token_count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return Usage(
        cache_read_tokens=cached,
        uncached_input_tokens=max(token_count(fields.get(input_key)) - cached, 0),
        output_tokens=token_count(fields.get(output_key)),
    )


def content_texts(content: JsonValue) -> list[str]:
    """The texts of a content: the string itself, or the `text` of each part that has one."""
    if isinstance(content, str):
        return [content]
    return [str(part["text"]) for part in json_objects(content) if isinstance(part.get("text"), str)]


def openai_client() -> AsyncOpenAI:
    """An `openai.AsyncOpenAI` configured from the environment (the one place the `openai` SDK is imported)."""
    try:
        from openai import AsyncOpenAI
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError('Install the `openai` extra: pip install "codemode[openai]"') from e
    return AsyncOpenAI()
