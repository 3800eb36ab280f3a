"""Provider wire formats (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses) and SDK-backed models.

Importing this package imports no SDK; `codemode.providers.anthropic.AnthropicModel` and the OpenAI models
import their SDK when first built.
"""

from __future__ import annotations
