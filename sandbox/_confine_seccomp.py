"""The worker's seccomp filter: an allow-list of the system calls its loop needs; every other call fails `EPERM`.

The list covers CPython's interpreter and allocator, asyncio's epoll loop with its self-pipe, reads and writes
on descriptors the worker already holds, clocks, random bytes, its own signals and resource limits, and exit.
It has no call that names a path (`open`, `stat`, `execve`...), makes a descriptor (`socket`, `pipe`, `dup`),
a process or thread (`fork`, `clone`), or reaches another process (`kill`, `ptrace`, `process_vm_*`): the
calls that act on a process are allowed only on the worker itself. Refusals are `EPERM` rather than a kill,
so escaped code gets a `PermissionError` and the run a clear result, and the host never waits on a dead pipe.
"""

from __future__ import annotations

import contextlib
import errno
import os
from typing import Final

import seccompy

ALLOWED: Final = (
    # reads and writes on the pipes, the loop's epoll and its self-pipe socket pair
    "read readv write writev pread64 pwrite64 lseek close fcntl sendto recvfrom "
    "epoll_wait epoll_pwait epoll_pwait2 epoll_ctl poll ppoll select pselect6 "
    # memory
    "brk mmap munmap mremap mprotect madvise "
    # futexes (the GIL, locks), clocks and sleeps, random bytes
    "futex sched_yield clock_gettime clock_getres gettimeofday time nanosleep clock_nanosleep getrandom "
    # signals delivered to itself, and who it is
    "rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending sigaltstack restart_syscall "
    "getpid gettid getppid getuid geteuid getgid getegid getresuid getresgid getgroups "
    # its own usage and limits (`setrlimit` can only lower a hard limit, and the worker's are set before)
    "getrusage times getrlimit setrlimit "
    # leaving
    "exit exit_group"
).split()
"""System calls allowed with any arguments."""

_SELF_ONLY: Final = ("kill", "tgkill", "tkill", "prlimit64")
"""Allowed only when their first argument is the worker itself (its pid, or 0 for `prlimit64`)."""


def install_filter() -> str | None:
    """Load the filter on this process; None once it holds, else why it could not be loaded."""
    try:
        build().load()
    except (seccompy.SeccompError, OSError) as error:  # an architecture it has no table for, a refused load
        return f"loading the seccomp filter failed: {error}"
    return None


def build() -> seccompy.Filter:
    """The allow-list as a filter for this process, not loaded yet."""
    refuse = int(seccompy.Action.ERRNO) | errno.EPERM
    seccomp_filter = seccompy.Filter(default=refuse, flags=seccompy.FilterFlag.TSYNC)
    for name in ALLOWED:
        with contextlib.suppress(ValueError):  # a call this architecture does not have (aarch64: `poll`, `time`)
            seccomp_filter.allow(name)
    pid = os.getpid()
    for name in _SELF_ONLY:
        seccomp_filter.allow(name, args={0: 0 if name == "prlimit64" else pid})
    return seccomp_filter
