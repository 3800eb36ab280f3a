"""One host-function call as both sides see it: the `Call` the code made, and the `HostFailure` that answers it.

A call travels from the proxy the code awaited (`sandbox._runtime.calls`) through a `Bridge` (direct when inline, over
the pipe from a worker) to the host's `Dispatcher`, as this one value with its one label. It lives apart from
`sandbox._runtime.calls` so that the host side (`sandbox._host.dispatch`, `sandbox._host.process`) never imports a
module that only runs the model's code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from sandbox.jsonvalue import JsonValue


class Call:
    """A call the code made: `function(...)`, or `function.attribute(...)` on a namespace; never changed once made.

    A plain class rather than a frozen dataclass: one is made on each side of every call, and a frozen dataclass
    sets each field through `object.__setattr__` (2.5 µs against 0.5).
    """

    __slots__ = ("args", "attribute", "function", "kwargs")

    def __init__(
        self,
        function: str,
        attribute: str | None = None,
        args: list[JsonValue] | None = None,
        kwargs: dict[str, JsonValue] | None = None,
    ) -> None:
        self.function = function
        """The name the host function was given in `functions=`."""
        self.attribute = attribute
        """The name looked up in a namespace, or None for a plain function."""
        self.args: list[JsonValue] = [] if args is None else args
        """Positional arguments, as JSON data."""
        self.kwargs: dict[str, JsonValue] = {} if kwargs is None else kwargs
        """Keyword arguments, as JSON data."""

    @property
    def label(self) -> str:
        """What the code wrote before the parentheses, for messages: `tools.search`."""
        return self.function if self.attribute is None else f"{self.function}.{self.attribute}"

    def __repr__(self) -> str:
        return f"Call({self.label!r}, args={self.args!r}, kwargs={self.kwargs!r})"


class HostFailure(Exception):  # carries a host error across, not raised to the model as is
    """A host function failed; only its exception's class name and message cross into the sandbox."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.message = message


MAX_NAME: Final = 256
"""Characters of the longest name looked up in a namespace: a longer one is refused before it reaches the host's
resolver (which may do per-character work on it, like suggesting close names)."""


def long_name(namespace: str, name: str) -> str | None:
    """Why `namespace.name` is refused unresolved (a name longer than `MAX_NAME`), quoting its start; else None."""
    if len(name) <= MAX_NAME:
        return None
    return f"`{namespace}` has no name {name[:40]!r}... ({len(name):,} characters): names are at most {MAX_NAME:,}"


Bridge = Callable[[Call], Awaitable[JsonValue]]
"""Sends one call to the host and returns its JSON result, or raises `HostFailure`."""
