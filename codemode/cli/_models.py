"""Provider names on the command line -> wire formats and SDK-backed models (imported only when used)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codemode.providers.base import Model, WireFormat

PROVIDERS: dict[str, tuple[str, str, str]] = {
    "anthropic": ("codemode.providers.anthropic", "AnthropicWire", "AnthropicModel"),
    "openai-chat": ("codemode.providers.openai_chat", "OpenAIChatWire", "OpenAIChatModel"),
    "openai-responses": ("codemode.providers.openai_responses", "OpenAIResponsesWire", "OpenAIResponsesModel"),
}


def _attribute(provider: str, index: int) -> Any:
    module_name = PROVIDERS[provider][0]
    return getattr(importlib.import_module(module_name), PROVIDERS[provider][index])


def wire_for(provider: str) -> WireFormat:
    """The wire format of a provider."""
    wire: WireFormat = _attribute(provider, 1)()
    return wire


def model_for(provider: str, *, stream: bool = True) -> Model:
    """The SDK-backed model of a provider; the SDK reads its key and base URL from the environment."""
    model: Model = _attribute(provider, 2)(stream=stream)
    return model
