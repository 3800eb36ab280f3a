"""Host functions as the model's code sees them: proxies whose calls must be awaited.

Calling a proxy returns a `PendingCall`; nothing reaches the host until it is awaited. Using a pending call as
if it were its result (printing it, indexing it, returning it) raises a one-line fix-it instead of leaking a
`<coroutine object>`, and a call never awaited fails the run with the same advice.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
from typing import TYPE_CHECKING, Any

from sandbox._runtime.classes import make_class
from sandbox._shared.hostcall import Bridge, Call, HostFailure, long_name
from sandbox._shared.slots import Slots
from sandbox.jsonvalue import JsonValue, NotJsonError, to_json
from sandbox.limits import calls_message

if TYPE_CHECKING:
    from collections.abc import Generator

    from sandbox._runtime.guards import Guards


class NotAwaitedError(TypeError):
    """A host function's result was used without `await`."""


class CallState:
    """Per-run bookkeeping of host calls: the count, the in-flight cap, and calls never awaited."""

    def __init__(self, *, bridge: Bridge, guards: Guards, max_calls: int, max_concurrent: int) -> None:
        self.bridge = bridge
        self.guards = guards
        self.max_calls = max_calls
        self.max_concurrent = max_concurrent
        self._slots = Slots(max_concurrent, asyncio.Event)  # the worker imports nothing once confined: no anyio here
        """The in-flight cap."""
        self.count = 0
        self.names: dict[str, None] = {}
        self.unawaited: dict[int, PendingCall] = {}
        self.error_classes: dict[str, type[BaseException]] = {}

    def error_class(self, type_name: str) -> type[BaseException]:
        """The in-sandbox exception class for a host error's class name (a builtin one where it exists)."""
        existing = getattr(builtins, type_name, None)
        if isinstance(existing, type) and issubclass(existing, Exception) and type_name in _PLAIN_ERRORS:
            return existing
        if type_name not in self.error_classes:
            cls = make_class(type_name if type_name.isidentifier() else "HostError", (Exception,), {})
            self.error_classes[type_name] = cls
        return self.error_classes[type_name]

    async def call(self, pending: PendingCall) -> JsonValue:
        """Send a pending call to the host and return its result, or raise its error in the sandbox."""
        self.unawaited.pop(id(pending), None)
        if self.guards.stopped is not None:  # the run is over (a finalizer, a task that ignored cancellation)
            raise self.guards.stopped.again()
        if self.count >= self.max_calls:
            self.guards.stop("call_limit", calls_message(self.max_calls))
        self.count += 1
        try:
            args = to_json(list(pending._args), path="args")
            kwargs = to_json(pending._kwargs, path="kwargs") if pending._kwargs else {}  # `**` made it: a dict of str
        except NotJsonError as error:
            raise TypeError(f"`{pending._call.label}(...)` takes JSON data: {error}") from None
        assert isinstance(args, list)  # a copy keeps its container's type
        assert isinstance(kwargs, dict)
        call = Call(pending._call.function, pending._call.attribute, args, kwargs)
        if not self._slots.take_now():  # most calls find a free slot: no coroutine for it
            await self._slots.take()
        try:
            result = await self.bridge(call)
        except HostFailure as failure:
            raise self.error_class(failure.type_name)(_argument(failure)) from None
        finally:
            self._slots.free()
        return result


def _argument(failure: HostFailure) -> object:
    """The re-raised error's argument: a `KeyError`'s message is its key's repr, so the key (else the message)."""
    if failure.type_name == "KeyError":
        try:  # a literal only: the message is the host's text, never run
            return ast.literal_eval(failure.message)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    return failure.message


_PLAIN_ERRORS = frozenset(
    "ValueError TypeError KeyError IndexError LookupError RuntimeError TimeoutError ZeroDivisionError "
    "NotImplementedError PermissionError ConnectionError FileNotFoundError OverflowError".split()
)


class PendingCall:
    """The awaitable a host-function proxy returns."""

    __slots__ = ("_args", "_call", "_calls", "_kwargs")

    def __init__(self, calls: CallState, call: Call, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._calls = calls
        self._call = call
        """What is called; its arguments are filled in, as JSON, when the call is awaited."""
        self._args = args
        self._kwargs = kwargs
        calls.unawaited[id(self)] = self

    def __await__(self) -> Generator[Any, None, JsonValue]:
        return self._calls.call(self).__await__()

    def handed_to_task(self) -> None:
        """The call went to a task (`create_task`, `gather`, a `TaskGroup`): not a call left unawaited.

        The task awaits it, or is cancelled before it starts, as a coroutine's would be.
        """
        self._calls.unawaited.pop(id(self), None)

    def fix_it(self) -> NotAwaitedError:
        """The error for using this call's result without awaiting it."""
        label = self._call.label
        return NotAwaitedError(f"`{label}(...)` must be awaited: write `await {label}(...)`")

    def __repr__(self) -> str:
        raise self.fix_it()

    __str__ = __repr__

    def __bool__(self) -> bool:
        raise self.fix_it()

    def __iter__(self) -> Any:
        raise self.fix_it()

    def __getitem__(self, key: object) -> Any:
        raise self.fix_it()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # protocol probes (`_asyncio_future_blocking`, ...) see a plain awaitable
            raise AttributeError(name)
        raise self.fix_it()


class FunctionProxy:
    """A host function inside the sandbox: calling it returns a `PendingCall`."""

    __slots__ = ("_call", "_calls")

    def __init__(self, calls: CallState, function: str, attribute: str | None = None) -> None:
        self._calls = calls
        self._call = Call(function, attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> PendingCall:
        """A pending call of this function with these arguments; nothing reaches the host until it is awaited."""
        self._calls.names.setdefault(self._call.label)
        return PendingCall(self._calls, self._call, args, kwargs)

    @property
    def __name__(self) -> str:
        """The function's name, as `fn.__name__` gives it for a function the code defined."""
        return self._call.function if self._call.attribute is None else self._call.attribute

    def __getattr__(self, name: str) -> FunctionProxy:
        call = self._call
        if name.startswith("_") or call.attribute is None:
            raise AttributeError(name if name.startswith("_") else f"`{call.label}` has no attribute {name!r}")
        # `tools.crm.notes.add`: a namespace member's dotted name, which the host resolves as one name
        dotted = f"{call.attribute}.{name}"
        if (long := long_name(call.function, dotted)) is not None:
            raise AttributeError(long)
        return FunctionProxy(self._calls, call.function, dotted)

    def __repr__(self) -> str:
        return f"<function {self._call.label}>"


class NamespaceProxy:
    """A host namespace inside the sandbox: `ns.name`, `ns["name"]` and `getattr(ns, name)` give proxies."""

    __slots__ = ("_calls", "_function", "_names")

    def __init__(self, calls: CallState, function: str, names: list[str] | None = None) -> None:
        self._calls = calls
        self._function = function
        self._names = tuple(names or ())

    def __dir__(self) -> list[str]:
        return list(self._names)

    def __getattr__(self, name: str) -> FunctionProxy:
        if name.startswith("_"):
            raise AttributeError(name)
        if (long := long_name(self._function, name)) is not None:
            raise AttributeError(long)
        return FunctionProxy(self._calls, self._function, name)

    def __getitem__(self, name: object) -> FunctionProxy:
        if type(name) is not str or name.startswith("_"):
            raise KeyError(name)
        if (long := long_name(self._function, name)) is not None:
            raise KeyError(long)
        return FunctionProxy(self._calls, self._function, name)

    def __repr__(self) -> str:
        return f"<namespace {self._function}>"


# The names Python's own messages give them (`'function' object is not subscriptable`): what the code sees is a
# function and a namespace, never an internal class.
_SHOWN: tuple[tuple[type, str], ...] = ((FunctionProxy, "function"), (NamespaceProxy, "namespace"))
for _proxy, _shown in _SHOWN:
    _proxy.__name__ = _proxy.__qualname__ = _shown
