"""The sandbox's side of confinement: the template puts up each layer on itself once, each run process its own.

`probe_kernel` runs first of all in the template, before it lowers its resource limits (both libraries find libc
with `ctypes.util.find_library`, which starts `ldconfig` and may write a temporary file: a process that may start
no process and write no file could not). The template runs `enclose` (the fds, `no_new_privs`, namespaces, the
uid, Landlock) and `seal_template` (its seccomp filter, which still lets it fork). Each run process, right after
its fork, runs `enclose_child` (only its pipes, no process, a Landlock domain of its own) and, inside its event
loop once the loop's own descriptors are open, `seal_child` (the full seccomp filter). A layer the platform lacks
is reported with the reason, never fatal. Nothing here is undone; a confined process stays confined until it
exits. Only the template and run processes import this module.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import resource
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import landlockpy
import seccompy

from sandbox._shared.confinement import LAYERS
from sandbox._worker.confine.seccomp import install_filter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from sandbox._shared.confinement import Confinement, Layer

_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000

NOT_ROOT: Final = "the host is not root, so the worker runs as the host's own user and groups"
"""Why a worker started unprivileged has no `uid` layer: only root can become another user."""


@dataclass(frozen=True)
class Kernel:
    """What the kernel offers the worker's confinement, asked once per process (`probe_kernel`)."""

    landlock: int
    """The Landlock ABI version (0 when there is none)."""
    missing: dict[Layer, str]
    """`landlock` and `seccomp` where the kernel lacks them or could not be asked, with the reason."""


@functools.cache
def probe_kernel() -> Kernel:
    """Ask the kernel for Landlock and seccomp, loading both libraries' libc handle; the worker's first step.

    Called again later it gives the first answer, made while a process could still be started and a file written.
    """
    if not sys.platform.startswith("linux"):
        return Kernel(0, {})
    missing: dict[Layer, str] = {}
    abi = 0
    try:
        abi = landlockpy.abi_version()
    except landlockpy.UnsupportedError:
        missing["landlock"] = "the kernel has no Landlock (too old, or not enabled at boot)"
    except OSError as error:  # not the kernel's answer: the question could not be asked
        missing["landlock"] = f"the kernel could not be asked for Landlock: {type(error).__name__}: {error}"
    try:
        if not seccompy.supported():
            missing["seccomp"] = "the kernel has no seccomp filters"
    except OSError as error:
        missing["seccomp"] = f"the kernel could not be asked for seccomp: {type(error).__name__}: {error}"
    return Kernel(abi, missing)


def enclose(config: Confinement, keep: Iterable[int]) -> dict[Layer, str]:
    """Every layer but seccomp, in order; the layers that could not be put up (seccomp too), with the reason."""
    if not sys.platform.startswith("linux"):
        return dict.fromkeys(LAYERS, f"not Linux ({sys.platform})")
    kernel = probe_kernel()  # the answer `main` got before it lowered the worker's limits
    missing: dict[Layer, str] = {}
    steps: tuple[tuple[Layer, Callable[[], str | None]], ...] = (
        ("fds", lambda: _close_fds(keep)),
        ("no_new_privs", _no_new_privs),
        ("namespaces", _namespaces),
        ("uid", lambda: _drop_root(config)),
        ("landlock", lambda: kernel.missing.get("landlock") or _landlock(kernel.landlock)),
    )
    for layer, step in steps:
        try:
            why = step()
        except OSError as error:  # a refusal no step foresaw: that layer is missing, the others still go up
            why = f"{type(error).__name__}: {error}"
        if why is not None:
            missing[layer] = why
    if "seccomp" in kernel.missing:
        missing["seccomp"] = kernel.missing["seccomp"]
    return missing


def seal_template(missing: dict[Layer, str]) -> None:
    """The template's seccomp filter, last: today's list plus what forking a run process needs (no thread)."""
    if "seccomp" not in missing:
        why = install_filter(template=True)
        if why is not None:
            missing["seccomp"] = why


def enclose_child(keep: Iterable[int], missing: dict[Layer, str]) -> None:
    """What a run process adds right after the fork: only its pipes open, no process, a Landlock domain of its own.

    The nested Landlock domain scopes signals and abstract sockets to the process itself, so on a kernel with
    scoping (ABI 6) not even the template or a sibling run is in reach, whatever seccomp allows.
    """
    if not sys.platform.startswith("linux"):
        return
    _close_fds(keep)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (ValueError, OSError) as error:
        missing.setdefault("uid", f"RLIMIT_NPROC could not be set: {error}")
    abi = probe_kernel().landlock
    if "landlock" not in missing and abi >= 6:  # below 6 there is no scope, and the template's domain holds it all
        try:
            _restrict(abi)
        except OSError as error:
            missing["landlock"] = f"the run's own Landlock domain failed: {error}"


def seal_child(missing: dict[Layer, str]) -> None:
    """The run process's seccomp filter, last: no fork, exec, path, socket or other process; added to the template's."""
    if "seccomp" not in missing:
        why = install_filter(template=False)
        if why is not None:
            missing["seccomp"] = why


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _failed(call: str) -> str:
    code = ctypes.get_errno()
    return f"{call} failed: {errno.errorcode.get(code, code)} ({os.strerror(code)})"


def _close_fds(keep: Iterable[int]) -> str | None:
    # stdin, stdout and stderr stay open on /dev/null, so nothing made later can take their numbers
    kept = sorted({0, 1, 2, *keep})
    for low, high in zip(kept, [*kept[1:], os.sysconf("SC_OPEN_MAX")], strict=True):
        os.closerange(low + 1, high)
    return None


def _no_new_privs() -> str | None:
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return _failed("prctl(PR_SET_NO_NEW_PRIVS)")
    return None


def _namespaces() -> str | None:
    flags = _CLONE_NEWNET | _CLONE_NEWIPC
    if os.geteuid() != 0:
        flags |= _CLONE_NEWUSER  # an unprivileged process may make a user namespace, and in it the others
    if _libc().unshare(flags) != 0:
        return _failed("unshare(CLONE_NEWNET | CLONE_NEWIPC)")
    return None


def _drop_root(config: Confinement) -> str | None:
    if os.geteuid() != 0:
        return NOT_ROOT
    try:
        os.setgroups([])
        os.setresgid(config.gid, config.gid, config.gid)
        os.setresuid(config.uid, config.uid, config.uid)
    except OSError as error:
        return f"dropping root to uid {config.uid} failed: {error.strerror}"
    return None


def _landlock(abi: int) -> str | None:
    if abi < 1:
        return "the kernel has no Landlock (too old, or not enabled at boot)"
    if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
        return "the worker has more than one thread, and Landlock only confines the calling one"
    _restrict(abi)
    return None


def _restrict(abi: int) -> None:
    """A Landlock domain that handles every right of `abi` and grants none back, on this (single-threaded) process."""
    ruleset = landlockpy.Ruleset(  # handles every right of this ABI and grants none back
        handled_fs=landlockpy.fs_for_abi(abi),
        handled_net=landlockpy.net_for_abi(abi),
        scoped=landlockpy.scope_for_abi(abi),
    )
    with ruleset:
        ruleset.restrict()
