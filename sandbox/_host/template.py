"""The host's handle on the template process: started, asked to fork run processes, restarted when it dies.

The template is spawned with one end of a Unix `SOCK_SEQPACKET` socket pair as its stdin. To get a run process,
the host makes the run's two pipes and sends the child's ends with a `fork` request (`SCM_RIGHTS`), so the run's
pipes never pass through anything but the host and that one child; the template answers with the child's pid and
a pidfd of it (opened before the child can have been reaped, so a kill never reaches a process that reused the
pid), and later with its exit status, once it has reaped it. A few run processes are forked ahead (`spares`) and
refilled in the background, so a run never waits for a fork unless more runs start at once than there are
spares. A template that dies is started again; run processes it had forked live on and finish their runs.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import anyio

from sandbox._host.process import RunProcess
from sandbox._shared.confinement import Layers
from sandbox.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from anyio.abc import Process, TaskGroup
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from sandbox._shared.confinement import Confinement

_ROOT = str(Path(__file__).resolve().parent.parent.parent)
TEMPLATE = ("-m", "sandbox._worker.main")
"""How the interpreter is told to run the template."""
SPARES = 2
"""Run processes forked ahead of the runs that will take them."""
_START_TIMEOUT = 30.0
FORK_TIMEOUT = 10.0
"""Seconds the template has to answer a fork request (a fork takes milliseconds); past it the template is killed
and started again, as one that died (a stopped or wedged template answers nothing, and closes nothing)."""
_MAX_MESSAGE = 4096
_GRACE = 2.0
"""Seconds a closing template is given to reap its run processes before it is killed."""


class Template:
    """The template process and the run processes forked ahead from it; an async context manager."""

    def __init__(
        self, *, confinement: Confinement, memory: int = 0, entry: tuple[str, ...] = TEMPLATE, spares: int = SPARES
    ) -> None:
        self.confinement = confinement
        self.memory = memory
        """Bytes a spare may add to what the template had mapped (0: no limit), fixed as its hard limit at its fork."""
        self.entry = entry
        """The interpreter's arguments that start the template."""
        self.spares = spares
        self.layers = Layers.none("the sandbox is not open")
        """The confinement the template and its run processes reported."""
        self.restarts = 0
        """How many times the template died and was started again."""
        self._link: _Link | None = None
        """The template running now: its process, control socket and working directory."""
        self._ids = itertools.count(1)
        self._forks: dict[int, tuple[anyio.Event, list[int], _Link]] = {}
        """Fork requests waiting for their `forked` reply: set with the pid in the list; the template asked."""
        self._children: dict[int, RunProcess] = {}
        """Every run process alive, by pid: told its exit status when the template reports it."""
        self._restart = anyio.Lock()
        self._send: MemoryObjectSendStream[RunProcess | SandboxError]
        self._receive: MemoryObjectReceiveStream[RunProcess | SandboxError]
        self._send, self._receive = anyio.create_memory_object_stream[RunProcess | SandboxError]()
        """Each refill task waits in `send` with its spare until a run takes it: `spares` of them at most."""
        self._ready: list[RunProcess] = []
        """The run process forked at start (to see that one can be), for the first run."""
        self._tasks: TaskGroup | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        self._tasks = await stack.enter_async_context(anyio.create_task_group())
        stack.push_async_callback(self._stop)
        try:
            await self._start()
            first = await self._fork_or_error()  # a template whose run processes cannot start is an error now
            if isinstance(first, SandboxError):
                raise first
            self.layers = first.layers
            if self.confinement.require:
                first.layers.require()
            self._ready.append(first)
            for _ in range(self.spares):
                self._tasks.start_soon(_guarded, self._refill)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def take(self, memory: int | None = None) -> RunProcess:
        """A run process, ready for a run of `memory` bytes (forked ahead if it can be); `SandboxError` if none can be.

        A spare's hard memory limit was fixed at its fork; a run that may use more gets a process forked for it.
        """
        if self._tasks is None:
            raise SandboxError("the sandbox is not running; use `async with Sandbox(...)`")
        got: RunProcess | SandboxError
        if memory is not None and memory != self.memory and not (self.memory > 0 and 0 < memory <= self.memory):
            got = await self._fork_or_error(memory)
            if isinstance(got, SandboxError):
                raise got
            return got
        while True:
            if self._ready:
                got = self._ready.pop()
            else:
                try:
                    got = self._receive.receive_nowait()
                except anyio.WouldBlock:
                    got = await self._fork_or_error()  # more runs at once than spares: this one forks for itself
                else:
                    if isinstance(got, SandboxError):  # a spare's failure may be over by now: this run tries again
                        got = await self._fork_or_error()
            if isinstance(got, SandboxError):
                raise got
            if got.alive():
                return got
            await got.kill()  # a spare that died while it waited (killed from outside): the run takes another

    async def _refill(self) -> None:
        """Keep the spares full, in the background; a failure is handed to the next run that takes one."""
        while True:
            got = await self._fork_or_error()
            try:
                await self._send.send(got)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the sandbox is closing
                if not isinstance(got, SandboxError):
                    await got.kill()
                return
            if isinstance(got, SandboxError):
                await anyio.sleep(0.5)  # a template that cannot start is not retried in a tight loop

    async def _fork_or_error(self, memory: int | None = None) -> RunProcess | SandboxError:
        """A run process, or why none could be made: twice in a row, so one killed from outside fails no run.

        Every failure is a `SandboxError` here (the host out of descriptors or processes, a template that never
        answered): what goes wrong while making a run process ends at most the run that asked for it.
        """
        error: SandboxError | None = None
        for _ in range(2):
            try:
                return await self._fork(memory)
            except SandboxError as failed:
                error = failed
            except OSError as failed:  # the host's own resources: descriptors (EMFILE), processes, memory
                error = SandboxError(
                    f"the host could not make a run process: {failed.strerror or failed}; run fewer runs at once "
                    "(`max_runs`) or raise the host's limit on open files"
                )
            except Exception as failed:  # noqa: BLE001  # nothing a fork meets may end more than its run
                error = SandboxError(f"the host could not make a run process: {type(failed).__name__}: {failed}")
        assert error is not None
        return error

    async def _fork(self, memory: int | None = None) -> RunProcess:
        """Fork one run process and wait until it is confined and ready; restarts a dead template first."""
        for _ in range(2):  # a template that dies under this fork is started again once
            await self._alive()
            try:
                return await self._fork_once(self.memory if memory is None else memory)
            except _TemplateDied:
                continue
        raise SandboxError("the sandbox's template process died twice while forking a run process")

    async def _fork_once(self, memory: int) -> RunProcess:
        link = self._link
        assert link is not None
        child_in, to_child = os.pipe()
        try:
            from_child, child_out = os.pipe()
        except OSError:
            os.close(child_in)
            os.close(to_child)
            raise
        fork_id = next(self._ids)
        reply: tuple[anyio.Event, list[int], _Link] = (anyio.Event(), [], link)
        self._forks[fork_id] = reply
        try:
            # a stopped or wedged template neither answers nor closes its socket: past the deadline it is dead to
            # the host, killed and started again
            with anyio.move_on_after(FORK_TIMEOUT) as waited:
                try:
                    request = json.dumps({"t": "fork", "id": fork_id, "memory": memory}).encode()
                    await link.send([request], [child_in, child_out])
                except (OSError, anyio.ClosedResourceError):
                    await link.close()
                    raise _TemplateDied from None
                finally:
                    os.close(child_in)
                    os.close(child_out)
                await reply[0].wait()  # set by the reply, or with no pid when the template dies
            if waited.cancelled_caught:
                await link.close()
                raise _TemplateDied
            if not reply[1]:
                raise _TemplateDied
            if reply[1][0] <= 0 or reply[1][1] < 0:
                raise SandboxError(
                    "the sandbox's template process could not fork a run process, or hand it over (out of processes "
                    "or open files?)"
                )
        except BaseException:
            for fd in (to_child, from_child, *reply[1][1:]):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            del self._forks[fork_id]
        child = RunProcess(reply[1][0], reply[1][1], to_child=to_child, from_child=from_child)
        self._children[child.pid] = child
        child.on_close = functools.partial(self._forget, child)
        try:
            await child.handshake(self.confinement)
        except BaseException:
            await child.kill()
            raise
        return child

    async def _alive(self) -> None:
        """Start the template again if it died (one start at a time)."""
        async with self._restart:
            if (self._link is None or self._link.dead.is_set()) and self._tasks is not None:
                self.restarts += 1
                await self._start()

    async def _start(self) -> None:
        """Spawn the template and wait for its `ready`; `SandboxError` if it never gets there."""
        if self._link is not None:
            await self._link.close()
            self._link = None
        try:
            host, template = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError as error:
            raise SandboxError(f"the sandbox's template process could not be started: {error}") from error
        try:
            workdir = tempfile.mkdtemp(prefix="sandbox-")
        except OSError as error:
            host.close()
            template.close()
            raise SandboxError(f"the sandbox's template process could not be started: {error}") from error
        env = {"PATH": os.defpath, "PYTHONPATH": _ROOT, "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
        env["PYTHONHASHSEED"] = "0"
        try:
            process = await anyio.open_process(
                [sys.executable, "-s", *self.entry, self.confinement.to_arg(), str(self.memory)],
                stdin=template.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=env,
                start_new_session=True,
            )
        except OSError as error:  # no such interpreter, no more processes
            host.close()
            shutil.rmtree(workdir, ignore_errors=True)
            raise SandboxError(f"the sandbox's template process could not be started: {error}") from error
        finally:
            template.close()
        host.setblocking(False)
        link = _Link(process, host, workdir)
        try:
            with anyio.fail_after(_START_TIMEOUT):
                got = await link.read()
        except TimeoutError:
            await link.close()
            raise SandboxError(f"the sandbox's template process was not ready within {_START_TIMEOUT:g} s") from None
        except BaseException:
            await link.close()
            raise
        if got is None or got[0].get("t") != "ready":
            await link.close()
            raise SandboxError(
                "the sandbox's template process exited before it was ready; is `Limits.memory` too small for Python?"
            )
        self._link = link
        assert self._tasks is not None
        self._tasks.start_soon(_guarded, self._listen, link)

    def _forget(self, child: RunProcess, pid: int) -> None:
        """The host is done with `child`: its pid no longer names it (a later child may get the same one)."""
        if self._children.get(pid) is child:
            del self._children[pid]

    async def _listen(self, link: _Link) -> None:
        """Read the template's replies until it dies: forked pids (with a pidfd) to their requests, exit statuses."""
        try:
            while (got := await link.read()) is not None:
                message, fds = got
                waiting = self._forks.get(int(message["id"])) if message.get("t") == "forked" else None
                if waiting is not None and not waiting[0].is_set():
                    waiting[1].extend([int(message["pid"]), fds.pop() if len(fds) == 1 else -1])
                    waiting[0].set()
                elif message.get("t") == "exited" and (child := self._children.get(int(message["pid"]))) is not None:
                    child.exited(int(message["status"]))
                for fd in fds:  # a pidfd nobody waits for any more
                    os.close(fd)
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            pass  # the template never sends these; one that does is broken, and dealt with as dead
        finally:
            await link.close()
            for waiting in self._forks.values():
                if waiting[2] is link:
                    waiting[0].set()  # no pid: the template died before it answered

    async def _stop(self) -> None:
        """Kill the spares, every run process and the template."""
        assert self._tasks is not None
        self._tasks.cancel_scope.cancel()
        self._tasks = None
        self._send.close()
        with anyio.CancelScope(shield=True):
            for child in list(self._children.values()):
                await child.kill()
            if self._link is not None:
                await self._link.close(graceful=True)
        self._receive.close()

    @property
    def pid(self) -> int | None:
        """The template's process id, while it runs."""
        return None if self._link is None or self._link.dead.is_set() else self._link.process.pid


async def _guarded(task: Callable[..., Awaitable[None]], *args: object) -> None:
    """Run a background task of the template's handle so that no failure of it ever leaves it.

    The task group these run in was entered by whoever opened the sandbox (under `codemode serve`, the server):
    an exception out of one would cancel that task and every run in flight. Each task already turns what it
    meets into results; this is the last guard, for what none of them foresaw.
    """
    with contextlib.suppress(Exception):
        await task(*args)


class _Link:
    """One start of the template: its process, the host's end of its control socket, its working directory."""

    def __init__(self, process: Process, control: socket.socket, workdir: str) -> None:
        self.process = process
        self.control = control
        self.workdir = workdir
        self.dead = anyio.Event()
        """Set once the template is gone (or being killed): no more fork is asked of it."""

    async def read(self) -> tuple[dict[str, Any], list[int]] | None:
        """The next control message from the template and the descriptors with it; None once it has closed its end."""
        while not self.dead.is_set():
            try:
                data, fds, _, _ = socket.recv_fds(self.control, _MAX_MESSAGE, 1)
            except BlockingIOError:
                await anyio.wait_readable(self.control)
                continue
            except OSError:
                return None
            except anyio.ClosedResourceError:  # closed by the host itself while it waited (`close`)
                return None
            if not data:
                for fd in fds:
                    os.close(fd)
                return None
            message = json.loads(data)
            return (message if isinstance(message, dict) else {}), fds
        return None

    async def send(self, buffers: list[bytes], fds: list[int]) -> None:
        """One control message with descriptors attached; waits while the template's queue is full."""
        while True:
            try:
                socket.send_fds(self.control, buffers, fds)
            except BlockingIOError:  # more fork requests at once than the socket queues: the template is busy
                await anyio.wait_writable(self.control)
                continue
            return

    async def close(self, *, graceful: bool = False) -> None:
        """Kill this template alone (its run processes live on); bounded and shielded, and only once.

        `graceful`: close its control socket first and give it a moment to kill and reap the run processes it
        still has, so none is left for init to reap.
        """
        if self.dead.is_set():
            return
        self.dead.set()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
            anyio.notify_closing(self.control)
            self.control.close()
            if graceful:
                with anyio.move_on_after(_GRACE):
                    await self.process.wait()
            if self.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.process.pid, signal.SIGKILL)
            await self.process.wait()
            await self.process.aclose()
        shutil.rmtree(self.workdir, ignore_errors=True)


class _TemplateDied(Exception):
    """The template died while a fork was asked of it."""
