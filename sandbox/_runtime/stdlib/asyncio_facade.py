"""The `asyncio` the model's code imports: gather, sleep, wait_for, as_completed, create_task and friends.

Tasks are owned by the run: the handle a `create_task` returns exposes no loop, and every task still running
when the run ends is cancelled. `SystemExit`/`KeyboardInterrupt` raised inside a task end the run instead of
reaching the event loop (asyncio re-raises those two out of the loop).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from sandbox._runtime.awaiting import Lazy
from sandbox._runtime.calls import PendingCall
from sandbox._runtime.signals import ForbiddenError, ForbiddenImportError, StopRun, exit_signal
from sandbox._runtime.stdlib.asyncio_sync import PRIMITIVES, optional_seconds, seconds

if TYPE_CHECKING:
    import contextvars
    from collections.abc import Awaitable, Coroutine, Iterable, Iterator


_GRACE = 0.5
"""Seconds the run's tasks and async generators get to finish their cleanup once the run is over."""
_FORCED_ROUNDS = 100_000
"""Rounds of cancellation after the grace period (each is one step of every task left; the source bounds them)."""
_RETURN_WHEN = frozenset({asyncio.ALL_COMPLETED, asyncio.FIRST_COMPLETED, asyncio.FIRST_EXCEPTION})


class TaskHandle:
    """A task of the model's code, without its loop."""

    __slots__ = ("_task",)

    def __init__(self, task: asyncio.Future[Any]) -> None:
        self._task = task

    def __await__(self) -> Any:
        return self._task.__await__()

    def done(self) -> bool:
        """Whether the task finished."""
        return self._task.done()

    def cancelled(self) -> bool:
        """Whether the task was cancelled."""
        return self._task.cancelled()

    def cancel(self, msg: str | None = None) -> bool:
        """Ask the task to stop."""
        return self._task.cancel(msg)

    def result(self) -> Any:
        """The task's result (raises its exception)."""
        return self._task.result()

    def exception(self) -> BaseException | None:
        """The task's exception, or None."""
        return self._task.exception()

    def __repr__(self) -> str:
        state = "done" if self._task.done() else "pending"
        return f"<Task {state}>"


class TaskGroup:
    """`asyncio.TaskGroup` for the model's code: its tasks are awaited when its block ends.

    Once one fails, the others are cancelled and the failures raised together (`ExceptionGroup`), as asyncio's.
    Two differences: a failure while the block itself still runs cancels the other tasks when the block ends, not
    the block; and the sandbox's own stop (a limit) or refusal (`ForbiddenError`) ends the block as it is.
    """

    __slots__ = ("_facade", "_state", "_tasks")

    def __init__(self, facade: AsyncioFacade) -> None:
        if type(facade) is not AsyncioFacade:  # `type(tg)(...)` in the code
            raise TypeError("a TaskGroup is made with `asyncio.TaskGroup()`")
        self._facade = facade
        self._tasks: list[asyncio.Future[Any]] = []
        self._state = "new"
        """`new`, `open` (inside its block), `exiting` (waiting for its tasks) or `done`."""

    def __aenter__(self) -> Lazy:
        if self._state != "new":
            raise RuntimeError(f"TaskGroup {self!r} has already been entered")
        self._state = "open"
        return Lazy(lambda: _value(self))

    def create_task(self, coro: Awaitable[Any], *, name: str | None = None, context: Any = None) -> TaskHandle:
        """Start running `coro` as a task of this group."""
        if self._state == "new":
            raise RuntimeError(f"TaskGroup {self!r} has not been entered")
        if self._state == "done":
            raise RuntimeError(f"TaskGroup {self!r} is finished")
        task = self._facade._task(coro)
        self._tasks.append(task)
        return TaskHandle(task)

    def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: object) -> Lazy:
        return Lazy(lambda: self._exit(error))

    async def _exit(self, error: BaseException | None) -> None:
        self._state = "exiting"
        failures = [] if error is None or issubclass(type(error), asyncio.CancelledError) else [error]
        try:
            while True:
                failures += _failures(self._tasks, failures)
                if not (pending := [task for task in self._tasks if not task.done()]):
                    break
                if failures:
                    for task in pending:
                        task.cancel()
                await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
        except asyncio.CancelledError:  # the run is being stopped: so are the group's tasks
            for task in self._tasks:
                task.cancel()
            raise
        finally:
            self._state = "done"
        for failure in failures:  # the sandbox's own stop or refusal goes on as it is, never inside a group
            if issubclass(type(failure), (StopRun, ForbiddenError, ForbiddenImportError)):
                raise failure
        if failures:  # the block's own error among them, as asyncio's
            raise BaseExceptionGroup("unhandled errors in a TaskGroup", failures) from None

    def __repr__(self) -> str:
        return f"<TaskGroup tasks={len(self._tasks)} {'entered' if self._state == 'open' else self._state}>"


async def _value(value: Any) -> Any:
    return value


def _failures(tasks: list[asyncio.Future[Any]], known: list[BaseException]) -> list[BaseException]:
    """The exceptions of `tasks` that failed (not cancelled), other than those in `known`."""
    found = []
    for task in tasks:
        if task.done() and not task.cancelled():
            error = task.exception()
            if error is not None and not any(error is seen for seen in known):
                found.append(error)
    return found


def _retrieve(task: asyncio.Future[Any]) -> None:
    # An exception nobody retrieved is logged when the task is collected, possibly in the middle of the host's
    # own work (on 3.11, logging a traceback inside `ast.parse` corrupts its recursion counter).
    if not task.cancelled():
        task.exception()


async def _contained(awaitable: Awaitable[Any]) -> Any:
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as exit_:
        raise exit_signal(exit_) from None  # asyncio would end the whole event loop with it


async def _close_all(generators: list[Any]) -> None:
    for generator in generators:
        try:
            await generator.aclose()
        except BaseException:  # noqa: BLE001, S110  # its `finally` may raise anything (SystemExit too); the run is over
            pass


async def _reap(tasks: set[asyncio.Future[Any]], *, cancel: bool) -> None:
    """Wait for `tasks` (cancelled first, if `cancel`) for a grace period, then cancel them at every step they take.

    Code that swallows its cancellation can only wait again: every loop and call stops at its first tick once the
    run is over, so each round of cancellation ends one more of its waits, and it runs out of them.
    """
    pending = {task for task in tasks if not task.done()}
    for task in pending if cancel else ():
        task.cancel()
    if pending:
        _, pending = await asyncio.wait(pending, timeout=_GRACE)
    for _ in range(_FORCED_ROUNDS):
        if not pending:
            return
        for task in pending:
            task.cancel()
        await asyncio.sleep(0)
        pending = {task for task in pending if not task.done()}


class AsyncioFacade:
    """One run's `asyncio` module: every task it starts is tracked and cancelled when the run ends."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Future[Any]] = set()

    def _task(self, awaitable: Awaitable[Any]) -> asyncio.Future[Any]:
        if isinstance(awaitable, TaskHandle):
            if not isinstance(awaitable._task, asyncio.Future):  # `asyncio.Task(obj)` made by the code
                raise TypeError("`asyncio.Task(...)` is not a way to start a task; use `asyncio.create_task(coro)`")
            return awaitable._task
        if not hasattr(type(awaitable), "__await__"):
            raise TypeError(f"expected an awaitable (a coroutine or a tool call), got {type(awaitable).__name__!r}")
        if type(awaitable) is PendingCall:
            awaitable.handed_to_task()
        return self._track(asyncio.get_running_loop().create_task(_contained(awaitable)))

    def _track(self, task: asyncio.Future[Any]) -> asyncio.Future[Any]:
        self.tasks.add(task)
        task.add_done_callback(self._finished)  # one callback, not two: a gather of many calls ends each task
        return task

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self.tasks.discard(task)
        _retrieve(task)

    def create_task(self, coro: Awaitable[Any], *, name: str | None = None) -> TaskHandle:
        """Start running `coro` concurrently."""
        return TaskHandle(self._task(coro))

    ensure_future = create_task

    def gather(self, *aws: Awaitable[Any], return_exceptions: bool = False) -> TaskHandle:
        """Await all of `aws` concurrently; results in order."""
        gathered = asyncio.gather(*(self._task(aw) for aw in aws), return_exceptions=bool(return_exceptions))
        gathered.add_done_callback(_retrieve)
        return TaskHandle(gathered)

    def wait_for(self, aw: Awaitable[Any], timeout: float | None) -> Lazy:
        """Await `aw`, raising `TimeoutError` after `timeout` seconds."""
        limit = optional_seconds(timeout)
        task = self._task(aw)
        return Lazy(lambda: asyncio.wait_for(task, limit))

    def as_completed(self, aws: Iterable[Awaitable[Any]], *, timeout: float | None = None) -> Iterator[Any]:
        """Iterate over awaitables in the order they finish."""
        limit = optional_seconds(timeout)
        tasks = [self._task(aw) for aw in aws]
        finished = asyncio.as_completed(tasks, timeout=limit)
        # Lazy: asyncio's own coroutine for "the next to finish" is made only when awaited, never handed out.
        return iter([Lazy(lambda: next(finished)) for _ in tasks])

    def wait(
        self, aws: Iterable[Any], *, timeout: float | None = None, return_when: str = asyncio.ALL_COMPLETED
    ) -> Lazy:
        """Wait for tasks; returns (done, pending) sets of task handles."""
        limit = optional_seconds(timeout)
        if type(return_when) is not str or return_when not in _RETURN_WHEN:
            raise ValueError(f"Invalid return_when value: {return_when!r}")
        handles = {
            task: aw if isinstance(aw, TaskHandle) else TaskHandle(task) for aw in aws for task in [self._task(aw)]
        }

        async def wait() -> tuple[set[TaskHandle], set[TaskHandle]]:
            done, pending = await asyncio.wait(handles, timeout=limit, return_when=return_when)
            return {handles[t] for t in done}, {handles[t] for t in pending}

        return Lazy(wait)

    @staticmethod
    def sleep(delay: float, result: Any = None) -> Lazy:
        """Pause this task for `delay` seconds."""
        pause = seconds(delay)
        return Lazy(lambda: asyncio.sleep(pause, result))

    @staticmethod
    def run(main: Coroutine[Any, Any, Any]) -> Any:
        """Not needed here: the code already runs in an event loop."""
        main.close()
        raise RuntimeError("`asyncio.run()` is not needed here: top-level `await` works, so write `await main()`")

    def start(self, main: Coroutine[Any, Any, Any], context: contextvars.Context) -> asyncio.Future[Any]:
        """Start the run's main coroutine in a task of its own, in `context`: the caller's task never runs it."""
        return self._track(asyncio.get_running_loop().create_task(_contained(main), context=context))

    async def finish(self, generators: list[Any], context: contextvars.Context) -> None:
        """The run is over: stop its tasks, then close its async generators in its context, until none is left."""
        if self.tasks:  # most runs start none
            await _reap(set(self.tasks), cancel=True)
        if generators:  # most runs make none: no task to close nothing
            closing = asyncio.get_running_loop().create_task(_close_all(generators), context=context)
            await _reap({closing}, cancel=False)

    def task_group(self) -> TaskGroup:
        """A group of tasks awaited together (`async with asyncio.TaskGroup() as tg: tg.create_task(...)`)."""
        return TaskGroup(self)

    def members(self) -> dict[str, Any]:
        """The names the model's `import asyncio` offers."""
        return {
            "gather": self.gather,
            "sleep": self.sleep,
            "wait_for": self.wait_for,
            "wait": self.wait,
            "as_completed": self.as_completed,
            "create_task": self.create_task,
            "ensure_future": self.ensure_future,
            "run": self.run,
            "TaskGroup": self.task_group,
            **PRIMITIVES,
            "QueueEmpty": asyncio.QueueEmpty,
            "QueueFull": asyncio.QueueFull,
            "TimeoutError": TimeoutError,
            "CancelledError": asyncio.CancelledError,
            "ALL_COMPLETED": asyncio.ALL_COMPLETED,
            "FIRST_COMPLETED": asyncio.FIRST_COMPLETED,
            "FIRST_EXCEPTION": asyncio.FIRST_EXCEPTION,
            "Task": TaskHandle,
        }
