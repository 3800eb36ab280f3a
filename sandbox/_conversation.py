"""One run's conversation with its worker: the worker's calls answered until its `done`, and the result read.

Apart from the run process (`sandbox.host.process`: handshake, run, kill) because it is what happens on the pipe
during one run, up to its deadline: every frame of one read taken in one go (on asyncio by a reader callback, with
no task woken), a sync host function answered by the reader itself, a call that has to wait given to an answering
task (an idle one if there is one; on asyncio a new one is started by the reader itself, in an asyncio task group;
elsewhere in an anyio task group made only when the first is needed), and the replies that finish in one turn of
the loop written together. A worker's frames are admitted against the run's limits (`sandbox._distrust`), and a
call tagged with another run's id is refused; what each frame may hold is `sandbox._replies`'.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from sandbox._dispatch import Later
from sandbox._distrust import CallsOverError
from sandbox._hostcall import Call, HostFailure
from sandbox._pipe import MAX_UNREAD
from sandbox._protocol import ProtocolError
from sandbox._replies import done_result, failure_of, failure_reply, parse_call, value_reply
from sandbox.result import RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from anyio.abc import TaskGroup

    from sandbox._alarm import Alarm
    from sandbox._dispatch import Dispatcher
    from sandbox._distrust import Admission
    from sandbox._pipe import FramePipe

_Task = tuple["Callable[..., Coroutine[Any, Any, None]]", tuple[Any, ...]]
"""A task for the run's task group to start: a function and its arguments."""
_Job = tuple[int, Call, Later, int]
"""A call that has to wait, for an answering task: its id, the call, the rest of it, and its frame's size."""
_IDLE_ANSWERERS = 8
"""Answering tasks kept waiting for another call: enough for the calls a run makes one after another."""


class Conversation:
    """The host's side of one run on a worker's pipe, from the `run` frame sent to the `done` frame read."""

    def __init__(
        self, pipe: FramePipe, dispatcher: Dispatcher, *, run_id: int, admission: Admission, alarm: Alarm
    ) -> None:
        self._pipe = pipe
        self._alarm = alarm
        """The worker's timer for the run's deadline (with a reader callback)."""
        self._dispatcher = dispatcher
        self._run_id = run_id
        self._admission = admission
        """The run's count of calls, and how many the host holds (`sandbox._distrust`)."""
        self.reply_failed = False
        """Whether a reply could not be written, or the worker's own cap did not hold: it is not reused."""
        self._outbox: list[bytes] = []
        """Replies not written yet: replies finished in one turn of the loop go out in one write."""
        self._outbox_bytes = 0
        self._flushing = False
        """Whether a reply is waiting for the others of its turn, and will write the outbox with its own."""
        self._answering = 0
        """Calls being answered by a task of their own now."""
        self._tasks: list[_Task] = []
        """Tasks the serving task is to start (a call that has to wait, a drain of a full pipe), with no `_group`."""
        self._outcome: RunResult | None = None
        """The run's result, once its `done` frame (or a call past its limit) has been read."""
        self._failure: BaseException | None = None
        """What broke the pipe or the protocol, seen by the reader callback: the serving task raises it."""
        self._held = False
        """Whether the host stopped reading: it holds as many calls (`Admission`) or unread replies as it may."""
        self._waiter: asyncio.Future[None] | None = None
        """What the serving task sleeps on while the reader callback handles the frames."""
        self._watching = False
        """Whether a reader callback handles the frames (asyncio), rather than the serving task itself."""
        self._idle: list[asyncio.Future[_Job | None]] = []
        """Answering tasks waiting for another call (with a reader callback): a call that finds one starts none."""
        self._group: asyncio.TaskGroup | None = None
        """The answering tasks' group, with a reader callback (asyncio); else the serving task starts `_tasks`."""
        self._spawned: list[asyncio.Task[None]] = []
        """The tasks started in `_group`."""
        self._task_context = contextvars.Context()
        """The serving task's context, which each task started in `_group` gets a copy of (as anyio's would)."""
        self._deadline = math.inf
        """When the run is over whatever the worker says (the event loop's clock), with a reader callback."""
        self._expired = False
        """Whether the deadline passed before the result came."""

    async def serve(self, *, within: float) -> RunResult | None:
        """Answer the run's calls until its `done`: every frame of one read in one go, their replies in one write.

        On asyncio a reader callback handles the frames as they arrive, answering sync functions itself and starting
        the tasks that answer the rest; this task wakes only for the result. None if `within` seconds pass first:
        the worker is still busy with the run.
        """
        watching = self._watching = self._pipe.watch(self._readable)
        try:
            if watching:
                return await self._serve_watched(within)
            with anyio.move_on_after(within):
                return await self._serve(None, watching=False)
            return None
        finally:
            self._pipe.unwatch()

    async def _serve_watched(self, within: float) -> RunResult | None:
        """`serve` with a reader callback (asyncio), which starts answering tasks in an asyncio task group itself.

        An asyncio task starts in a few µs where anyio's `start_soon` takes some 25, and from the callback, with no
        turn of this task. The deadline is the worker's `Alarm`, one timer on the loop: this task sleeps only in
        `_sleep`, which the alarm wakes, or in `_waited`, which takes the same deadline as a cancel scope.
        """
        self._deadline = asyncio.get_running_loop().time() + within
        self._alarm.set(self._deadline, self._expire)
        self._task_context = contextvars.copy_context()
        try:
            async with asyncio.TaskGroup() as group:
                self._group = group
                try:
                    self._readable()  # what the worker wrote while this task got here: often its whole answer
                    if self._outcome is not None:  # a run still gives the loop a turn, as one that waited would
                        await anyio.lowlevel.cancel_shielded_checkpoint()
                    return await self._serve(None, watching=True)
                finally:
                    self._group = None
                    self._pipe.unwatch()  # no task is started after this
                    if self._release_answerers():
                        for task in self._spawned:
                            task.cancel()
        finally:
            self._alarm.clear()

    def _start(self, function: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """Start a task: right here in the asyncio task group if there is one, else by the serving task."""
        if self._group is None:
            self._tasks.append((function, args))
        else:
            task = self._group.create_task(function(*args), context=self._task_context.copy())
            self._spawned.append(task)

    def _release_answerers(self) -> bool:
        """End the idle answering tasks' wait for another call; whether any still answers one (then it is cancelled)."""
        idle, self._idle = self._idle, []
        for waiting in idle:
            if not waiting.done():
                waiting.set_result(None)
        return self._answering > 0

    async def _serve(self, calls: TaskGroup | None, *, watching: bool) -> RunResult | None:
        while True:
            if self._failure is not None:
                raise self._failure
            if self._outcome is not None:
                return self._outcome
            if self._expired:
                return None
            if self._tasks:
                if calls is None:
                    return await self._serve_with_tasks(watching=watching)
                tasks, self._tasks = self._tasks, []
                for function, args in tasks:
                    calls.start_soon(function, *args)
            if self._held:
                if not await self._waited():
                    return None
                self._held = False
                if watching:
                    self._pipe.watch(self._readable)
                self._frames()
            elif watching:
                await self._sleep()
            else:
                await self._pipe.fill()
                self._frames()

    async def _waited(self) -> bool:
        """Wait while the host holds as much as it may for this worker; False if the deadline passed first."""
        with anyio.CancelScope(deadline=self._deadline):
            await self._admission.room()  # a worker past what an honest one sends waits: the host stops reading
            if len(self._pipe.unwritten) > MAX_UNREAD:
                await self._pipe.drain()  # a worker that does not read its replies: none of its calls is read
            return True
        self._expired = True
        return False

    async def _serve_with_tasks(self, *, watching: bool) -> RunResult | None:
        async with anyio.create_task_group() as calls:
            tasks, self._tasks = self._tasks, []
            for function, args in tasks:
                calls.start_soon(function, *args)
            result = await self._serve(calls, watching=watching)
            if self._release_answerers():  # answers the run no longer waits for
                calls.cancel_scope.cancel()
        return result

    async def _sleep(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _expire(self) -> None:
        """The deadline's timer: the run is over; the serving task wakes to say so."""
        self._expired = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _readable(self) -> None:
        """The reader callback: read what the worker wrote, handle its frames, and wake the task if it is due."""
        try:
            self._pipe.read_now()
        except Exception as error:  # noqa: BLE001  # a closed or broken pipe: the serving task raises it
            self._failure = error
        else:
            self._frames()
        stop = self._held or self._failure is not None or self._outcome is not None
        if stop:
            self._pipe.unwatch()  # nothing more is read for now (or for this run)
        if stop and self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _frames(self) -> None:
        """Handle every whole frame read so far (up to the result), then write the replies of sync calls at once.

        It stops early, leaving the rest read for later, while the host holds as many calls or as many replies the
        worker has not read as it may (`_stopped`).
        """
        pipe = self._pipe
        try:
            while self._outcome is None and not self._stopped() and (message := pipe.buffered()) is not None:
                self._take(message)
                if self._outbox_bytes + len(pipe.unwritten) > MAX_UNREAD and not self._flushing:
                    self._send_replies()  # written now, what the worker does not read is counted before the next frame
        except Exception as error:  # noqa: BLE001  # whatever a worker's frame trips on ends the run as its fault
            self._failure = error
        if self._outbox and not self._flushing:
            self._send_replies()
        self._held = self._outcome is None and self._failure is None and self._stopped()

    def _stopped(self) -> bool:
        """Whether the host reads no more frames for now: it holds as many calls, or unread replies, as it may."""
        return self._admission.full or len(self._pipe.unwritten) > MAX_UNREAD

    def _take(self, message: dict[str, Any]) -> None:
        if message["t"] == "done":
            if message.get("run") != self._run_id:
                raise ProtocolError(f"`done` for run {message.get('run')!r} during run {self._run_id}")
            self._outcome = done_result(message.get("result"))
            return
        try:
            self._take_call(message)
        except CallsOverError as error:  # the worker's own cap did not hold: it is not reused
            self.reply_failed = True  # its frames still on the pipe belong to no run
            self._outcome = RunResult(
                error=RunError(kind="call_limit", message=str(error)), calls=self._dispatcher.count
            )

    def _take_call(self, message: dict[str, Any]) -> None:
        """Answer a call frame now (a sync function, a refusal) into the outbox, or add the task that will."""
        if message["t"] != "call":
            raise ProtocolError(f"unexpected frame {message['t']!r} during a run")
        call_id, call = parse_call(message)
        size = self._pipe.last_size
        self._admission.admit(size)
        if message.get("run") != self._run_id:  # left over from an earlier run (a task or generator still running)
            self._admission.release(size)
            failure = HostFailure("RuntimeError", "the run that made this call is over; its calls are refused")
            self._queue(failure_reply(call_id, failure))
            return
        try:
            outcome = self._dispatcher.begin(call)
        except Exception as error:  # noqa: BLE001  # a failing name resolver, say: the model hears of it, no more
            self._admission.release(size)
            self._queue(failure_reply(call_id, failure_of(error)))
            return
        if isinstance(outcome, Later):
            self._answering += 1
            job = (call_id, call, outcome, size)
            while self._idle:
                waiting = self._idle.pop()
                if not waiting.done():
                    waiting.set_result(job)
                    return
            self._start(self._answerer, job)
        else:
            self._admission.release(size)
            self._queue(value_reply(call_id, call, outcome))

    async def _answerer(self, job: _Job | None) -> None:
        """Answer a call, then (with a reader callback) wait for the next one: most calls need no task of their own.

        Calls answered by one task one after another share its context (a `ContextVar` a host function sets). At
        most `_IDLE_ANSWERERS` wait at once; after a burst of calls the others end as they answer, while the run
        still waits for the rest, rather than all at its end.
        """
        while job is not None:
            await self._answer(*job)
            job = await self._next_job() if self._watching and len(self._idle) < _IDLE_ANSWERERS else None

    async def _next_job(self) -> _Job | None:
        waiting: asyncio.Future[_Job | None] = asyncio.get_running_loop().create_future()
        self._idle.append(waiting)
        try:
            return await waiting
        finally:
            if waiting in self._idle:  # cancelled while idle
                self._idle.remove(waiting)

    async def _answer(self, call_id: int, call: Call, later: Later, size: int) -> None:
        try:
            try:
                value = await later.rest
            except Exception as error:  # noqa: BLE001  # a host function's failure: the model hears of it, no more
                frame = failure_reply(call_id, failure_of(error))
            else:
                frame = value_reply(call_id, call, value)
            finally:
                self._admission.release(size)
            self._queue(frame)
            if self._flushing:
                return  # a reply of this turn is waiting for the others, and writes this one with its own
            if self._answering > 1:  # let the other replies finishing in this turn join this write
                self._flushing = True
                try:
                    await anyio.lowlevel.cancel_shielded_checkpoint()
                finally:
                    self._flushing = False
            await self._send_outbox()
        finally:
            self._answering -= 1

    def _queue(self, reply: bytes) -> None:
        self._outbox.append(reply)
        self._outbox_bytes += len(reply)

    def _send_replies(self) -> None:
        """The reader writes the outbox without waiting: a task writes what the pipe cannot take yet."""
        frames, self._outbox, self._outbox_bytes = self._outbox, [], 0
        try:
            self._pipe.write(frames[0] if len(frames) == 1 else b"".join(frames))
        except OSError:
            self.reply_failed = True
            return
        if self._pipe.unwritten and not self._pipe.drain_lock.locked():
            self._answering += 1
            self._start(self._drain_replies)

    async def _drain_replies(self) -> None:
        try:
            await self._send_outbox()
        finally:
            self._answering -= 1

    async def _send_outbox(self) -> None:
        frames, self._outbox, self._outbox_bytes = self._outbox, [], 0
        try:
            if frames:
                self._pipe.write(frames[0] if len(frames) == 1 else b"".join(frames))
            if self._pipe.unwritten:
                await self._pipe.drain()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.reply_failed = True
