"""The seccomp filters: a run process's allow-list of the calls its loop needs, and the template's; the rest `EPERM`.

The list covers CPython's interpreter and allocator, asyncio's epoll loop with its self-pipe, reads and writes
on descriptors the worker already holds, clocks, random bytes, its own signals and resource limits, and exit.
It has no call that names a path (`open`, `stat`, `execve`...), makes a descriptor (`socket`, `pipe`, `dup`),
a process or thread (`fork`, `clone`), or reaches another process (`kill`, `ptrace`, `process_vm_*`, a signal
armed with `fcntl`'s `F_SETOWN` and `O_ASYNC`): the calls that act on a process are allowed only on the run
process itself, and `fcntl` only to read and set a descriptor's own flags. Refusals are `EPERM` rather than a
kill, so escaped code gets a `PermissionError` and the run a clear result, and the host never waits on a dead
pipe. The template's filter (`build_template`) is that list plus forking and reaping run processes and what a run
process does before its own filter is stacked on it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from typing import Final

import seccompy

ALLOWED: Final = (
    # reads and writes on the pipes, the loop's epoll and its self-pipe socket pair
    "read readv write writev pread64 pwrite64 lseek close sendto recvfrom "
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
"""System calls allowed with any arguments; `fcntl` is allowed only for the commands in `_FCNTL`."""

_FCNTL: Final = (fcntl.F_GETFD, fcntl.F_SETFD, fcntl.F_GETFL)
"""The `fcntl` commands allowed with any argument; `F_SETFL` is allowed too, but never with `O_ASYNC`.

The rest could reach beyond the process: `F_SETOWN` and `F_SETSIG` with `O_ASYNC` make the kernel send any
signal (SIGKILL) to any process or process group of the same user when a descriptor becomes ready (only a
Landlock ABI 6 scope stops that, on Linux 6.12 and later); `F_DUPFD` makes descriptors, and leases, directory
notifications and pipe sizes are not a run's business.
"""
_LOW_WORD: Final = 0xFFFF_FFFF
"""`fcntl`'s command is a C `int`: the kernel reads the low 32 bits of the argument, so only those are compared."""

_SELF_ONLY: Final = ("kill", "tgkill", "tkill", "prlimit64")
"""Allowed only when their first argument is the worker itself (its pid, or 0 for `prlimit64`)."""


_TEMPLATE: Final = (
    # forking a run process (never a thread: `clone` with `CLONE_THREAD` is refused below), reaping it
    "wait4 waitid pidfd_open set_robust_list rseq close_range "
    # the control socket: requests with a run's pipes attached, replies
    "recvmsg sendmsg "
    # what the run process does before its own filter: its event loop, its Landlock domain, that filter
    "epoll_create1 seccomp landlock_create_ruleset landlock_restrict_self"
).split()
"""What the template's filter allows beyond `ALLOWED`; the run process's own filter allows none of it."""

_CLONE_THREAD: Final = 0x00010000
_AF_UNIX: Final = 1
_FIONBIO: Final = 0x5421
_FIOCLEX: Final = 0x5451
_PR_SET_NO_NEW_PRIVS: Final = 38


def install_filter(*, template: bool = False) -> str | None:
    """Load the run process's filter (the template's with `template`); None once it holds, else why it did not."""
    try:
        (build_template() if template else build()).load()
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
    _allow_fcntl(seccomp_filter)
    pid = os.getpid()
    for name in _SELF_ONLY:
        seccomp_filter.allow(name, args={0: 0 if name == "prlimit64" else pid})
    return seccomp_filter


def build_template() -> seccompy.Filter:
    """The template's allow-list: `ALLOWED`, forking and reaping run processes, and what they do before their own.

    Signals are allowed to any process here because a stacked filter cannot name a run process's pid in advance;
    each run process's own filter then allows them only to itself, and the template runs no model code.
    """
    refuse = int(seccompy.Action.ERRNO) | errno.EPERM
    seccomp_filter = seccompy.Filter(default=refuse, flags=seccompy.FilterFlag.TSYNC)
    for name in (*ALLOWED, *_TEMPLATE, "kill", "tgkill", "tkill"):
        with contextlib.suppress(ValueError):
            seccomp_filter.allow(name)
    _allow_fcntl(seccomp_filter)
    seccomp_filter.allow("prlimit64", args={0: 0})
    seccomp_filter.allow("clone", args=[(0, seccompy.CmpOp.MASKED_EQ, 0, _CLONE_THREAD)])
    seccomp_filter.allow("socketpair", args={0: _AF_UNIX})  # the run's event loop wakes itself through one
    for request in (_FIONBIO, _FIOCLEX):  # and sets its descriptors non-blocking and close-on-exec so
        seccomp_filter.allow("ioctl", args={1: request})
    seccomp_filter.allow("prctl", args={0: _PR_SET_NO_NEW_PRIVS})  # loading the run's filter sets it again
    seccomp_filter.allow("setpriority", args={0: os.PRIO_PROCESS, 1: 0})  # a run process lowers its own priority
    return seccomp_filter


def _allow_fcntl(seccomp_filter: seccompy.Filter) -> None:
    """Allow the `fcntl` commands a process needs on its own descriptors (`_FCNTL`, and `F_SETFL` without `O_ASYNC`)."""
    for command in _FCNTL:
        seccomp_filter.allow("fcntl", args=[(1, seccompy.CmpOp.MASKED_EQ, command, _LOW_WORD)])
    seccomp_filter.allow(
        "fcntl",
        args=[(1, seccompy.CmpOp.MASKED_EQ, fcntl.F_SETFL, _LOW_WORD), (2, seccompy.CmpOp.MASKED_EQ, 0, os.O_ASYNC)],
    )
