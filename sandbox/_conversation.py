"""One run's conversation with its worker: the worker's calls answered until its `done`, and the result read.

Apart from the worker process (`sandbox._process`: spawn, handshake, deadline, kill) because it is what happens on
the pipe during one run: every frame of one read taken in one go, a sync host function answered by the reader
itself, a call that needs a task given one (in a task group made only then), and the replies that finish in one
turn of the loop written together. A worker's frames are admitted against the run's limits
(`sandbox._distrust`), and a call tagged with another run's id is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from sandbox._dispatch import Later
from sandbox._distrust import CallsOverError
from sandbox._hostcall import Call, HostFailure
from sandbox._pipe import MAX_UNREAD
from sandbox._protocol import MAX_FRAME, FrameTooLargeError, ProtocolError, encode
from sandbox.result import ERROR_KINDS, RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from anyio.abc import TaskGroup

    from sandbox._dispatch import Dispatcher
    from sandbox._distrust import Admission
    from sandbox._jsonvalue import JsonValue
    from sandbox._pipe import FramePipe

_Task = tuple["Callable[..., Coroutine[Any, Any, None]]", tuple[Any, ...]]
"""A task for the run's task group to start: a function and its arguments."""


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

    async def serve(self, calls: TaskGroup | None = None) -> RunResult:
        """Answer the run's calls until its `done`: every frame of one read in one go, their replies in one write.

        It runs without a task group until a call needs a task of its own (most runs never do: sync functions
        are answered right here), and then goes on serving inside one.
        """
        tasks: list[_Task] = []
        pipe, run_id = self._pipe, self._run_id
        while True:
            await self._admission.room()  # a worker past what an honest one sends waits: the host stops reading
            if len(pipe.unwritten) > MAX_UNREAD:
                await pipe.drain()  # a worker that does not read its replies: the host reads none of its calls
            message: dict[str, Any] | None = await pipe.receive()
            while message is not None:
                if message["t"] == "done":
                    if message.get("run") != run_id:
                        raise ProtocolError(f"`done` for run {message.get('run')!r} during run {run_id}")
                    return _result(message.get("result"))
                try:
                    self._take_call(message, tasks)
                except CallsOverError as error:  # the worker's own cap did not hold: it is not reused
                    self.reply_failed = True  # its frames still on the pipe belong to no run
                    return RunResult(
                        error=RunError(kind="call_limit", message=str(error)), calls=self._dispatcher.count
                    )
                if self._outbox_bytes + len(pipe.unwritten) > MAX_UNREAD:
                    break  # the rest of the frames read wait until the worker has read these replies
                message = pipe.buffered()
            if self._outbox and not self._flushing:
                self._send_replies(tasks)
            if tasks and calls is None:
                return await self._serve_with_tasks(tasks)
            for function, args in tasks:
                assert calls is not None
                calls.start_soon(function, *args)
            tasks.clear()

    async def _serve_with_tasks(self, tasks: list[_Task]) -> RunResult:
        async with anyio.create_task_group() as calls:
            for function, args in tasks:
                calls.start_soon(function, *args)
            result = await self.serve(calls)
            if self._answering:  # answers the run no longer waits for
                calls.cancel_scope.cancel()
        return result

    def _take_call(self, message: dict[str, Any], tasks: list[_Task]) -> None:
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
            tasks.append((self._answer, (call_id, call, outcome, size)))
        else:
            self._admission.release(size)
            self._queue(_value_reply(call_id, call, outcome))

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

    def _send_replies(self, tasks: list[_Task]) -> None:
        """The reader writes the outbox without waiting: a task writes what the pipe cannot take yet."""
        frames, self._outbox, self._outbox_bytes = self._outbox, [], 0
        try:
            self._pipe.write(frames[0] if len(frames) == 1 else b"".join(frames))
        except OSError:
            self.reply_failed = True
            return
        if self._pipe.unwritten and not self._pipe.drain_lock.locked():
            self._answering += 1
            tasks.append((self._drain_replies, ()))

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


def _value_reply(call_id: int, call: Call, value: JsonValue) -> bytes:
    try:
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
