"""Exceptions of the sandbox package, and the one a host function raises to speak to the model.

Tree:
    SandboxError            the sandbox was misused by the host (not by the model's code)
    ├── SandboxClosedError  `run` was called on a closed sandbox
    └── ConfinementError    a run process lacks a layer of confinement that `Confinement(require=True)` requires
    FunctionError           raise from a host function: the model's code sees an exception of class
                            `type_name` with `message`, and nothing else of the host crosses
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of errors the sandbox raises to the host."""


class SandboxClosedError(SandboxError):
    """`run` was called on a sandbox that is not open."""


class ConfinementError(SandboxError):
    """A run process could not put up every layer of confinement, and `Confinement(require=True)` asked for all."""


class FunctionError(Exception):
    """Raised by a host function to fail the call with a chosen exception name and message."""

    def __init__(self, message: str, *, type_name: str = "FunctionError") -> None:
        super().__init__(message)
        self.message = message
        self.type_name = type_name

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_function_error, (self.message, self.type_name))


def _rebuild_function_error(message: str, type_name: str) -> FunctionError:
    return FunctionError(message, type_name=type_name)
