"""The template process: warm and confined, it forks one process per run and never runs model code itself.

Started by the host as `python -s -m sandbox._worker.main CONFINEMENT MEMORY` with a Unix `SOCK_SEQPACKET` socket as its
stdin (the control channel), it asks the kernel what confinement it offers, lowers its resource limits, warms up
(`sandbox._worker.confine.warm`), puts up every layer that survives a fork and still lets it fork (`enclose`, then its
own seccomp filter: no thread, no path, no network), freezes its objects out of the garbage collector (so a run
process's collections do not copy the template's pages), says `ready` and then serves one request: `fork`, which arrives
with the run's two pipe ends attached (`SCM_RIGHTS`). It forks while it has one thread only; the child closes the
control socket and every other descriptor but its pipes at once, adds its own layers
(`sandbox._worker.confine.apply.enclose_child`), and serves its run (`sandbox._worker.main.Worker`). The template
watches each child through a pidfd, reaps it when it exits and tells the host its status; when the host closes the
control socket it kills and reaps the children left, then exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import resource
import select
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING, Any, NoReturn

from sandbox._shared.confinement import Confinement
from sandbox._worker.confine.apply import enclose, enclose_child, probe_kernel, seal_template
from sandbox._worker.confine.warm import warm_up
from sandbox._worker.main import CPU_CEILING, Worker, _Memory

if TYPE_CHECKING:
    from sandbox._shared.confinement import Layer

MAX_REQUEST = 4096
"""Bytes of one control message, either way."""
NICER = 10
"""How much lower a run process's priority is than the template's (the host's): `nice` 10 above it, at most 19."""


def _detach_stdio() -> int:
    """Move the control socket off stdin; stdin, stdout and stderr then point at /dev/null."""
    control = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    return control


def _limit_resources() -> None:
    """The limits every run process inherits; its own (CPU, memory, no process) it sets after the fork.

    The template itself has no CPU limit: it counts its whole life (a fork and a reap cost it about 2 ms per run),
    so any ceiling would kill it after so many runs, and it runs no model code.
    """
    for which in (resource.RLIMIT_CORE, resource.RLIMIT_FSIZE):
        with contextlib.suppress(ValueError, OSError):  # a limit the platform does not allow lowering
            resource.setrlimit(which, (0, 0))


def _limit_cpu(niceness: int) -> None:
    """A run process's CPU, right after its fork: its ceiling and a lower priority than the host's (`niceness`).

    Its CPU time starts at zero at the fork, and its run lowers the ceiling further; the priority keeps busy runs
    from starving the host.
    """
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_CEILING, CPU_CEILING))
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, niceness)


def _limit_memory(statm: int | None, memory: int) -> None:
    """The template's own address space: what it has mapped plus a run's `memory`, as a soft limit only.

    The hard limit stays open so the template can fork a process for a run that may use more; each run process
    fixes its own hard limit right after its fork.
    """
    base = _mapped(statm)
    if base and memory > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (base + memory, resource.RLIM_INFINITY))


def _mapped(statm: int | None) -> int:
    """Bytes this process has mapped now, read from its `statm` (0: unknown)."""
    if statm is None:
        return 0
    try:
        return int(os.pread(statm, 256, 0).split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Template:
    """The template's loop: fork requests on the control socket, exits of its children through their pidfds."""

    def __init__(
        self,
        control: socket.socket,
        statm: int | None,
        worker: type[Worker],
        missing: dict[Layer, str],
        niceness: int = NICER,
    ) -> None:
        self.control = control
        self.statm = statm
        """`/proc/self/statm`, opened before confinement: what the template has mapped, read before each fork."""
        self.worker = worker
        self.missing = missing
        self.niceness = niceness
        """The scheduling priority of every run process: `NICER` below the template's own."""
        self.poller = select.poll()
        self.children: dict[int, int] = {}
        """Each live child's pidfd and its pid."""

    def send(self, message: dict[str, Any]) -> None:
        """One control message to the host (blocking: the host reads its control socket all the time)."""
        self.control.send(json.dumps(message).encode())

    def serve(self) -> None:
        """Say `ready`, then serve requests until the host closes the control socket."""
        self.poller.register(self.control.fileno(), select.POLLIN)
        self.send({"t": "ready", "pid": os.getpid(), "missing": self.missing})
        while True:
            for fd, _ in self.poller.poll():
                if fd != self.control.fileno():
                    self.reap(fd)
                elif not self.request():
                    self.end_children()
                    return

    def end_children(self) -> None:
        """The host is gone or done: kill every child left and reap it, so none outlives the template unreaped."""
        for pidfd, pid in list(self.children.items()):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
            os.close(pidfd)
        self.children.clear()

    def request(self) -> bool:
        """Serve one control message; False once the host has closed the socket."""
        data, fds, _, _ = socket.recv_fds(self.control, MAX_REQUEST, 2)
        if not data:
            return False
        message = json.loads(data)
        if message.get("t") == "fork" and len(fds) == 2:
            memory = message.get("memory")
            try:
                pid, pidfd = self.fork(fds[0], fds[1], memory if type(memory) is int else 0)
            except OSError:  # no more processes: the host hears it as pid 0 and tells the run why
                self.send({"t": "forked", "id": message.get("id"), "pid": 0})
            else:  # the pidfd goes with the pid: the host signals the child through it, never by its pid
                socket.send_fds(
                    self.control, [json.dumps({"t": "forked", "id": message.get("id"), "pid": pid}).encode()], [pidfd]
                )
        for fd in fds:
            os.close(fd)
        return True

    def fork(self, inbound: int, outbound: int, memory: int) -> tuple[int, int]:
        """Fork a run process of `memory` bytes on these pipe ends; its pid and pidfd (the child never returns)."""
        base = _mapped(self.statm)
        if threading.active_count() != 1:  # a fork with threads copies locks held by threads that do not follow
            raise RuntimeError("the template has more than one thread; it forks only with one")
        pid = os.fork()
        if pid == 0:
            self.child(inbound, outbound, _Memory(base, memory))
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = pid
        self.poller.register(pidfd, select.POLLIN)
        return pid, pidfd

    def reap(self, pidfd: int) -> None:
        """A child exited: reap it and tell the host its status."""
        pid = self.children.pop(pidfd)
        self.poller.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        self.send({"t": "exited", "pid": pid, "status": os.waitstatus_to_exitcode(status)})

    def child(self, inbound: int, outbound: int, memory: _Memory) -> NoReturn:
        """The run process, right after the fork: its own layers, then its one run; it never returns."""
        status = 1
        try:
            _limit_cpu(self.niceness)
            memory.limit_fork()
            self.control.detach()  # closed with every other descriptor but the pipes, before anything else
            missing = dict(self.missing)
            enclose_child((inbound, outbound), missing)
            worker = self.worker(inbound, outbound, memory=memory, missing=missing)
            asyncio.run(worker.serve())
            status = 0
        finally:
            os._exit(status)


def main(worker: type[Worker]) -> None:
    """Start the template: limits, warm-up, confinement, then its loop until the host closes the control socket."""
    os.environ.pop("PYTHONPATH", None)  # read at start-up already; where the host's install lives is not the code's
    control = socket.socket(fileno=_detach_stdio())
    probe_kernel()  # before the limits: finding libc starts `ldconfig` and may write a file, which they forbid
    confinement = Confinement.from_arg(sys.argv[1]) if len(sys.argv) > 1 else Confinement()
    _limit_resources()
    warm_up()
    statm = os.open("/proc/self/statm", os.O_RDONLY) if os.path.exists("/proc/self/statm") else None
    _limit_memory(statm, int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    niceness = min(os.getpriority(os.PRIO_PROCESS, 0) + NICER, 19)  # asked before the seal, which refuses it
    keep = (control.fileno(),) if statm is None else (control.fileno(), statm)
    missing = enclose(confinement, keep=keep)
    seal_template(missing)
    gc.freeze()
    try:
        Template(control, statm, worker, missing, niceness).serve()
    finally:
        with contextlib.suppress(OSError):  # the host normally removes it; not if the host itself was killed
            os.rmdir(os.getcwd())
