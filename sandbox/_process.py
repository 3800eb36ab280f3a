"""The host's handle on one worker process: spawn, handshake, run code with host calls, kill.

The worker starts with a scrubbed environment, an empty working directory and no usable stdin. A run that
overstays its wall clock, or a worker that dies or breaks the protocol, is killed and reported as a result; the
pool replaces it. The frames on its pipes are `sandbox._pipe`'s; what is said on them during one run (the calls
answered, a call tagged with another run's id refused) is `sandbox._conversation`'s.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from sandbox._alarm import Alarm
from sandbox._confine import Layers
from sandbox._conversation import Conversation
from sandbox._distrust import KILL_GRACE, Admission, CpuClock, checked_result
from sandbox._pipe import FramePipe
from sandbox._protocol import MAX_FRAME, FrameTooLargeError, ProtocolError, encode_with_text
from sandbox.errors import SandboxError
from sandbox.limits import timeout_message
from sandbox.result import RunError, RunResult

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


class WorkerProcess:
    """One live worker process, and the host's ends of its two pipes (non-blocking, read and written directly)."""

    def __init__(self, process: Process, workdir: str, *, to_worker: int, from_worker: int) -> None:
        self.process = process
        self.workdir = workdir
        self.layers = Layers.none("the worker has not started")
        """The confinement the worker reported when it became ready."""
        self.pipe = FramePipe(to_worker=to_worker, from_worker=from_worker)
        self.alarm = Alarm()
        """The timer for its runs' deadlines, left armed between runs."""
        self.healthy = True
        self._run_ids = itertools.count(1)
        self.idle_cpu: float | None = None
        """CPU seconds the worker had used when its last run ended (None: not known)."""
        self.idle_since = 0.0
        """When (`time.monotonic()`) its last run ended."""
        self.cpu = CpuClock(process.pid)
        """The worker's CPU time, as the pool reads it between runs."""
        self._limits: tuple[Limits, str] | None = None
        """The last run's limits, and their JSON text."""

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
            with anyio.move_on_after(KILL_GRACE):
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
        return await self.pipe.receive()

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the worker."""
        await self.pipe.send(message)

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
            frame = encode_with_text(
                {
                    "t": "run",
                    "run": run_id,
                    "code": code,
                    "functions": dispatcher.kinds(),
                    "error_names": list(error_names),
                    "variables": variables,
                    **({"repeat": {"seed": repeat.seed, "clock": repeat.clock}} if repeat else {}),
                },
                "limits",
                self._limits_text(limits),
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
        admission = Admission(limits)
        conversation = Conversation(self.pipe, dispatcher, run_id=run_id, admission=admission, alarm=self.alarm)
        try:
            await self.pipe.send_frame(frame)
            result = await conversation.serve(within=limits.timeout + KILL_GRACE)
        except BaseException as error:
            if _is_breakage(error):
                return await self._crashed(dispatcher, _protocol_violation(error))
            # The caller's cancellation, KeyboardInterrupt: it propagates, without any breakage that came with it
            # (cancel scopes only absorb groups of cancellations); the pool replaces the unhealthy worker.
            if isinstance(error, BaseExceptionGroup):
                _, rest = error.split(Exception)
                if rest is not None and rest is not error:
                    raise rest from None
            raise
        if result is None:  # the deadline passed
            await self.kill()
            return RunResult(
                error=RunError(
                    kind="timeout",
                    message=timeout_message(limits.timeout, " in one long operation (a slow regular expression?)"),
                ),
                **_calls_made(dispatcher),
            )
        try:
            result, lied = checked_result(
                result, limits=limits, keeps=variables is not None, reserved=(*dispatcher.functions, *error_names)
            )
        except Exception as error:  # noqa: BLE001  # a result the checks trip on is the worker's fault, and a result
            return await self._crashed(dispatcher, f"{type(error).__name__} while the host checked its result")
        # A worker that sent what its own checks forbid is not reused; nor one whose run was cut off mid-work.
        self.healthy = not (conversation.reply_failed or lied or (result.error and result.error.kind in _RECYCLE))
        return result

    def _limits_text(self, limits: Limits) -> str:
        """`limits` as JSON text: made once for the `Limits` (frozen) that runs on this worker keep passing."""
        if self._limits is None or self._limits[0] is not limits:
            self._limits = (limits, json.dumps(limits.to_json(), separators=(",", ":"), ensure_ascii=False))
        return self._limits[1]

    async def _crashed(self, dispatcher: Dispatcher, violation: str | None = None) -> RunResult:
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
        return RunResult(error=RunError(kind="crashed", message=message), **_calls_made(dispatcher))

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
        self.pipe.close()
        self.alarm.close()
        self.cpu.close()
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


def _calls_made(dispatcher: Dispatcher) -> dict[str, Any]:
    """The host's own count of a run's calls, for a run the worker never reported on: they ran all the same."""
    calls = dispatcher.count if dispatcher.max_calls is None else min(dispatcher.count, dispatcher.max_calls)
    return {"calls": calls, "names": tuple(dispatcher.called)}


def _is_breakage(error: BaseException) -> bool:
    """Whether `error`, or every exception in it if it is a (nested) group, is a broken worker.

    Any `Exception` counts: while the host reads a worker's frames, what goes wrong comes from what it sent, and
    a run must end in a result; cancellation and `KeyboardInterrupt` are not exceptions of that kind.
    """
    if isinstance(error, BaseExceptionGroup):
        return all(_is_breakage(inner) for inner in error.exceptions)
    return isinstance(error, Exception)


def _protocol_violation(error: BaseException) -> str | None:
    """The first protocol violation in `error` (a malformed frame, not a dead pipe), in words; else None."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _protocol_violation(inner)
            if found is not None:
                return found
        return None
    if isinstance(error, ProtocolError):
        return str(error)[:200]
    return None if isinstance(error, _BREAKAGE) else f"{type(error).__name__} while the host read its frames"
