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
from typing import TYPE_CHECKING, Any, cast

from sandbox._asyncio import AsyncioFacade
from sandbox._budgets import result_size_error
from sandbox._builtins import Output, make_builtins
from sandbox._calls import CallState, FunctionProxy, NamespaceProxy, PendingCall
from sandbox._classes import make_class
from sandbox._compile import FILENAME, MAIN, Compiled, compile_code
from sandbox._deadlines import WATCHER
from sandbox._decimalctx import decimal_members
from sandbox._guards import Guards
from sandbox._jsonvalue import JsonValue, NotJsonError, to_json
from sandbox._mainstep import own_task
from sandbox._matching import match_names
from sandbox._modules import RunModules, make_importer
from sandbox._signals import EXIT, ForbiddenError, ForbiddenImportError, StopRun
from sandbox._sizes import SizeLimitError
from sandbox._supers import super_attribute as _loaded  # noqa: F401  # before a worker is confined
from sandbox._variables import Keeper
from sandbox.limits import timeout_message
from sandbox.result import ErrorKind, RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

    from sandbox._hostcall import Bridge, Call
    from sandbox._repeat import Repeat
    from sandbox.limits import Limits

MAX_MESSAGE = 1_800
"""Characters of an exception's message kept in the error."""
MAX_NAME = 100
"""Characters of an exception's class name kept in the error."""
MAX_SOURCE_LINE = 200
"""Characters of each source line quoted in a traceback."""
_SMALL_INT = 2**64
_MATCH_NAMES = frozenset(("_match_", "_match_class_"))

# How a host function is exposed: a plain function, or a namespace resolved by attribute.
FunctionKinds = dict[str, "list[str] | None"]  # name -> None for a function, a namespace's names for `dir()`


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
    """Compile and run `source`; every outcome is a result. `variables`, if given, are kept (see `_variables`).

    `watched`: the deadline watcher halts the run past its deadline between two budget checks (inline runs).
    """
    started = time.monotonic()
    names = tuple(error_names)
    keeper = None if variables is None else Keeper(variables)
    compiled = compile_code(source, max_source=limits.source, variables=variables)
    if isinstance(compiled, RunError):
        return RunResult(error=compiled, duration=time.monotonic() - started, variables=variables)
    guards = Guards(
        operations=limits.operations,
        deadline=started + limits.timeout,
        timeout=limits.timeout,
        max_size=limits.max_size,
        repeat=repeat,
    )
    output = Output(limits.output, guards)
    facade = AsyncioFacade()
    calls = CallState(
        bridge=_in_own_task(bridge),
        guards=guards,
        max_calls=limits.calls,
        max_concurrent=limits.concurrent_calls,
    )
    decimal_context = decimal.Context()
    value: Any = None
    error: RunError | None = None
    ended: list[BaseException] = []  # what ended the code, held until it is over (see below)
    context = contextvars.copy_context()  # all of the code's work runs in it: its decimal context stays its own
    if watched:
        WATCHER.watch(guards)
    try:
        namespace = _globals(guards, output, calls, facade, functions, names, decimal_context, compiled.names)
        if not compiled.names.isdisjoint(_MATCH_NAMES):  # most code has no `match` statement
            namespace.update(match_names(guards))
        if keeper is not None:
            namespace.update(keeper.globals())
        exec(compiled.code, namespace)  # noqa: S102  # the policy-compiled module only defines `_main_`
        context.run(decimal.setcontext, decimal_context)  # the run's own context: the caller's is not changed
        main = namespace.pop(MAIN)()  # not kept in its own globals: the run's objects need no collector
        value = await _run_main(main, facade, started, guards, context, calls, bridge)
        if guards.stopped is not None:  # the code caught a stop and went on: the stop is still how the run ended
            raise guards.stopped.again()
        error = _unawaited_error(calls)
    except BaseException as exc:  # the model's code may raise anything, BaseException included
        ended.append(exc)  # its frames' generators are closed when it goes: after `finish`, so at their first tick
        task = asyncio.current_task()
        if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
            raise  # the host cancelled us: let it through
        if guards.stopped is not None and not (isinstance(exc, StopRun) and exc.sealed() and exc.kind != EXIT):
            exc = guards.stopped.again()  # the code caught a stop, then raised something else: the stop wins
        WATCHER.unwatch(guards)  # before its budget is reset: from here on only the grace's own checks stop it
        guards.grace(operations=100_000, seconds=0.5)  # the exception's own `__str__` may be model code
        error = context.run(describe_exception, exc, compiled)
    finally:
        WATCHER.unwatch(guards)
        guards.finish()
        guards.close_unawaited()
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
        stdout=output.text(),
        error=error,
        calls=calls.count,
        duration=time.monotonic() - started,
        names=tuple(calls.names),
        assigned=compiled.assigned,
        variables=kept,
        dropped_variables=dropped,
    )


def _globals(
    guards: Guards,
    output: Output,
    calls: CallState,
    facade: AsyncioFacade,
    functions: FunctionKinds,
    error_names: Iterable[str],
    decimal_context: decimal.Context,
    code_names: frozenset[str],
) -> dict[str, Any]:
    modules: RunModules = {
        "asyncio": facade.members,
        "decimal": functools.partial(decimal_members, decimal_context, guards),
    }
    namespace: dict[str, Any] = {
        "__builtins__": make_builtins(guards, output, make_importer(modules, guards), code_names),
        "__name__": "__main__",
        "__metaclass__": make_class,  # the policy makes every class statement call it
        **guards.names(),
    }
    for name, names in functions.items():
        namespace[name] = FunctionProxy(calls, name) if names is None else NamespaceProxy(calls, name, names)
    for name in error_names:
        namespace[name] = calls.error_class(name)
    return namespace


def _in_own_task(bridge: Bridge) -> Bridge:
    """`bridge`, run in the run's own task, never in its first step's caller's (`sandbox._mainstep`)."""

    async def call(call: Call) -> JsonValue:
        await own_task()
        return await bridge(call)

    return call


async def _run_main(
    main: Any,
    facade: AsyncioFacade,
    started: float,
    guards: Guards,
    context: contextvars.Context,
    calls: CallState,
    bridge: Bridge,
) -> Any:
    finished, outcome = facade.start(main, context)
    if finished:
        return outcome
    calls.bridge = bridge  # the first step is over: later calls start in the run's task already
    task: asyncio.Future[Any] = outcome
    seconds = guards.timeout - (time.monotonic() - started)
    if not await _finished_within(task, max(seconds, 0.0)):  # the run's end reaps the task, however it ends
        if guards.stopped is not None and guards.stopped.message == timeout_message(guards.timeout):
            guards.stopped = None  # the watcher's, as the code waits (it would have stopped code that computes)
        raise guards.halt("timeout", timeout_message(guards.timeout, " waiting on tools or sleeps"))
    return task.result()


async def _finished_within(task: asyncio.Future[Any], seconds: float) -> bool:
    """Whether `task` is done after at most `seconds`; it keeps running if not (`asyncio.wait`, without its sets)."""
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    timer = loop.call_later(seconds, wake)
    task.add_done_callback(wake)
    try:
        await waiter
    finally:
        timer.cancel()
        task.remove_done_callback(wake)
    return task.done()


def _unawaited_error(calls: CallState) -> RunError | None:
    if not calls.unawaited:
        return None
    pending = next(iter(calls.unawaited.values()))
    message = str(pending.fix_it())
    return RunError(
        kind="runtime", message=f"a call was never awaited, so it never ran: {message}", type_name="NotAwaitedError"
    )


def _check_value(value: Any, limits: Limits) -> tuple[JsonValue, RunError | None]:
    size = _scalar_size(value)
    if size is not None and size <= limits.result:  # most runs return None or a small int: no walk, no encoding
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


def _scalar_size(value: object) -> int | None:
    """The JSON size of None, a bool or an int of up to 64 bits (each its own JSON value), else None."""
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if type(value) is int and -_SMALL_INT < value < _SMALL_INT:
        return len(int.__repr__(value))
    return None


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
            RunError(kind="runtime", message=_capped(message, MAX_MESSAGE), line=line, type_name="SystemExit")
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
    type_name = "ForbiddenError" if kind == "forbidden" else _capped(type(exc).__name__, MAX_NAME)
    if isinstance(exc, SizeLimitError):
        type_name = "MemoryError"
    detail = _exception_text(exc)
    message = f"{type_name}: {detail}{where}" if detail else f"{type_name}{where}"
    return RunError(
        kind=kind,
        message=message,
        line=line,
        type_name=type_name,
        traceback=_traceback_text(frames, compiled, message),
    )


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001  # a model-defined __str__ may raise anything, or loop until stopped
        return "<the exception's message could not be shown>"
    if type(text) is not str:
        return "<the exception's message could not be shown>"
    return _capped(text, MAX_MESSAGE)


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit:,} more characters]"


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
            lines.append(f"    {_capped(compiled.lines[lineno - 1].strip(), MAX_SOURCE_LINE)}")
    lines.append(message)
    return "\n".join(lines)
