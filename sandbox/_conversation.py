"""One run's conversation with its worker: the worker's calls answered until its `done`, and the result read.

Apart from the worker process (`sandbox._process`: spawn, handshake, deadline, kill) because it is what happens on
the pipe during one run: every frame of one read taken in one go (on asyncio by a reader callback, with no task
woken), a sync host function answered by the reader itself, a call that has to wait given to an answering task
(an idle one if there is one; the task group is made only when the first is needed), and the replies that finish
in one turn of the loop written together. A worker's frames are admitted against the run's limits
(`sandbox._distrust`), and a call tagged with another run's id is refused.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from sandbox._dispatch import Later
from sandbox._distrust import CallsOverError
from sandbox._hostcall import Call, HostFailure
from sandbox._jsontext import JsonText
from sandbox._pipe import MAX_UNREAD
from sandbox._protocol import MAX_FRAME, FrameTooLargeError, ProtocolError, encode, encode_with_text
from sandbox.result import ERROR_KINDS, RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from anyio.abc import TaskGroup

    from sandbox._dispatch import Dispatcher, Reply
    from sandbox._distrust import Admission
    from sandbox._pipe import FramePipe

_Task = tuple["Callable[..., Coroutine[Any, Any, None]]", tuple[Any, ...]]
"""A task for the run's task group to start: a function and its arguments."""
_Job = tuple[int, Call, Later, int]
"""A call that has to wait, for an answering task: its id, the call, the rest of it, and its frame's size."""


class Conversation:
    """The host's side of one run on a worker's pipe, from the `run` frame sent to the `done` frame read."""

    def __init__(self, pipe: FramePipe, dispatcher: Dispatcher, *, run_id: int, admission: Admission) -> None:
        self._pipe = pipe
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
        """Tasks the serving task is to start (a call that has to wait, a drain of a full pipe)."""
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

    async def serve(self) -> RunResult:
        """Answer the run's calls until its `done`: every frame of one read in one go, their replies in one write.

        On asyncio a reader callback handles the frames as they arrive, answering sync functions itself; this task
        wakes only for the result, or to start a task (in a task group made only then: most runs never need one).
        """
        watching = self._watching = self._pipe.watch(self._readable)
        try:
            return await self._serve(None, watching=watching)
        finally:
            self._pipe.unwatch()

    async def _serve(self, calls: TaskGroup | None, *, watching: bool) -> RunResult:
        while True:
            if self._failure is not None:
                raise self._failure
            if self._outcome is not None:
                return self._outcome
            if self._tasks:
                if calls is None:
                    return await self._serve_with_tasks(watching=watching)
                tasks, self._tasks = self._tasks, []
                for function, args in tasks:
                    calls.start_soon(function, *args)
            if self._held:
                await self._admission.room()  # a worker past what an honest one sends waits: the host stops reading
                if len(self._pipe.unwritten) > MAX_UNREAD:
                    await self._pipe.drain()  # a worker that does not read its replies: none of its calls is read
                self._held = False
                if watching:
                    self._pipe.watch(self._readable)
                self._frames()
            elif watching:
                await self._sleep()
            else:
                await self._pipe.fill()
                self._frames()

    async def _serve_with_tasks(self, *, watching: bool) -> RunResult:
        async with anyio.create_task_group() as calls:
            tasks, self._tasks = self._tasks, []
            for function, args in tasks:
                calls.start_soon(function, *args)
            result = await self._serve(calls, watching=watching)
            idle, self._idle = self._idle, []
            for waiting in idle:  # answering tasks with nothing to answer: they end
                if not waiting.done():
                    waiting.set_result(None)
            if self._answering:  # answers the run no longer waits for
                calls.cancel_scope.cancel()
        return result

    async def _sleep(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

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
        if (stop or self._tasks) and self._waiter is not None and not self._waiter.done():
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
            self._outcome = _result(message.get("result"))
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
        call_id, call = _parse_call(message)
        size = self._pipe.last_size
        self._admission.admit(size)
        if message.get("run") != self._run_id:  # left over from an earlier run (a task or generator still running)
            self._admission.release(size)
            failure = HostFailure("RuntimeError", "the run that made this call is over; its calls are refused")
            self._queue(_failure_reply(call_id, failure))
            return
        try:
            outcome = self._dispatcher.begin(call)
        except Exception as error:  # noqa: BLE001  # a failing name resolver, say: the model hears of it, no more
            self._admission.release(size)
            self._queue(_failure_reply(call_id, _failure(error)))
            return
        if isinstance(outcome, Later):
            self._answering += 1
            job = (call_id, call, outcome, size)
            while self._idle:
                waiting = self._idle.pop()
                if not waiting.done():
                    waiting.set_result(job)
                    return
            self._tasks.append((self._answerer, (job,)))
        else:
            self._admission.release(size)
            self._queue(_value_reply(call_id, call, outcome))

    async def _answerer(self, job: _Job | None) -> None:
        """Answer a call, then (with a reader callback) wait for the next one: most calls need no task of their own.

        Calls answered by one task one after another share its context (a `ContextVar` a host function sets).
        """
        while job is not None:
            await self._answer(*job)
            job = await self._next_job() if self._watching else None

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
                frame = _failure_reply(call_id, _failure(error))
            else:
                frame = _value_reply(call_id, call, value)
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
            await self._pipe.drain()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.reply_failed = True


def _parse_call(message: dict[str, Any]) -> tuple[int, Call]:
    """The id and the call of a `call` frame, or `ProtocolError` if it is malformed."""
    call_id, function, attribute = message.get("id"), message.get("fn"), message.get("attr")
    args, kwargs = message.get("args") or [], message.get("kwargs") or {}
    if (
        type(call_id) is not int
        or type(function) is not str
        or not (attribute is None or type(attribute) is str)
        or type(args) is not list
        or type(kwargs) is not dict
    ):
        raise ProtocolError("a malformed `call` frame")
    return call_id, Call(function, attribute, args, kwargs)


def _failure(error: Exception) -> HostFailure:
    return error if isinstance(error, HostFailure) else HostFailure(type(error).__name__, _text(error))


def _value_reply(call_id: int, call: Call, value: Reply) -> bytes:
    try:
        if isinstance(value, JsonText):  # encoded by the host already: its text goes in as it is
            return encode_with_text({"t": "result", "id": call_id, "ok": True}, "value", value.text)
        return encode({"t": "result", "id": call_id, "ok": True, "value": value})
    except FrameTooLargeError as error:
        return _failure_reply(
            call_id,
            HostFailure(
                "ValueError",
                f"`{call.label}` returned {error.size:,} bytes of JSON, more than the {MAX_FRAME:,} bytes "
                "one call can return; ask for less per call (a page, a filter, fewer fields)",
            ),
        )


def _failure_reply(call_id: int, failure: HostFailure) -> bytes:
    message = failure.message
    if len(message) > _MAX_FAILURE:
        message = message[:_MAX_FAILURE] + f"... [{len(message) - _MAX_FAILURE:,} more characters]"
    return encode({"t": "result", "id": call_id, "ok": False, "type": failure.type_name[:200], "message": message})


_MAX_FAILURE = 64 * 1024
"""Characters of a host error's message sent to the worker; more is cut, so the reply always fits in a frame."""


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # noqa: BLE001  # a host exception whose __str__ fails still becomes a reply
        return ""


def _result(data: object) -> RunResult:
    """The result in a `done` frame, or `ProtocolError` if it is malformed."""
    if not isinstance(data, dict):
        raise ProtocolError("a `done` frame without a result")
    error = data.get("error")
    if error is not None and not (isinstance(error, dict) and error.get("kind") in ERROR_KINDS):
        raise ProtocolError("a `done` frame with an unknown error kind")
    try:
        return RunResult.from_json(data)
    except Exception as problem:  # noqa: BLE001  # whatever a forged result trips on is the worker's fault
        raise ProtocolError(f"a malformed `done` frame ({type(problem).__name__})") from None
