"""Runs compiled model code in one event loop and turns whatever happens into a `RunResult`.

The same runner serves both isolations: inline it runs on the host's loop with a bridge that calls the host
functions directly; in a worker process it runs on the worker's loop with a bridge over the pipe.
"""

from __future__ import annotations

import asyncio
import contextvars
import decimal
import functools
import time
import traceback
import types
from typing import TYPE_CHECKING, Any, cast

from sandbox._compiler.compile import FILENAME, MAIN, Compiled, compile_code
from sandbox._runtime.builtins import Output
from sandbox._runtime.calls import CallState, PendingCall
from sandbox._runtime.deadlines import WATCHER
from sandbox._runtime.guards import Guards
from sandbox._runtime.namespace import FunctionKinds, run_globals, template
from sandbox._runtime.signals import EXIT, ForbiddenError, ForbiddenImportError, StopRun
from sandbox._runtime.sizes.operations import SizeLimitError
from sandbox._runtime.stdlib.asyncio_facade import AsyncioFacade
from sandbox._runtime.stdlib.decimal_context import decimal_members
from sandbox._runtime.stdlib.modules import RunModules, make_importer
from sandbox._runtime.supers import super_attribute as _loaded  # noqa: F401  # before a worker is confined
from sandbox._runtime.variables import Keeper
from sandbox._shared.budgets import result_size_error
from sandbox.jsonvalue import JsonValue, NotJsonError, to_json
from sandbox.limits import cut_end, timeout_message
from sandbox.result import ErrorKind, RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import TracebackType

    from sandbox._shared.hostcall import Bridge
    from sandbox._shared.repeat import Repeat
    from sandbox.limits import Limits

MAX_MESSAGE = 1_800
"""Characters of an exception's message kept in the error."""
MAX_NAME = 100
"""Characters of an exception's class name kept in the error."""
MAX_SOURCE_LINE = 200
"""Characters of each source line quoted in a traceback."""
_SMALL_INT = 2**64


async def run_code(
    source: str,
    *,
    limits: Limits,
    bridge: Bridge,
    functions: FunctionKinds,
    error_names: Iterable[str] = (),
    variables: dict[str, JsonValue] | None = None,
    repeat: Repeat | None = None,
    watched: bool = False,
) -> RunResult:
    """Compile and run `source`; every outcome is a result. `variables`, if given, are kept (see `variables`).

    `watched`: the deadline watcher halts the run past its deadline between two budget checks, and once the
    process's resident memory grows `limits.memory` past what it was at the start (inline runs).
    """
    started = time.monotonic()
    names = tuple(error_names)
    keeper = None if variables is None else Keeper(variables)
    compiled = compile_code(source, max_source=limits.source, variables=variables)
    if isinstance(compiled, RunError):
        return RunResult(error=compiled, duration=time.monotonic() - started, variables=variables)
    shared = template(compiled.names, limits.max_size)
    guards = Guards(
        operations=limits.operations,
        deadline=started + limits.timeout,
        timeout=limits.timeout,
        max_size=limits.max_size,
        repeat=repeat,
    )
    output = Output(limits.output, limits.flood, guards) if shared.prints else None
    facade = AsyncioFacade()
    calls = None
    if functions or names:  # code with no host function to call needs no bookkeeping of calls
        calls = CallState(bridge=bridge, guards=guards, max_calls=limits.calls, max_concurrent=limits.concurrent_calls)
    # `decimal` is reached only by an import, or by host code run inline (it sees the run's context, as before)
    decimal_context = decimal.Context() if shared.imports or calls is not None else None
    value: Any = None
    error: RunError | None = None
    ended: list[BaseException] = []  # what ended the code, held until it is over (see below)
    context = contextvars.copy_context()  # all of the code's work runs in it: its decimal context stays its own
    if watched:
        WATCHER.watch(guards, memory=limits.memory)
    try:
        importer = _importer(guards, facade, decimal_context) if shared.imports else None
        namespace = run_globals(
            shared, guards, output=output, importer=importer, calls=calls, functions=functions, error_names=names
        )
        if keeper is not None:
            namespace.update(keeper.globals())
        if decimal_context is not None:  # the run's own context, set before its tasks copy theirs from it
            context.run(decimal.setcontext, decimal_context)
        main = types.FunctionType(compiled.code, namespace)()  # `_main_`, not kept in its own globals
        value = await _waited(facade.start(main, context), started, guards)
        _past_deadline(guards)
        if guards.stopped is not None:  # the code caught a stop and went on: the stop is still how the run ended
            raise guards.stopped.again()
        error = None if calls is None else _unawaited_error(calls)
    except BaseException as exc:  # the model's code may raise anything, BaseException included
        ended.append(exc)  # its frames' generators are closed when it goes: after `finish`, so at their first tick
        task = asyncio.current_task()
        if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
            raise  # the host cancelled us: let it through
        _past_deadline(guards)
        if guards.stopped is not None and not (isinstance(exc, StopRun) and exc.sealed() and exc.kind != EXIT):
            exc = guards.stopped.again()  # the code caught a stop, then raised something else: the stop wins
        WATCHER.unwatch(guards)  # before its budget is reset: from here on only the grace's own checks stop it
        guards.grace(operations=100_000, seconds=0.5)  # the exception's own `__str__` may be model code
        if watched:  # the grace's deadline too: its own checks come only every 256 ticks
            WATCHER.watch(guards)
        value, error = None, context.run(describe_exception, exc, compiled)  # None: a clean `sys.exit()`
    finally:
        WATCHER.unwatch(guards)
        guards.finish()
        if guards.coroutines:
            guards.close_unawaited()
        if facade.tasks or guards.async_generators:  # most runs start no task and make no async generator
            await facade.finish(guards.async_generators, context)
        ended.clear()
    if error is None:
        value, error = _check_value(value, limits)
    skip = (*functions, *names)
    kept, dropped = (
        (None, {})
        if keeper is None
        else keeper.collect(budget=limits.variables, skip=skip, deadline=started + limits.timeout)
    )
    return RunResult(
        value=value if error is None else None,
        stdout="" if output is None else output.text(),
        error=error,
        calls=0 if calls is None else calls.count,
        duration=time.monotonic() - started,
        names=() if calls is None else tuple(calls.names),
        assigned=compiled.assigned,
        variables=kept,
        dropped_variables=dropped,
    )


def _past_deadline(guards: Guards) -> None:
    """A run that ended past its deadline is a timeout, whoever noticed: its last statement passed no gate after it."""
    if guards.stopped is None and time.monotonic() > guards.deadline:
        guards.halt("timeout", timeout_message(guards.timeout))


def _importer(guards: Guards, facade: AsyncioFacade, decimal_context: decimal.Context | None) -> Callable[..., Any]:
    """The run's `__import__`: its facades, made on first import, with its own `asyncio` and `decimal`."""
    assert decimal_context is not None  # made for every run that imports
    modules: RunModules = {
        "asyncio": facade.members,
        "decimal": functools.partial(decimal_members, decimal_context, guards),
    }
    return make_importer(modules, guards)


async def _waited(task: asyncio.Future[Any], started: float, guards: Guards) -> Any:
    """The main task's result, or the run's timeout."""
    seconds = guards.timeout - (time.monotonic() - started)
    if not await _finished_within(task, max(seconds, 0.0)):  # the run's end reaps the task, however it ends
        if guards.stopped is not None and guards.stopped.message == timeout_message(guards.timeout):
            guards.stopped = None  # the watcher's, as the code waits (it would have stopped code that computes)
        raise guards.halt("timeout", timeout_message(guards.timeout, " waiting on tools or sleeps"))
    return task.result()


async def _finished_within(task: asyncio.Future[Any], seconds: float) -> bool:
    """Whether `task` is done after at most `seconds`; it keeps running if not."""
    _, pending = await asyncio.wait({task}, timeout=seconds)
    return not pending


def _unawaited_error(calls: CallState) -> RunError | None:
    if not calls.unawaited:
        return None
    pending = next(iter(calls.unawaited.values()))
    message = str(pending.fix_it())
    return RunError(
        kind="runtime", message=f"a call was never awaited, so it never ran: {message}", type_name="NotAwaitedError"
    )


def _check_value(value: Any, limits: Limits) -> tuple[JsonValue, RunError | None]:
    if value is None or value is True or value is False:  # most runs return None or a small int: no walk
        if limits.result >= 5:
            return value, None
    elif type(value) is int and -_SMALL_INT < value < _SMALL_INT and len(int.__repr__(value)) <= limits.result:
        return value, None
    if isinstance(value, PendingCall):
        return None, RunError(kind="runtime", message=str(value.fix_it()), type_name="NotAwaitedError")
    try:
        checked = to_json(value)
    except NotJsonError as error:
        return None, RunError(kind="runtime", message=f"the returned {error}", type_name="TypeError")
    except RecursionError:
        return None, RunError(kind="runtime", message="the returned value is nested too deeply", type_name="TypeError")
    except (ValueError, OverflowError) as error:  # a conversion the checks above did not foresee: still a result
        message = f"the returned value could not be converted to JSON ({type(error).__name__}); return plain data"
        return None, RunError(kind="runtime", message=message, type_name="TypeError")
    too_large = result_size_error(checked, limits.result)
    return (None, too_large) if too_large is not None else (checked, None)


def describe_exception(exc: BaseException, compiled: Compiled) -> RunError | None:
    """The model-facing error for an exception that ended the run; None for a clean `sys.exit()`."""
    exited = isinstance(exc, StopRun) and exc.sealed() and exc.kind == EXIT
    raised = exc.__context__ if exited and exc.__context__ is not None else exc  # where the `SystemExit` was raised
    frames = _model_frames(raised.__traceback__)
    line = frames[-1][1] if frames else None
    where = f" (line {line})" if line else ""
    if exited:
        message = cast("StopRun", exc).message
        return (
            RunError(kind="runtime", message=cut_end(message, MAX_MESSAGE), line=line, type_name="SystemExit")
            if message
            else None
        )
    if isinstance(exc, StopRun) and exc.sealed():
        return RunError(kind=cast("ErrorKind", exc.kind), message=f"{exc.message}{where}", line=line)
    kind: ErrorKind = "runtime"
    if isinstance(exc, (ForbiddenError, ForbiddenImportError)):
        kind = "forbidden"
    elif isinstance(exc, MemoryError):
        kind = "memory"
    type_name = "ForbiddenError" if kind == "forbidden" else cut_end(type(exc).__name__, MAX_NAME)
    if isinstance(exc, SizeLimitError):
        type_name = "MemoryError"
    detail = _exception_text(exc)
    if issubclass(type(exc), BaseExceptionGroup):  # what a traceback lists under it: its exceptions, each in a word
        detail += "".join(f"; {name}: {text}" if text else f"; {name}" for name, text in _grouped(exc))
    message = f"{type_name}: {detail}{where}" if detail else f"{type_name}{where}"
    return RunError(
        kind=kind,
        message=message,
        line=line,
        type_name=type_name,
        traceback=_traceback_text(frames, compiled, message),
    )


def _grouped(group: BaseException, depth: int = 0) -> list[tuple[str, str]]:
    """The first few exceptions in a group (nested groups opened), each as its class name and message."""
    found: list[tuple[str, str]] = []
    for inner in _EXCEPTIONS.__get__(group)[:_MAX_GROUPED]:  # the group's own tuple, never a subclass's property
        if issubclass(type(inner), BaseExceptionGroup) and depth < _MAX_GROUPED:
            found += _grouped(inner, depth + 1)
        else:
            found.append((cut_end(type(inner).__name__, MAX_NAME), cut_end(_exception_text(inner), MAX_SOURCE_LINE)))
    return found[:_MAX_GROUPED]


_EXCEPTIONS = BaseExceptionGroup.__dict__["exceptions"]
"""`BaseExceptionGroup.exceptions`, the slot itself: the code's subclass may define its own, run after the run."""
_MAX_GROUPED = 5
"""Exceptions of a group named in the run's error message (and levels of nested groups opened)."""


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001  # a model-defined __str__ may raise anything, or loop until stopped
        return "<the exception's message could not be shown>"
    if type(text) is not str:
        return "<the exception's message could not be shown>"
    return cut_end(text, MAX_MESSAGE)


def _model_frames(tb: TracebackType | None) -> list[tuple[str, int]]:
    frames: list[tuple[str, int]] = []
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == FILENAME:
            name = frame.f_code.co_name
            frames.append(("<module>" if name == MAIN else name, lineno))
    return frames


def _traceback_text(frames: list[tuple[str, int]], compiled: Compiled, message: str) -> str:
    if not frames:
        return ""
    lines = ["Traceback (most recent call last):"]
    for name, lineno in frames[-20:]:
        lines.append(f"  line {lineno}, in {name}")
        if 0 < lineno <= len(compiled.lines):
            lines.append(f"    {cut_end(compiled.lines[lineno - 1].strip(), MAX_SOURCE_LINE)}")
    lines.append(message)
    return "\n".join(lines)
