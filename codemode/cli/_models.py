"""Provider names on the command line -> wire formats and SDK-backed models (imported only when used)."""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codemode.providers.base import Model, WireFormat

PROVIDERS: dict[str, tuple[str, str, str]] = {
    "anthropic": ("codemode.providers.anthropic", "AnthropicWire", "AnthropicModel"),
    "openai-chat": ("codemode.providers.openai_chat", "OpenAIChatWire", "OpenAIChatModel"),
    "openai-responses": ("codemode.providers.openai_responses", "OpenAIResponsesWire", "OpenAIResponsesModel"),
}


KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai-chat": ("OPENAI_API_KEY",),
    "openai-responses": ("OPENAI_API_KEY",),
}
"""The environment variables each provider's SDK takes its credentials from (any one will do)."""


def missing_key(provider: str) -> str | None:
    """A one-line message saying what to set when no credential for `provider` is in the environment, else None."""
    keys = KEYS[provider]
    if any(os.environ.get(key) for key in keys):
        return None
    base = keys[0].replace("_API_KEY", "_BASE_URL")
    return f"codemode: set {keys[0]} to use --provider {provider} (and {base} for another endpoint)"


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
