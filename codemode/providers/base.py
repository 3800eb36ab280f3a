"""What every provider wire format offers the agent loop: the shared types and the `WireFormat` protocol.

A wire format is sans-IO: it turns the fixed `code` tool, tool results and announcements into one provider's
request shapes, and reads that provider's responses back (with the lenient readers here, which every wire
shares). It never imports the provider's SDK; the `Model` implementations that call the SDKs live beside it,
each importing its SDK lazily.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from codemode.code_tool import CodeTool
    from sandbox import JsonObject, JsonValue

Placement = Literal["user", "tool_result", "system"]
"""Where an announcement goes: inside the tool result of the run that discovered the tools (the default of every
host: stubs carry third-party text, which the provider then treats as tool output, never as the user's or the
system's voice), an appended user message, or a mid-conversation system/developer message where the provider
supports it."""


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token usage of one request, normalised across providers."""

    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache."""
    uncached_input_tokens: int = 0
    """Input tokens neither read from nor written to the cache."""
    output_tokens: int = 0
    """Tokens the model generated."""

    @property
    def input_tokens(self) -> int:
        """All input tokens of the request."""
        return self.cache_read_tokens + self.cache_write_tokens + self.uncached_input_tokens


@dataclass(frozen=True, kw_only=True)
class CodeCall:
    """One call of the `code` tool in a model response."""

    id: str
    """The provider's id for the call, echoed in its result."""
    code: str
    """The Python source the model wrote (empty if the arguments were not valid JSON; see `error`)."""
    error: str | None = None
    """Why the call's arguments could not be read, to send back as the result."""


@dataclass(frozen=True, kw_only=True)
class Turn:
    """A model response, read."""

    text: str
    """The assistant's visible text (the final answer when there are no calls)."""
    calls: tuple[CodeCall, ...] = ()
    """`code` calls to run, in order."""
    usage: Usage = field(default_factory=Usage)
    """Token usage of the request that produced this response."""
    messages: tuple[JsonObject, ...] = ()
    """The response as messages to append to the history, in the provider's format."""
    cut: bool = False
    """Whether the response stopped at the output limit (`max_tokens`): its text, or its last call, is incomplete."""


@dataclass(frozen=True, kw_only=True)
class ToolOutcome:
    """The result of one `code` call, to write back."""

    call_id: str
    """The `CodeCall.id` it answers."""
    text: str
    """The tool result text (`ExecuteResult.text`)."""
    is_error: bool = False
    """Whether the run failed."""
    announcement: str | None = None
    """The announcement of newly discovered tools, if any."""


def unknown_tool(call_id: str, name: object, tool_name: str) -> CodeCall:
    """The answer to a call of a tool other than `code`: an error result, not an exception."""
    return CodeCall(id=call_id, code="", error=f"Unknown tool {name!r}: the only tool is `{tool_name}`.")


def code_from_input(call_id: str, arguments: JsonValue) -> CodeCall:
    """The `code` call in a call's parsed arguments, or an error call saying what shape they must have."""
    code = arguments.get("code") if isinstance(arguments, dict) else None
    if not isinstance(code, str):
        return CodeCall(id=call_id, code="", error='The `code` tool takes `{"code": "<python source>"}`.')
    return CodeCall(id=call_id, code=code)


def json_objects(value: JsonValue) -> list[JsonObject]:
    """The objects of a JSON list; anything else, and items that are not objects, read as absent."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def token_count(value: JsonValue) -> int:
    """A count in a `usage` object: an int (not a bool), else 0 (absent, null or malformed)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def place_announcements(outcomes: Sequence[ToolOutcome], placement: Placement) -> tuple[list[tuple[str, str]], str]:
    """Each call's id and result text, and the announcements that need a message of their own.

    With `tool_result` placement an announcement is appended to its result text; otherwise it is collected
    into the second value (empty when there are none).
    """
    results: list[tuple[str, str]] = []
    separate: list[str] = []
    for outcome in outcomes:
        text = outcome.text
        if outcome.announcement is not None:
            if placement == "tool_result":
                text = f"{text}\n\n{outcome.announcement}"
            else:
                separate.append(outcome.announcement)
        results.append((outcome.call_id, text))
    return results, "\n\n".join(separate)


class WireFormat(Protocol):
    """One provider's request and response shapes (pure functions, no I/O)."""

    name: str
    """The provider's name as the CLI spells it (`anthropic`, `openai-chat`, `openai-responses`)."""

    def tools(self, tool: CodeTool) -> list[JsonObject]:
        """The `tools` request field holding only the `code` tool; built once per conversation."""
        ...

    def user_message(self, text: str) -> list[JsonObject]:
        """A user message, as history entries."""
        ...

    def read(self, response: JsonObject) -> Turn:
        """Read a (non-streamed, or accumulated streamed) response."""
        ...

    def results(self, outcomes: Sequence[ToolOutcome], placement: Placement) -> list[JsonObject]:
        """History entries carrying the tool results and their announcements, placed as asked."""
        ...

    def history_texts(self, messages: Sequence[JsonObject]) -> list[str]:
        """Every text in a stored history, in order (to rebuild the discovery state from announcements)."""
        ...

    def request(
        self, *, model: str, system: str, messages: Sequence[JsonObject], tools: list[JsonObject], max_tokens: int
    ) -> JsonObject:
        """The full request body as the provider's API takes it (prefix-stable: only messages grow)."""
        ...


TextSink = Callable[[str], None]
"""Receives streamed text as it arrives."""


class Model(Protocol):
    """Something that answers a request: a provider's SDK, or a script for offline runs and tests."""

    wire: WireFormat
    """The wire format the model speaks."""

    def complete(self, request: JsonObject, *, on_text: TextSink | None = None) -> Awaitable[JsonObject]:
        """Send `request` (from `WireFormat.request`) and return the response as plain JSON data."""
        ...
