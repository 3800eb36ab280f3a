"""Exceptions raised to the developer who embeds codemode.

Mistakes made by the model never raise: they come back as text in the result of `CodeMode.execute`.
What raises here is a mistake in the host's own setup: a bad tool definition, a name collision, a bad config.

Tree:
    CodemodeError
    ├── CatalogError        a tool definition or registration is invalid (duplicate name, alias collision)
    ├── ConfigError         a TOML config cannot be read or is invalid
    ├── ToolError           raised by a tool call; shown to the model as `ToolError: <type>: <message>`
    └── ApprovalError       a run cannot resume: no pending approval, or a record changed or signed elsewhere
"""

from __future__ import annotations


class CodemodeError(Exception):
    """Base class of every exception codemode raises."""


class CatalogError(CodemodeError):
    """A tool definition or registration is invalid."""


class ConfigError(CodemodeError):
    """A TOML config cannot be read or does not describe a catalog."""


class ToolError(CodemodeError):
    """A tool call failed; the message is what the model sees."""


class ApprovalError(CodemodeError):
    """A run cannot resume from a conversation state: it has no pending approval, or its record was changed."""
