"""What the sandbox's own code raises inside a run: `StopRun` ends it (a limit), the refusals say no to one thing.

Apart from the guards so that the modules the guards build on (the sandbox's classes, dunders and facades) raise
them without importing the guards: imports go one way, `guards` -> `dunders` -> `classes` -> here.
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


EXIT = "exit"
"""The kind of the signal a `SystemExit` becomes where it leaves the code: its message is "" for a clean exit, else
what the model reads."""


def exit_run(status: object = None, /) -> NoReturn:
    """`sys.exit`, `exit` and `quit`: end the run as CPython ends a script (status 0 or None: a success)."""
    raise SystemExit(status)


def exit_signal(exit: SystemExit | KeyboardInterrupt) -> StopRun:
    """What a `SystemExit` (or `KeyboardInterrupt`) that reached the edge of the run or of one of its tasks becomes.

    The status is read from the exception's own slot, by exact base types: no method of the code's runs.
    """
    if not issubclass(type(exit), SystemExit):  # by its type: a `__class__` of the code's is never asked
        return StopRun("runtime", f"{type(exit).__name__} ended the run", seal=SEAL)
    status = _CODE.__get__(exit)
    kind = type(status)
    if status is None:
        return StopRun(EXIT, "", seal=SEAL)
    if issubclass(kind, int):  # bool too, as CPython: `sys.exit(False)` is a clean exit
        number = int.__index__(status)
        if number == 0:
            return StopRun(EXIT, "", seal=SEAL)
        told = f"status {number}" if number.bit_length() <= 64 else "a non-zero status"
        return StopRun(EXIT, f"the code exited with {told}", seal=SEAL)
    if issubclass(kind, str):  # as CPython prints it, with status 1
        return StopRun(EXIT, str.__getitem__(status, slice(None)) or "the code exited with status 1", seal=SEAL)
    name = kind.__name__ if type(kind.__name__) is str else "object"
    return StopRun(EXIT, f"the code exited with status 1 (its status was a {name!r} object, not an int)", seal=SEAL)


_CODE = SystemExit.__dict__["code"]
"""`SystemExit.code`, the slot itself: a subclass's `code` property is never asked."""


class ForbiddenError(AttributeError):
    """The code reached for something the sandbox hides."""


class ForbiddenImportError(ImportError):
    """The code imported a module the sandbox does not offer."""


def forbid(message: str) -> NoReturn:
    """Raise the sandbox's refusal with a message for the model."""
    raise ForbiddenError(message)
