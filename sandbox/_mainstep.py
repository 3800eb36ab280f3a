"""The run's main coroutine, started with no task of its own: most runs end without ever waiting, and need none.

A task and its timer cost more than a trivial run's own work, so the runner steps the main coroutine once, right
where it is, in the run's own context. Only a run that waits goes on in a task of its own, which the step's
caller waits on with the run's timeout: the caller's task never runs the code's waits, so the caller's
cancellation never reaches the code. Two rules keep the step invisible:
- What must run in the task the run goes on in awaits `own_task()` first, which ends the step there: host code
  (it may enter an anyio cancel scope, which belongs to one task) and a timeout (it cancels the task it starts in).
- The main task is made before the first task the code starts, so it runs first, as when it was made up front.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio
    import contextvars
    from collections.abc import Awaitable, Callable, Coroutine, Generator

_OWN_TASK = object()
"""What a first step yields to go on in its own task at once (never reaches the event loop)."""
_ENDED = object()
"""What a first step that returned or raised leaves: a main task made for it has nothing to run."""


class _Stepping(threading.local):
    step: MainStep | None = None
    """The first step running in this thread (each step runs to its end before anything else can)."""


_STEPPING = _Stepping()


@types.coroutine
def own_task() -> Generator[Any, None, None]:
    """Awaited before what must run in the run's own task: ends a first step here; in a task, does nothing."""
    if _STEPPING.step is not None:
        yield _OWN_TASK


def stepping() -> MainStep | None:
    """The first step running now, if any."""
    return _STEPPING.step


class MainStep:
    """The first step of one run's main coroutine, and the task it goes on in if it waits.

    Args:
        main: The run's main coroutine, not started.
        context: The run's context: the step and the task both run in it.
        make_task: Makes and tracks the main task, which awaits what it is given, in the run's context.
    """

    def __init__(
        self,
        main: Coroutine[Any, Any, Any],
        context: contextvars.Context,
        make_task: Callable[[Awaitable[Any], contextvars.Context], asyncio.Future[Any]],
    ) -> None:
        self._main = main
        self._context = context
        self._make_task = make_task
        self._resumed: _Resumed | None = None
        """What the main task awaits, made with it (most runs never wait, and make neither)."""
        self.task: asyncio.Future[Any] | None = None

    def run(self) -> tuple[bool, Any]:
        """Step `main` once: `(True, its value)` if it returned, else `(False, its task)`; raises what it raised."""
        if sys.exc_info()[1] is not None:  # the caller is handling an exception: the code must not see it, as in a task
            return False, self.made()
        _STEPPING.step = self
        try:
            yielded = self._context.run(self._main.send, None)
        except StopIteration as stop:
            if self._resumed is not None:  # a task made for the code's tasks' sake: it has nothing to run
                self._resumed.yielded = _ENDED
            return True, stop.value
        except BaseException:
            if self._resumed is not None:
                self._resumed.yielded = _ENDED
            raise
        finally:
            _STEPPING.step = None
        task = self.made()
        assert self._resumed is not None  # made with the task
        self._resumed.yielded = yielded
        return False, task

    def made(self) -> asyncio.Future[Any]:
        """The main task, made now if it is not yet (it runs once the step is over)."""
        if self.task is None:
            self._resumed = _Resumed(self._main)
            self.task = self._make_task(self._resumed, self._context)
        return self.task


class _Resumed:
    """What the main task awaits: the main coroutine from where its first step stopped."""

    __slots__ = ("_main", "yielded")

    def __init__(self, main: Coroutine[Any, Any, Any]) -> None:
        self._main = main
        self.yielded: object = _OWN_TASK
        """What the first step waits on, handed to the task first; `_OWN_TASK`: nothing, go on at once."""

    def __await__(self) -> Generator[Any, None, Any]:
        main, yielded = self._main, self.yielded
        if yielded is _ENDED:  # the step returned: the task was made for the code's tasks' sake, and is reaped
            return None
        while yielded is not _OWN_TASK:  # what it waits on goes to the task; what the task throws goes to it
            try:
                yield yielded
            except GeneratorExit:
                main.close()
                raise
            except BaseException as exc:  # noqa: BLE001  # the task's cancellation: the code's to handle, as in any task
                try:
                    yielded = main.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                break
        return (yield from main.__await__())
