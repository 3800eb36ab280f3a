"""The host's handle on one worker process: spawn, handshake, run code with host calls, kill.

The worker starts with a scrubbed environment, an empty working directory and no usable stdin. A run that
overstays its wall clock, or a worker that dies, is killed and reported as a result; the pool replaces it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from sandbox._calls import HostFailure
from sandbox._protocol import HEADER, ProtocolError, decode, encode, frame_size
from sandbox.result import RunError, RunResult

if TYPE_CHECKING:
    from anyio.abc import Process

    from sandbox._dispatch import Dispatcher
    from sandbox.limits import Limits

_ROOT = str(Path(__file__).resolve().parent.parent)
_START_TIMEOUT = 30.0
_KILL_GRACE = 1.0


class WorkerProcess:
    """One live worker process."""

    def __init__(self, process: Process, workdir: str) -> None:
        self.process = process
        self.workdir = workdir
        assert process.stdout is not None
        assert process.stdin is not None
        self.reader = BufferedByteReceiveStream(process.stdout)
        self.writer = process.stdin
        self.send_lock = anyio.Lock()
        self.healthy = True

    @classmethod
    async def start(cls, memory: int) -> WorkerProcess:
        """Spawn a worker and wait for its `ready`."""
        workdir = tempfile.mkdtemp(prefix="sandbox-")
        env = {
            "PATH": os.defpath,
            "PYTHONPATH": _ROOT,
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
        }
        process = await anyio.open_process(
            [sys.executable, "-s", "-m", "sandbox._worker", str(memory)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
        worker = cls(process, workdir)
        try:
            with anyio.fail_after(_START_TIMEOUT):
                message = await worker.receive()
            if message["t"] != "ready":
                raise ProtocolError(f"expected `ready`, got {message['t']!r}")
        except BaseException:
            await worker.kill()
            raise
        return worker

    async def receive(self) -> dict[str, Any]:
        """The next frame from the worker."""
        header = await self.reader.receive_exactly(HEADER.size)
        return decode(await self.reader.receive_exactly(frame_size(header)))

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the worker."""
        async with self.send_lock:
            await self.writer.send(encode(message))

    async def run(
        self, code: str, *, limits: Limits, dispatcher: Dispatcher, error_names: tuple[str, ...]
    ) -> RunResult:
        """Run code in the worker, serving its host calls; a breach kills the worker and is a result."""
        self.healthy = False  # until the worker reports `done`, it is mid-run and must not be reused
        await self.send(
            {
                "t": "run",
                "code": code,
                "limits": limits.to_json(),
                "functions": dispatcher.kinds(),
                "error_names": list(error_names),
            }
        )
        try:
            async with anyio.create_task_group() as calls:
                with anyio.move_on_after(limits.timeout + _KILL_GRACE) as deadline:
                    result = await self._serve(calls, dispatcher)
                calls.cancel_scope.cancel()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ProtocolError, OSError):
            return await self._crashed()
        if deadline.cancelled_caught:
            await self.kill()
            return RunResult(
                error=RunError(
                    kind="timeout",
                    message=f"the code ran past its {limits.timeout:g} s limit and was stopped (a slow regular "
                    "expression or one huge operation?); do less per run",
                )
            )
        self.healthy = True
        return result

    async def _serve(self, calls: anyio.abc.TaskGroup, dispatcher: Dispatcher) -> RunResult:
        while True:
            message = await self.receive()
            if message["t"] == "done":
                return RunResult.from_json(message["result"])
            if message["t"] == "call":
                calls.start_soon(self._answer, dispatcher, message)

    async def _answer(self, dispatcher: Dispatcher, message: dict[str, Any]) -> None:
        try:
            value = await dispatcher(
                message["fn"], message.get("attr"), message.get("args") or [], message.get("kwargs") or {}
            )
            reply: dict[str, Any] = {"t": "result", "id": message["id"], "ok": True, "value": value}
        except HostFailure as failure:
            reply = {
                "t": "result",
                "id": message["id"],
                "ok": False,
                "type": failure.type_name,
                "message": failure.message,
            }
        try:
            await self.send(reply)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.healthy = False

    async def _crashed(self) -> RunResult:
        await self.kill()
        code = self.process.returncode
        hint = " (it ran out of memory?)" if code in (-signal.SIGKILL, -signal.SIGSEGV, 1) else ""
        return RunResult(
            error=RunError(
                kind="crashed",
                message=f"the worker process died{hint}; the code was stopped. Use less memory per run",
            )
        )

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
