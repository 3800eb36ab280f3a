"""The host's handle on one worker process: spawn, handshake, run code with host calls, kill.

The worker starts with a scrubbed environment, an empty working directory and no usable stdin. A run that
overstays its wall clock, or a worker that dies or breaks the protocol, is killed and reported as a result; the
pool replaces it. A host reply too large for one frame is an error for that call, and a call tagged with another
run's id is refused, so the functions of one run never serve another's code.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from sandbox._confine import Layers
from sandbox._dispatch import Later
from sandbox._distrust import Admission, CallsOverError, checked_result
from sandbox._hostcall import Call, HostFailure
from sandbox._protocol import HEADER, MAX_FRAME, FrameTooLargeError, ProtocolError, decode, encode, frame_size
from sandbox.errors import SandboxError
from sandbox.limits import timeout_message
from sandbox.result import ERROR_KINDS, RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from anyio.abc import Process, TaskGroup

    from sandbox._confine import Confinement
    from sandbox._dispatch import Dispatcher
    from sandbox._jsonvalue import JsonValue
    from sandbox._repeat import Repeat
    from sandbox.limits import Limits

_ROOT = str(Path(__file__).resolve().parent.parent)
_READ_SIZE = 1 << 18
WORKER = ("-m", "sandbox._worker")
"""How the interpreter is told to run a pool's worker."""
_Task = tuple["Callable[..., Coroutine[Any, Any, None]]", tuple[Any, ...]]
"""A task for the run's task group to start: a function and its arguments."""
_START_TIMEOUT = 30.0
_KILL_GRACE = 1.0


class WorkerProcess:
    """One live worker process, and the host's ends of its two pipes (non-blocking, read and written directly)."""

    def __init__(self, process: Process, workdir: str, *, to_worker: int, from_worker: int) -> None:
        self.process = process
        self.workdir = workdir
        self.layers = Layers.none("the worker has not started")
        """The confinement the worker reported when it became ready."""
        self._to_worker = to_worker
        self._from_worker = from_worker
        self._pipes: tuple[int, ...] = (to_worker, from_worker)
        """The descriptors still open."""
        self._inbox = bytearray()
        """Bytes read from the worker that do not make a whole frame yet."""
        self._unwritten = bytearray()
        """Bytes for the worker its pipe has not taken yet: they go before anything written later."""
        self.drain_lock = anyio.Lock(fast_acquire=True)  # one task at a time waits for room in the pipe
        self.healthy = True
        self._run_ids = itertools.count(1)
        self._reply_failed = False
        self._outbox: list[bytes] = []
        """Replies not written yet: replies finished in one turn of the loop go out in one write."""
        self._flushing = False
        """Whether a reply is waiting for the others of its turn, and will write the outbox with its own."""
        self._answering = 0
        """Calls being answered by a task of their own now."""
        self._admission: Admission | None = None
        """The current run's count of calls, and how many the host holds (`sandbox._distrust`)."""
        self.last_size = 0
        """Bytes of the last frame read."""
        self.idle_cpu: float | None = None
        """CPU seconds the worker had used when its last run ended (None: not known)."""

    @classmethod
    async def start(cls, memory: int, confinement: Confinement, *, entry: tuple[str, ...] = WORKER) -> WorkerProcess:
        """Spawn a worker (`python -s ENTRY MEMORY CONFINEMENT`) and wait for its `ready`.

        `SandboxError` if it never gets there, and `ConfinementError` if it lacks a layer `confinement` requires.
        """
        workdir = tempfile.mkdtemp(prefix="sandbox-")
        env = {
            "PATH": os.defpath,
            "PYTHONPATH": _ROOT,
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
        }
        try:
            worker = await cls.spawn(
                [sys.executable, "-s", *entry, str(memory), confinement.to_arg()], env=env, workdir=workdir
            )
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        try:
            await worker.handshake(confinement)
        except BaseException:
            await worker.kill()
            raise
        return worker

    @classmethod
    async def spawn(cls, command: list[str], *, env: dict[str, str], workdir: str) -> WorkerProcess:
        """Start `command` in its own session in `workdir`, with its stdin and stdout as the protocol's pipes."""
        worker_in, to_worker = os.pipe()
        from_worker, worker_out = os.pipe()
        try:
            process = await anyio.open_process(
                command,
                stdin=worker_in,
                stdout=worker_out,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=env,
                start_new_session=True,
            )
        except BaseException:
            for fd in (to_worker, from_worker):
                os.close(fd)
            raise
        finally:
            for fd in (worker_in, worker_out):  # the worker's ends: only the worker holds them now
                os.close(fd)
        for fd in (to_worker, from_worker):
            os.set_blocking(fd, False)
        return cls(process, workdir, to_worker=to_worker, from_worker=from_worker)

    async def handshake(self, confinement: Confinement) -> None:
        """Wait for `ready` and read the layers in it; `SandboxError` if the worker never gets there."""
        try:
            with anyio.fail_after(_START_TIMEOUT):
                message = await self.receive()
        except TimeoutError:
            raise SandboxError(f"a sandbox worker process was not ready within {_START_TIMEOUT:g} s") from None
        except _BREAKAGE as error:
            with anyio.move_on_after(_KILL_GRACE):
                await self.process.wait()
            raise SandboxError(
                f"a sandbox worker process exited before it was ready (exit status {self.process.returncode}, "
                f"{type(error).__name__}); is `Limits.memory` too small for Python itself?"
            ) from None
        if message["t"] != "ready":
            raise SandboxError(f"a sandbox worker process sent {message['t']!r} instead of `ready`")
        self.layers = Layers.from_json(message.get("missing"))
        if confinement.require:
            self.layers.require()

    async def receive(self) -> dict[str, Any]:
        """The next frame from the worker; waits on the pipe only when no whole frame has been read yet."""
        while (message := self.buffered()) is None:
            await anyio.wait_readable(self._from_worker)
            try:
                data = os.read(self._from_worker, _READ_SIZE)
            except BlockingIOError:
                continue
            if not data:
                raise anyio.EndOfStream
            self._inbox += data
        return message

    def buffered(self) -> dict[str, Any] | None:
        """The next whole frame already read from the worker, or None."""
        inbox = self._inbox
        if len(inbox) < HEADER.size:
            return None
        end = HEADER.size + frame_size(inbox[: HEADER.size])
        if len(inbox) < end:
            return None
        message = decode(inbox[HEADER.size : end])
        del inbox[:end]
        self.last_size = end - HEADER.size
        return message

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the worker."""
        await self.send_frame(encode(message))

    async def send_frame(self, frame: bytes) -> None:
        """One encoded frame to the worker, never interleaved with another; waits only while the pipe is full."""
        self._write(frame)
        await self._drain()

    def _write(self, data: bytes) -> None:
        """Write what the pipe takes now, after anything still waiting; the rest waits in `_unwritten` (no await)."""
        if not self._unwritten:
            try:
                written = os.write(self._to_worker, data)
            except BlockingIOError:
                written = 0
            if written == len(data):
                return
            data = data[written:]
        self._unwritten += data

    async def _drain(self) -> None:
        """Write what is waiting in `_unwritten`, as the pipe takes it (one drainer at a time)."""
        if not self._unwritten:
            return
        async with self.drain_lock:
            while self._unwritten:
                await anyio.wait_writable(self._to_worker)
                try:
                    written = os.write(self._to_worker, self._unwritten)
                except BlockingIOError:
                    continue
                del self._unwritten[:written]

    async def run(
        self,
        code: str,
        *,
        limits: Limits,
        dispatcher: Dispatcher,
        error_names: tuple[str, ...],
        variables: dict[str, JsonValue] | None = None,
        repeat: Repeat | None = None,
    ) -> RunResult:
        """Run code in the worker, serving its host calls; a breach kills the worker and is a result.

        Anything that goes wrong with the worker (it dies, its pipe breaks, it sends a malformed frame) kills it
        and is a `crashed` result. Cancellation of the caller propagates; the worker, left mid-run, is unhealthy.
        """
        run_id = next(self._run_ids)
        try:
            frame = encode(
                {
                    "t": "run",
                    "run": run_id,
                    "code": code,
                    "limits": limits.to_json(),
                    "functions": dispatcher.kinds(),
                    "error_names": list(error_names),
                    "variables": variables,
                    **({"repeat": {"seed": repeat.seed, "clock": repeat.clock}} if repeat else {}),
                }
            )
        except FrameTooLargeError as error:
            return RunResult(
                error=RunError(
                    kind="forbidden",
                    message=f"the code and its settings are {error.size:,} bytes as JSON; the limit is "
                    f"{MAX_FRAME:,}. Send less code per run.",
                )
            )
        self.healthy = False  # until the worker reports `done`, it is mid-run and must not be reused
        self._reply_failed = False
        self._outbox.clear()
        self._admission = Admission(limits)
        try:
            await self.send_frame(frame)
            with anyio.move_on_after(limits.timeout + _KILL_GRACE) as deadline:
                result = await self._serve(dispatcher, run_id)
        except BaseException as error:
            if _is_breakage(error):
                return await self._crashed(_protocol_violation(error))
            # The caller's cancellation, KeyboardInterrupt, a bug: it propagates, without any breakage that came
            # with it (cancel scopes only absorb groups of cancellations); the pool replaces the unhealthy worker.
            if isinstance(error, BaseExceptionGroup):
                _, rest = error.split(_BREAKAGE)
                if rest is not None and rest is not error:
                    raise rest from None
            raise
        if deadline.cancelled_caught:
            await self.kill()
            return RunResult(
                error=RunError(
                    kind="timeout",
                    message=timeout_message(limits.timeout, " in one long operation (a slow regular expression?)"),
                )
            )
        result, lied = checked_result(
            result, limits=limits, keeps=variables is not None, reserved=(*dispatcher.kinds(), *error_names)
        )
        # A worker that sent what its own checks forbid is not reused; nor one whose run was cut off mid-work.
        self.healthy = not (self._reply_failed or lied or (result.error and result.error.kind in _RECYCLE))
        return result

    async def _serve(self, dispatcher: Dispatcher, run_id: int, calls: TaskGroup | None = None) -> RunResult:
        """Answer the run's calls until its `done`: every frame of one read in one go, their replies in one write.

        It runs without a task group until a call needs a task of its own (most runs never do: sync functions
        are answered right here), and then goes on serving inside one.
        """
        tasks: list[_Task] = []
        assert self._admission is not None
        while True:
            await self._admission.room()  # a worker past what an honest one sends waits: the host stops reading
            message: dict[str, Any] | None = await self.receive()
            while message is not None:
                if message["t"] == "done":
                    if message.get("run") != run_id:
                        raise ProtocolError(f"`done` for run {message.get('run')!r} during run {run_id}")
                    return _result(message.get("result"))
                try:
                    self._take_call(message, dispatcher, run_id, tasks)
                except CallsOverError as error:  # the worker's own cap did not hold: it is not reused
                    self._reply_failed = True  # its frames still on the pipe belong to no run
                    return RunResult(error=RunError(kind="call_limit", message=str(error)), calls=dispatcher.count)
                message = self.buffered()
            if self._outbox and not self._flushing:
                self._send_replies(tasks)
            if tasks and calls is None:
                return await self._serve_with_tasks(tasks, dispatcher, run_id)
            for function, args in tasks:
                assert calls is not None
                calls.start_soon(function, *args)
            tasks.clear()

    async def _serve_with_tasks(self, tasks: list[_Task], dispatcher: Dispatcher, run_id: int) -> RunResult:
        async with anyio.create_task_group() as calls:
            for function, args in tasks:
                calls.start_soon(function, *args)
            result = await self._serve(dispatcher, run_id, calls)
            if self._answering:  # answers the run no longer waits for
                calls.cancel_scope.cancel()
        return result

    def _take_call(
        self,
        message: dict[str, Any],
        dispatcher: Dispatcher,
        run_id: int,
        tasks: list[_Task],
    ) -> None:
        """Answer a call frame now (a sync function, a refusal) into the outbox, or add the task that will."""
        if message["t"] != "call":
            raise ProtocolError(f"unexpected frame {message['t']!r} during a run")
        call_id, call = _parse_call(message)
        assert self._admission is not None
        size = self.last_size
        self._admission.admit(size)
        if message.get("run") != run_id:  # left over from an earlier run (a task or generator still running after it)
            self._admission.release(size)
            failure = HostFailure("RuntimeError", "the run that made this call is over; its calls are refused")
            self._outbox.append(_failure_reply(call_id, failure))
            return
        try:
            outcome = dispatcher.begin(call)
        except Exception as error:  # noqa: BLE001  # a failing name resolver, say: the model hears of it, no more
            self._admission.release(size)
            self._outbox.append(_failure_reply(call_id, _failure(error)))
            return
        if isinstance(outcome, Later):
            self._answering += 1
            tasks.append((self._answer, (call_id, call, outcome, size)))
        else:
            self._admission.release(size)
            self._outbox.append(_value_reply(call_id, call, outcome))

    async def _answer(self, call_id: int, call: Call, later: Later, size: int) -> None:
        try:
            try:
                value = await later.rest
            except Exception as error:  # noqa: BLE001  # a host function's failure: the model hears of it, no more
                frame = _failure_reply(call_id, _failure(error))
            else:
                frame = _value_reply(call_id, call, value)
            finally:
                if self._admission is not None:
                    self._admission.release(size)
            self._outbox.append(frame)
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

    def _send_replies(self, tasks: list[_Task]) -> None:
        """The reader writes the outbox without waiting: a task writes what the pipe cannot take yet."""
        frames, self._outbox = self._outbox, []
        try:
            self._write(frames[0] if len(frames) == 1 else b"".join(frames))
        except OSError:
            self._reply_failed = True
            return
        if self._unwritten and not self.drain_lock.locked():
            self._answering += 1
            tasks.append((self._drain_replies, ()))

    async def _drain_replies(self) -> None:
        try:
            await self._send_outbox()
        finally:
            self._answering -= 1

    async def _send_outbox(self) -> None:
        frames, self._outbox = self._outbox, []
        try:
            if frames:
                self._write(frames[0] if len(frames) == 1 else b"".join(frames))
            await self._drain()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._reply_failed = True

    async def _crashed(self, violation: str | None = None) -> RunResult:
        await self.kill()
        if violation is not None:
            message = f"the worker process broke the protocol ({violation}); it was replaced and the code stopped"
        elif self.process.returncode == -signal.SIGSEGV:
            message = (
                "the worker process crashed (a C stack overflow: something nested too deeply, like a chain of "
                "thousands of map() or generator objects, or memory ran out); the code was stopped. Nest less"
            )
        else:
            hint = " (it ran out of memory?)" if self.process.returncode in (-signal.SIGKILL, 1) else ""
            message = f"the worker process died{hint}; the code was stopped. Use less memory per run"
        return RunResult(error=RunError(kind="crashed", message=message))

    async def kill(self) -> None:
        """Stop the worker now; bounded and shielded, so cleanup always finishes."""
        self.healthy = False
        with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
            if self.process.returncode is None:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            await self.process.wait()
            await self.process.aclose()
        self._close_pipes()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _close_pipes(self) -> None:
        """Close the host's ends of the pipes (once); a task waiting on one wakes with `ClosedResourceError`."""
        pipes, self._pipes = self._pipes, ()
        for fd in pipes:
            anyio.notify_closing(fd)
            os.close(fd)
        self._unwritten.clear()


_RECYCLE = frozenset({"timeout", "crashed"})
"""Error kinds after which a worker is replaced rather than reused: the run was cut off mid-work (tasks, generators
and callbacks it left may still be there). Other limits end the run with an exception the run's end handles."""

_BREAKAGE = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    ProtocolError,
    OSError,
)
"""What a dead, dying or misbehaving worker raises on the host's side of the pipe."""


def _is_breakage(error: BaseException) -> bool:
    """Whether `error`, or every exception in it if it is a (nested) group, is a broken worker."""
    if isinstance(error, BaseExceptionGroup):
        return all(_is_breakage(inner) for inner in error.exceptions)
    return isinstance(error, _BREAKAGE)


def _protocol_violation(error: BaseException) -> str | None:
    """The first protocol violation in `error` (a malformed frame, not a dead pipe), in words; else None."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _protocol_violation(inner)
            if found is not None:
                return found
        return None
    return str(error)[:200] if isinstance(error, ProtocolError) else None


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
    except (AssertionError, KeyError, TypeError, ValueError) as problem:
        raise ProtocolError(f"a malformed `done` frame ({type(problem).__name__})") from None
