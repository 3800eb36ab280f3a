"""What the sandbox's own code raises inside a run: `StopRun` ends it (a limit), the refusals say no to one thing.

Apart from the guards so that the modules the guards build on (the sandbox's classes, dunders and facades) raise
them without importing the guards: imports go one way, `_guards` -> `_dunders` -> `_classes` -> here.
"""

from __future__ import annotations

from typing import NoReturn

SEAL = object()
"""Passed by the sandbox's own code when it makes a `StopRun`; the model's code cannot reach it."""


class StopRun(GeneratorExit):  # a signal, not an error the code can handle
    """Ends the run: a limit was reached.

    A BaseException, so `except Exception` cannot keep it; a GeneratorExit, so a generator being closed (by the
    garbage collector, say) while it runs out of budget closes quietly instead of reporting an error.
    """

    def __init__(self, kind: str, message: str, *, seal: object = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        # Made by the sandbox, not by the code calling `type(signal)(...)`: only then is `kind` believed.
        self._sealed = seal is SEAL

    def again(self) -> StopRun:
        """A fresh signal saying the same: raising one instance from many frames chains its tracebacks."""
        return StopRun(self.kind, self.message, seal=SEAL if self.sealed() else None)

    def sealed(self) -> bool:
        """Whether the sandbox made this signal, so its `kind` is believed (never a subclass the code made)."""
        return type(self) is StopRun and vars(self).get("_sealed") is True


class ForbiddenError(AttributeError):
    """The code reached for something the sandbox hides."""


class ForbiddenImportError(ImportError):
    """The code imported a module the sandbox does not offer."""


def forbid(message: str) -> NoReturn:
    """Raise the sandbox's refusal with a message for the model."""
    raise ForbiddenError(message)
