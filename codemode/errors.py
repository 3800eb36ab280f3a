"""Exceptions raised to the developer who embeds codemode.

Mistakes made by the model never raise: they come back as text in the result of `CodeMode.execute`.
What raises here is a mistake in the host's own setup: a bad tool definition, a name collision, a bad config.

Tree:
    CodemodeError
    ├── CatalogError        a tool definition or registration is invalid (duplicate name, alias collision)
    ├── ConfigError         a TOML config cannot be read or is invalid
    ├── ToolError           raised by a handler for the model: shown as `ToolError: <message>`, never hidden
    └── ApprovalError       a run cannot resume: no pending approval, or a record changed or signed elsewhere
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import FunctionError

ERROR_NAME = "ToolError"
"""The exception name the model's code sees for every failed tool call."""


class CodemodeError(Exception):
    """Base class of every exception codemode raises."""


class CatalogError(CodemodeError):
    """A tool definition or registration is invalid."""


class ConfigError(CodemodeError):
    """A TOML config cannot be read or does not describe a catalog."""


class ToolError(CodemodeError):
    """Raised by a tool's handler to fail the call with a message written for the model.

    The model reads exactly the message (`ToolError: <message>`), even with `CodeMode(hide_errors=True)`,
    which hides the messages of other exceptions.
    """


def tool_error(message: str) -> FunctionError:
    """An error the model sees as `ToolError: <message>`."""
    from sandbox import FunctionError  # here, not at the top: commands that only read a catalog never load the sandbox

    return FunctionError(message, type_name=ERROR_NAME)


class ApprovalError(CodemodeError):
    """A run cannot resume from a conversation state: it has no pending approval, or its record was changed."""
