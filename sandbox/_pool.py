"""A warm pool of worker processes: started together, lent one run at a time, replaced when one breaks.

Entering the pool starts every worker and waits until each is ready and confined, so a worker that cannot start
is an immediate error, never a wait. A replacement is started in the background; if that fails, the run that
was waiting for it fails at once with the reason, and the pool tries again for the next one.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from typing import TYPE_CHECKING, Self

import anyio

from sandbox._confine import Layers
from sandbox._distrust import CPU_CEILING, CPU_TICK, IDLE_CPU
from sandbox._process import WORKER, WorkerProcess
from sandbox.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import TaskGroup, TaskStatus
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from sandbox._confine import Confinement


class WorkerPool:
    """`size` worker processes kept warm; an async context manager that owns them."""

    def __init__(
        self,
        *,
        size: int,
        memory: int,
        confinement: Confinement,
        entry: tuple[str, ...] = WORKER,
        fresh: bool = False,
    ) -> None:
        self.size = size
        self.fresh = fresh
        """Whether each worker serves one run only, and is replaced after it."""
        self.memory = memory
        """Bytes each pooled worker may add (0: no limit); a run may ask for less, or more on a worker of its own."""
        self.confinement = confinement
        self.entry = entry
        """The interpreter's arguments that start a worker."""
        self.layers = Layers.none("the sandbox is not open")
        """The confinement the workers reported."""
        self._send: MemoryObjectSendStream[WorkerProcess | None]
        self._receive: MemoryObjectReceiveStream[WorkerProcess | None]
        self._send, self._receive = anyio.create_memory_object_stream[WorkerProcess | None](math.inf)
        """Workers handed to runs waiting for one, and a failed replacement (None) that fails the next wait."""
        self._idle: list[WorkerProcess] = []
        """Warm workers no run waits for, the last given back on top: a run takes the one whose caches are warmest."""
        self._waiting = 0
        """Runs waiting for a worker."""
        self._workers: set[WorkerProcess] = set()
        self._own: set[WorkerProcess] = set()
        """Workers started for one run that needs more memory than the pooled ones may use."""
        self._tasks: TaskGroup | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._failure = SandboxError("a sandbox worker process could not be started")
        self.idle_watch = IDLE_WATCH
        """Seconds between two looks at the idle workers' CPU time."""

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        self._tasks = await stack.enter_async_context(anyio.create_task_group())
        stack.push_async_callback(self._stop)
        try:
            for _ in range(self.size):
                await self._tasks.start(self._start)
            self._tasks.start_soon(self._watch)
        except BaseException:
            await stack.aclose()  # leaves the task group cleanly, so the error is raised as itself, not in a group
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def _stop(self) -> None:
        """Kill every worker and the replacements still starting."""
        assert self._tasks is not None
        with anyio.CancelScope(shield=True):
            for worker in list(self._workers):
                await worker.kill()
        self._workers.clear()
        self._own.clear()
        self._tasks.cancel_scope.cancel()
        self._tasks = None
        self._idle.clear()
        self._send.close()
        self._receive.close()

    async def _watch(self) -> None:
        """Replace an idle worker as soon as it computes: code its last run left running, whatever its rlimits say.

        Code that got past the policy can raise its own CPU soft limit and ignore `SIGXCPU`; this look needs
        nothing from the worker (its CPU time is read from `/proc`) and no privilege over it.
        """
        while True:
            await anyio.sleep(self.idle_watch)
            for worker in list(self._workers):
                if worker.idle_cpu is not None and worker in self._workers and not _rested(worker):
                    await self._replace(worker)

    async def _start(self, *, task_status: TaskStatus[None]) -> None:
        """Start one worker; its failure is the caller's error (`tg.start` raises it)."""
        worker = await self._new_worker(self.memory)
        self._workers.add(worker)
        self._put(worker)
        task_status.started()

    async def _new_worker(self, memory: int) -> WorkerProcess:
        try:
            worker = await WorkerProcess.start(memory, self.confinement, entry=self.entry)
        except OSError as error:  # no such interpreter, no more processes
            raise SandboxError(f"a sandbox worker process could not be started: {error}") from error
        self.layers = worker.layers
        return worker

    async def _start_replacement(self) -> None:
        try:
            await self._start(task_status=anyio.TASK_STATUS_IGNORED)
        except SandboxError as error:
            self._failure = error
            self._send.send_nowait(None)  # wakes a run waiting for a worker, which fails with the reason

    @contextlib.asynccontextmanager
    async def worker(self, memory: int) -> AsyncIterator[WorkerProcess]:
        """A worker for one run of `memory` bytes (`lend`), given back when the block ends (`give_back`)."""
        worker = await self.lend(memory)
        try:
            yield worker
        finally:
            await self.give_back(worker)

    async def lend(self, memory: int) -> WorkerProcess:
        """A warm worker for one run of `memory` bytes; `give_back` it after the run, however the run ended.

        A run that may use more memory than the pooled workers gets a worker of its own, started for it.
        """
        if self._tasks is None:
            raise SandboxError("the worker pool is not running; use `async with Sandbox(...)`")
        if self.memory > 0 and (memory <= 0 or memory > self.memory):
            worker = await self._new_worker(memory)
            self._workers.add(worker)  # so closing the pool kills it too
            self._own.add(worker)
            return worker
        return await self._acquire()

    async def give_back(self, worker: WorkerProcess) -> None:
        """End a worker's run: a healthy pooled one waits for the next run, any other is replaced in the background."""
        if worker in self._own:  # started for one run
            self._own.discard(worker)
            self._workers.discard(worker)
            await worker.kill()
        elif worker.healthy and not self.fresh and worker.process.returncode is None:
            worker.idle_cpu, worker.idle_since = worker.cpu.seconds(), time.monotonic()
            self._put(worker)
        else:
            await self._replace(worker)

    def _put(self, worker: WorkerProcess) -> None:
        """A worker ready for a run: to a run waiting for one, else on top of the idle ones."""
        if self._waiting:
            self._send.send_nowait(worker)
        else:
            self._idle.append(worker)

    async def _acquire(self) -> WorkerProcess:
        while True:
            if self._idle:  # a warm worker waiting costs no turn of the event loop
                worker: WorkerProcess | None = self._idle.pop()
            else:
                try:
                    worker = self._receive.receive_nowait()
                except anyio.WouldBlock:
                    self._waiting += 1
                    try:
                        worker = await self._receive.receive()
                    finally:
                        self._waiting -= 1
            if worker is None:
                assert self._tasks is not None
                self._tasks.start_soon(self._start_replacement)  # try again for the next run
                raise self._failure
            if worker not in self._workers:
                continue  # replaced while idle (`_watch`)
            if worker.process.returncode is None and _rested(worker):
                worker.idle_cpu = None  # lent: its CPU is its run's
                return worker
            await self._replace(worker)  # died, or computed, while idle: replace it, take the next

    async def _replace(self, worker: WorkerProcess) -> None:
        """Kill a broken worker and start another in the background."""
        self._workers.discard(worker)
        if worker in self._idle:  # replaced while idle (`_watch`)
            self._idle.remove(worker)
        await worker.kill()
        if self._tasks is not None:
            self._tasks.start_soon(self._start_replacement)


def _rested(worker: WorkerProcess) -> bool:
    """Whether a pooled worker used no CPU to speak of since its last run, and has plenty of its CPU life left.

    An idle worker has nothing to compute; one that does is running code its last run left behind. A worker given
    back too recently to have used that much (at most the time since, on every CPU at once) is not read again.
    """
    if worker.idle_cpu is None:
        return True
    most = (time.monotonic() - worker.idle_since) * _CPUS + _SLACK  # the most CPU it can have used since
    if most <= IDLE_CPU and worker.idle_cpu + most < CPU_CEILING / 2:
        return True
    now = worker.cpu.seconds()
    return now is None or (now - worker.idle_cpu <= IDLE_CPU and now < CPU_CEILING / 2)


_CPUS = os.cpu_count() or 1024
_SLACK = 2 * CPU_TICK
"""What two readings of `/proc` can differ by beyond the CPU time between them: each is cut to a clock tick."""


IDLE_WATCH = 1.0
"""Seconds between two looks at the idle workers' CPU time: a worker spinning between runs is replaced after at
most about this long and `IDLE_CPU` of CPU."""
