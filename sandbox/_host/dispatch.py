"""Host side of a host-function call: find the function, call it, and keep only JSON and a message.

Shared by both isolations. Whatever the host function raises, only its class name and message go back to the
model's code; whatever it returns is copied as plain JSON, so no host object ever enters the sandbox. A `JsonText`
the host encoded itself is not checked again: inline the code gets a copy decoded from it, and across a process
boundary the conversation puts its text into the frame.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from sandbox._host.jsontext import JsonText
from sandbox._shared.hostcall import MAX_NAME, Call, HostFailure, long_name
from sandbox._shared.slots import Slots
from sandbox.errors import FunctionError
from sandbox.functions import HostFunction, Namespace
from sandbox.jsonvalue import JsonValue, NotJsonError, check_json
from sandbox.limits import calls_message

if TYPE_CHECKING:
    from collections.abc import Awaitable, Coroutine, Mapping

    from sandbox.limits import Limits

Reply: TypeAlias = "JsonValue | JsonText"
"""A call's result: checked JSON data, or the text of a result the host encoded itself."""


class Dispatcher:
    """Calls the host functions of one run; across a process boundary, the run's call limits are enforced again.

    Args:
        functions: The run's host functions by name.
        limits: The run's limits.
        limit: Whether to enforce the call count and the in-flight cap here too: for a worker process, whose
            own enforcement the host does not take on trust. Inline, the sandbox side's is in this process.
    """

    def __init__(self, functions: Mapping[str, HostFunction | Namespace], limits: Limits, *, limit: bool) -> None:
        self.functions = functions
        self.max_calls = limits.calls if limit else None
        self._slots = Slots(limits.concurrent_calls, anyio.Event) if limit else None
        """The in-flight cap, enforced here for a worker's calls."""
        self._coroutine_functions: dict[int, tuple[HostFunction, bool]] = {}
        """Whether each target called so far (by `id`, kept alive here) is an `async def`."""
        self.count = 0
        self.called: dict[str, None] = {}
        """The labels of the calls begun, in first-call order: what a run the worker never reported on made."""

    def kinds(self) -> dict[str, list[str] | None]:
        """Each function name: None for a plain function, a namespace's names (a snapshot, for `dir()`) else."""
        kinds: dict[str, list[str] | None] = {}
        for name, value in self.functions.items():
            if isinstance(value, Namespace):
                kinds[name] = sorted(str(n) for n in value.names()) if value.names else []
            else:
                kinds[name] = None
        return kinds

    def resolve(self, function: str, attribute: str | None) -> HostFunction:
        """The host callable for a call, or a `HostFailure` saying why there is none."""
        target = self.functions.get(function)
        if target is None:
            raise HostFailure("NameError", f"name {function[:MAX_NAME]!r} is not defined")
        if isinstance(target, Namespace):
            if attribute is None:
                raise HostFailure("TypeError", f"`{function}` is a namespace; call one of its functions")
            if (long := long_name(function, attribute)) is not None:
                raise HostFailure("AttributeError", long)
            try:
                return target.resolve(attribute)
            except FunctionError as error:
                raise HostFailure(error.type_name, error.message) from None
        if attribute is not None:
            raise HostFailure("AttributeError", f"`{function}` has no attribute {attribute[:MAX_NAME]!r}")
        return target

    async def __call__(self, call: Call) -> JsonValue:
        """Run one call (inline): a fresh copy of its result; `HostFailure` for anything the model should hear of."""
        outcome = self.begin(call)
        reply = await outcome.rest if isinstance(outcome, Later) else outcome
        return reply.copy() if isinstance(reply, JsonText) else reply

    def begin(self, call: Call) -> Reply | Later:
        """Run one call as far as it goes without waiting: a sync function's result, or `Later` for the rest.

        Raises `HostFailure` for anything the model should hear about. A sync function is called right here, so
        the host's serving task can answer it with no task of its own; it needs a free in-flight slot, but since
        nothing else runs until it returns, it takes none.
        """
        self.count += 1
        if self.max_calls is not None and self.count > self.max_calls:
            raise HostFailure("RuntimeError", calls_message(self.max_calls))
        self.called.setdefault(call.label)
        target = self.resolve(call.function, call.attribute)
        if self._is_coroutine_function(target):
            return Later(self._limited(target, call, None))
        if self._slots is not None and self._slots.full:
            return Later(self._limited(target, call, None))
        result = _start(target, call)
        if type(result) not in _PLAIN and inspect.isawaitable(result):  # a sync callable returned an awaitable
            return Later(self._limited(target, call, result))
        return self._checked(result, call)

    def _is_coroutine_function(self, target: HostFunction) -> bool:
        known = self._coroutine_functions.get(id(target))
        if known is None or known[0] is not target:
            known = self._coroutine_functions[id(target)] = (target, inspect.iscoroutinefunction(target))
        return known[1]

    async def _limited(self, target: HostFunction, call: Call, started: Awaitable[object] | None) -> Reply:
        if self._slots is None:
            return self._checked(await _finish(target, call, started), call)
        if not self._slots.take_now():
            await self._slots.take()
        try:
            result = await _finish(target, call, started)
        finally:
            self._slots.free()
        return self._checked(result, call)

    @staticmethod
    def _checked(result: object, call: Call) -> Reply:
        """What goes back to the code: a `JsonText` as it is (encoded by the host already), else a checked copy."""
        if result is None or type(result) is bool or type(result) is str:
            return result  # exact immutable JSON scalars: `check_json` gives them back as they are
        if type(result) is int and -_SMALL_INT < result < _SMALL_INT:
            return result  # likewise, far inside its `MAX_INT_BITS`
        if isinstance(result, JsonText):
            return result
        try:
            return check_json(result)
        except NotJsonError as error:
            raise HostFailure("TypeError", f"`{call.label}` returned data that is not JSON: {error}") from None


_SMALL_INT = 2**62
"""Ints smaller than this have far fewer bits than `check_json` lets through (`MAX_INT_BITS`)."""
_PLAIN = frozenset({int, str, float, bool, type(None), list, dict, JsonText})
"""Types of a sync function's result that are never awaitable (the usual ones: no `isawaitable` needed)."""


class Later:
    """A call that has to wait (an async function, or no free in-flight slot): `await rest` gives its result."""

    __slots__ = ("rest",)

    def __init__(self, rest: Coroutine[Any, Any, Reply]) -> None:
        self.rest = rest
        """The rest of the call: its result, or `HostFailure`."""


def _start(target: HostFunction, call: Call) -> object:
    """Call `target`: its result, or the awaitable an async function returns."""
    try:
        return target(*call.args, **call.kwargs)
    except FunctionError as error:
        raise HostFailure(error.type_name, error.message) from None
    except Exception as error:  # noqa: BLE001  # a host function's failure is reported to the model
        raise HostFailure(type(error).__name__, str(error)) from None
    except SystemExit as error:  # argparse on arguments it rejects: that call's failure, never the host's exit
        raise _exited(error) from None
    except asyncio.CancelledError as error:  # a plain function's own: nothing can cancel a call that never waited
        raise HostFailure(type(error).__name__, str(error)) from None


async def _finish(target: HostFunction, call: Call, started: Awaitable[object] | None) -> object:
    """The result of `target`'s call (started already, or started here), awaited if need be."""
    result = _start(target, call) if started is None else started
    try:
        if inspect.isawaitable(result):
            result = await result
    except FunctionError as error:
        raise HostFailure(error.type_name, error.message) from None
    except Exception as error:  # noqa: BLE001  # a host function's failure is reported to the model
        raise HostFailure(type(error).__name__, str(error)) from None
    except SystemExit as error:
        raise _exited(error) from None
    except asyncio.CancelledError as error:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not asyncio (trio): its cancellation is its own class, never this one
            task = None
        if task is not None and task.cancelling():
            raise  # the run (or the code's own `wait_for`) is cancelling this call: let it through
        # the function's own (it awaited a future something else cancelled): that call's failure, not a hang
        raise HostFailure(type(error).__name__, str(error)) from None
    return result


def _exited(error: SystemExit) -> HostFailure:
    return HostFailure("SystemExit", f"{error.code} (the function exited, as a command-line parser does on arguments)")
