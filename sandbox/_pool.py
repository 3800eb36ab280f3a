"""A warm pool of worker processes: started together, lent one run at a time, replaced when one breaks."""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Self

import anyio

from sandbox._process import WorkerProcess
from sandbox.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

_ACQUIRE_TIMEOUT = 60.0


class WorkerPool:
    """`size` worker processes kept warm; an async context manager that owns them."""

    def __init__(self, *, size: int, memory: int) -> None:
        self.size = size
        self.memory = memory
        self._send: MemoryObjectSendStream[WorkerProcess]
        self._receive: MemoryObjectReceiveStream[WorkerProcess]
        self._send, self._receive = anyio.create_memory_object_stream[WorkerProcess](math.inf)
        self._workers: set[WorkerProcess] = set()
        self._tasks: TaskGroup | None = None
        self._failure: BaseException | None = None

    async def __aenter__(self) -> Self:
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        for _ in range(self.size):
            self._tasks.start_soon(self._spawn)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._tasks is not None
        with anyio.CancelScope(shield=True):
            for worker in list(self._workers):
                await worker.kill()
        self._workers.clear()
        self._tasks.cancel_scope.cancel()
        await self._tasks.__aexit__(None, None, None)
        self._tasks = None
        self._send.close()
        self._receive.close()

    async def _spawn(self) -> None:
        try:
            worker = await WorkerProcess.start(self.memory)
        except Exception as error:  # noqa: BLE001  # reported to the next `acquire`
            self._failure = error
            return
        self._workers.add(worker)
        self._send.send_nowait(worker)

    @contextlib.asynccontextmanager
    async def worker(self) -> AsyncIterator[WorkerProcess]:
        """Borrow a warm worker for one run; a broken one is replaced in the background."""
        if self._tasks is None:
            raise SandboxError("the worker pool is not running; use `async with Sandbox(...)`")
        with anyio.move_on_after(_ACQUIRE_TIMEOUT) as scope:
            worker = await self._receive.receive()
            while worker.process.returncode is not None:  # died while idle: replace it, take the next
                await self._replace(worker)
                worker = await self._receive.receive()
        if scope.cancelled_caught:
            raise SandboxError(f"no worker process became available: {self._failure!r}")
        try:
            yield worker
        finally:
            if worker.healthy and worker.process.returncode is None:
                self._send.send_nowait(worker)
            else:
                await self._replace(worker)

    async def _replace(self, worker: WorkerProcess) -> None:
        """Kill a broken worker and start another in the background."""
        self._workers.discard(worker)
        await worker.kill()
        if self._tasks is not None:
            self._tasks.start_soon(self._spawn)
