"""One run's conversation with its worker: the worker's calls answered until its `done`, and the result read.

Apart from the run process (`sandbox._host.process`: handshake, run, kill) because it is what happens on the pipe
during one run, up to its deadline: every frame of one read taken in one go, a sync host function answered right
there, a call that has to wait given to an answering task (in an anyio task group made only when the first is
needed), and the replies that finish in one turn of the loop written together. A worker's frames are admitted
against the run's limits (`sandbox._host.distrust`), and a call tagged with another run's id is refused; what each
frame may hold is `sandbox._host.replies`'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from sandbox._host.dispatch import Later
from sandbox._host.distrust import CallsOverError
from sandbox._host.pipe import MAX_UNREAD
from sandbox._host.replies import done_result, failure_of, failure_reply, parse_call, value_reply
from sandbox._shared.frames import ProtocolError
from sandbox._shared.hostcall import Call, HostFailure
from sandbox.result import RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from anyio.abc import TaskGroup

    from sandbox._host.dispatch import Dispatcher
    from sandbox._host.distrust import Admission
    from sandbox._host.pipe import FramePipe

_Task = tuple["Callable[..., Coroutine[Any, Any, None]]", tuple[Any, ...]]
"""A task for the run's task group to start: a function and its arguments."""


class Conversation:
    """The host's side of one run on a worker's pipe, from the `run` frame sent to the `done` frame read."""

    def __init__(self, pipe: FramePipe, dispatcher: Dispatcher, *, run_id: int, admission: Admission) -> None:
        self._pipe = pipe
        self._dispatcher = dispatcher
        self._run_id = run_id
        self._admission = admission
        """The run's count of calls, and how many the host holds (`sandbox._host.distrust`)."""
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
        """Tasks the serving task is to start (a call that has to wait, a drain of a full pipe)."""
        self._outcome: RunResult | None = None
        """The run's result, once its `done` frame (or a call past its limit) has been read."""
        self._failure: BaseException | None = None
        """What broke the protocol, seen while the frames were handled: the serving task raises it."""
        self._held = False
        """Whether the host stopped reading: it holds as many calls (`Admission`) or unread replies as it may."""
        self._unstarted: set[Later] = set()
        """Calls handed to an answering task that has not begun yet: closed if the run ends first."""

    async def serve(self, *, within: float) -> RunResult | None:
        """Answer the run's calls until its `done`: every frame of one read in one go, their replies in one write.

        None if `within` seconds pass first: the worker is still busy with the run.
        """
        try:
            with anyio.move_on_after(within):
                return await self._serve(None)
            return None
        finally:
            for later in self._unstarted:  # the run ended before their task began: never awaited, closed now
                later.rest.close()

    async def _serve(self, calls: TaskGroup | None) -> RunResult:
        while True:
            if self._failure is not None:
                raise self._failure
            if self._outcome is not None:
                return self._outcome
            if self._tasks:
                if calls is None:
                    return await self._serve_with_tasks()
                tasks, self._tasks = self._tasks, []
                for function, args in tasks:
                    calls.start_soon(function, *args)
            if self._held:
                await self._admission.room()  # a worker past what an honest one sends waits: the host stops reading
                if len(self._pipe.unwritten) > MAX_UNREAD:
                    await self._pipe.drain()  # a worker that does not read its replies: none of its calls is read
                self._held = False
            else:
                await self._pipe.fill()
            self._frames()

    async def _serve_with_tasks(self) -> RunResult:
        async with anyio.create_task_group() as calls:
            result = await self._serve(calls)
            if self._answering > 0:  # answers the run no longer waits for
                calls.cancel_scope.cancel()
        return result

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
            self._unstarted.add(outcome)
            self._tasks.append((self._answer, (call_id, call, outcome, size)))
        else:
            self._admission.release(size)
            self._queue(value_reply(call_id, call, outcome))

    async def _answer(self, call_id: int, call: Call, later: Later, size: int) -> None:
        self._unstarted.discard(later)
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
        """The serving task writes the outbox without waiting: a task writes what the pipe cannot take yet."""
        frames, self._outbox, self._outbox_bytes = self._outbox, [], 0
        try:
            self._pipe.write(frames[0] if len(frames) == 1 else b"".join(frames))
        except OSError:
            self.reply_failed = True
            return
        if self._pipe.unwritten and not self._pipe.drain_lock.locked():
            self._answering += 1
            self._tasks.append((self._drain_replies, ()))

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
