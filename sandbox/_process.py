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
from anyio.streams.buffered import BufferedByteReceiveStream

from sandbox._confine import Layers
from sandbox._distrust import Admission, CallsOverError, checked_result
from sandbox._hostcall import Call, HostFailure
from sandbox._protocol import HEADER, MAX_FRAME, FrameTooLargeError, ProtocolError, decode, encode, frame_size
from sandbox.errors import SandboxError
from sandbox.limits import timeout_message
from sandbox.result import ERROR_KINDS, RunError, RunResult

if TYPE_CHECKING:
    from anyio.abc import Process

    from sandbox._confine import Confinement
    from sandbox._dispatch import Dispatcher
    from sandbox._jsonvalue import JsonValue
    from sandbox._repeat import Repeat
    from sandbox.limits import Limits

_ROOT = str(Path(__file__).resolve().parent.parent)
WORKER = ("-m", "sandbox._worker")
"""How the interpreter is told to run a pool's worker."""
_START_TIMEOUT = 30.0
_KILL_GRACE = 1.0


class WorkerProcess:
    """One live worker process."""

    def __init__(self, process: Process, workdir: str) -> None:
        self.process = process
        self.workdir = workdir
        self.layers = Layers.none("the worker has not started")
        """The confinement the worker reported when it became ready."""
        assert process.stdout is not None
        assert process.stdin is not None
        self.reader = BufferedByteReceiveStream(process.stdout)
        self.writer = process.stdin
        self.send_lock = anyio.Lock(fast_acquire=True)  # no extra loop turn per reply when nothing contends
        self.healthy = True
        self._run_ids = itertools.count(1)
        self._reply_failed = False
        self._outbox: list[bytes] = []
        """Replies not written yet: replies finished in one turn of the loop go out in one write."""
        self._answering = 0
        """Calls being answered now."""
        self.last_size = 0
        """Bytes of the last frame received."""
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
        process = await anyio.open_process(
            [sys.executable, "-s", *entry, str(memory), confinement.to_arg()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
        worker = cls(process, workdir)
        try:
            await worker.handshake(confinement)
        except BaseException:
            await worker.kill()
            raise
        return worker

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
        """The next frame from the worker."""
        header = await self.reader.receive_exactly(HEADER.size)
        self.last_size = frame_size(header)
        return decode(await self.reader.receive_exactly(self.last_size))

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the worker."""
        await self.send_frame(encode(message))

    async def send_frame(self, frame: bytes) -> None:
        """One encoded frame to the worker, never interleaved with another."""
        async with self.send_lock:
            await self.writer.send(frame)

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
        try:
            await self.send_frame(frame)
            async with anyio.create_task_group() as calls:
                with anyio.move_on_after(limits.timeout + _KILL_GRACE) as deadline:
                    try:
                        result = await self._serve(calls, dispatcher, run_id, Admission(limits))
                    except CallsOverError as error:  # the worker's own cap did not hold: it is not reused
                        result = RunResult(error=RunError(kind="call_limit", message=str(error)), calls=limits.calls)
                        self._reply_failed = True  # its frames still on the pipe belong to no run: never reuse it
                calls.cancel_scope.cancel()
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

    async def _serve(
        self, calls: anyio.abc.TaskGroup, dispatcher: Dispatcher, run_id: int, admission: Admission
    ) -> RunResult:
        while True:
            await admission.room()
            message = await self.receive()
            kind = message["t"]
            if kind == "done":
                if message.get("run") != run_id:
                    raise ProtocolError(f"`done` for run {message.get('run')!r} during run {run_id}")
                return _result(message.get("result"))
            if kind != "call":
                raise ProtocolError(f"unexpected frame {kind!r} during a run")
            call_id, call = _parse_call(message)
            size = self.last_size
            admission.admit(size)
            if message.get("run") == run_id:
                self._answering += 1
                calls.start_soon(self._answer, dispatcher, call_id, call, admission, size)
            else:  # left over from an earlier run (a task or generator still running after it ended)
                admission.release(size)
                failure = HostFailure("RuntimeError", "the run that made this call is over; its calls are refused")
                calls.start_soon(self._reply, _failure_reply(call_id, failure))

    async def _answer(self, dispatcher: Dispatcher, call_id: int, call: Call, admission: Admission, size: int) -> None:
        try:
            try:
                frame = await self._outcome(dispatcher, call_id, call)
            finally:
                admission.release(size)
            await self._reply(frame)
        finally:
            self._answering -= 1

    async def _outcome(self, dispatcher: Dispatcher, call_id: int, call: Call) -> bytes:
        try:
            value = await dispatcher(call)
        except HostFailure as failure:
            frame = _failure_reply(call_id, failure)
        except Exception as error:  # noqa: BLE001  # a failing name resolver, say: the model hears of it, no more
            frame = _failure_reply(call_id, HostFailure(type(error).__name__, _text(error)))
        else:
            try:
                frame = encode({"t": "result", "id": call_id, "ok": True, "value": value})
            except FrameTooLargeError as error:
                frame = _failure_reply(
                    call_id,
                    HostFailure(
                        "ValueError",
                        f"`{call.label}` returned {error.size:,} bytes of JSON, more than the {MAX_FRAME:,} bytes "
                        "one call can return; ask for less per call (a page, a filter, fewer fields)",
                    ),
                )
        return frame

    async def _reply(self, frame: bytes) -> None:
        self._outbox.append(frame)
        if len(self._outbox) > 1:
            return  # the reply that came first in this turn writes this one with its own
        if self._answering > 1:  # let the other replies finishing in this turn join this write
            await anyio.lowlevel.cancel_shielded_checkpoint()
        frames, self._outbox = self._outbox, []
        try:
            await self.send_frame(frames[0] if len(frames) == 1 else b"".join(frames))
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
        shutil.rmtree(self.workdir, ignore_errors=True)


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
