"""The host's handle on one run's process: its `ready` read, its run sent and served, its end.

The template (`sandbox._host.template`) forks the process; the host holds its pipes and a pidfd, so killing it can
never reach a process that reused its pid. A run that overstays its wall clock, or a process that dies or breaks
the protocol, is killed and reported as a result, and ends nothing but its run. The frames on its pipes are
`sandbox._host.pipe`'s; what is said on them during the run (the calls answered, a call tagged with another run's id
refused) is `sandbox._host.conversation`'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
from typing import TYPE_CHECKING, Any

import anyio

from sandbox._host.conversation import Conversation
from sandbox._host.distrust import KILL_GRACE, Admission, HeldBytes, checked_result
from sandbox._host.pipe import FramePipe
from sandbox._shared.confinement import Layers
from sandbox._shared.frames import MAX_FRAME, FrameTooLargeError, ProtocolError, encode_with_text
from sandbox.errors import SandboxError
from sandbox.limits import timeout_message
from sandbox.result import RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._host.dispatch import Dispatcher
    from sandbox._shared.confinement import Confinement
    from sandbox._shared.repeat import Repeat
    from sandbox.jsonvalue import JsonValue
    from sandbox.limits import Limits

_START_TIMEOUT = 30.0


class RunProcess:
    """One run's process, forked by the template, and the host's ends of its two pipes (non-blocking)."""

    def __init__(self, pid: int, pidfd: int | None, *, to_child: int, from_child: int) -> None:
        for fd in (to_child, from_child):
            os.set_blocking(fd, False)
        self.pid = pid
        self.pidfd = pidfd
        """The process, held so a signal never reaches another one that got its pid (None: it was gone already)."""
        self.layers = Layers.none("the run process has not started")
        """The confinement the process reported when it became ready."""
        self.pipe = FramePipe(to_worker=to_child, from_worker=from_child)
        self.returncode: int | None = None
        """Its exit status, once the template has reaped it (negative: the signal that ended it)."""
        self._exited = anyio.Event()
        self.on_close: Callable[[int], object] | None = None
        """Called with the pid when the host is done with the process (the template's handle forgets it)."""

    def alive(self) -> bool:
        """Whether the process is still there (its pidfd is readable once it has exited)."""
        if self.pidfd is None:
            return False
        return not select.select([self.pidfd], [], [], 0)[0]

    def exited(self, status: int) -> None:
        """The template reaped the process: its exit status."""
        self.returncode = status
        self._exited.set()

    async def handshake(self, confinement: Confinement) -> None:
        """Wait for `ready` and read the layers in it; `SandboxError` if the process never gets there."""
        try:
            with anyio.fail_after(_START_TIMEOUT):
                message = await self.receive()
        except TimeoutError:
            raise SandboxError(f"a sandbox run process was not ready within {_START_TIMEOUT:g} s") from None
        except _BREAKAGE as error:
            await self.wait_exit()
            raise SandboxError(
                f"a sandbox run process exited before it was ready (exit status {self.returncode}, "
                f"{type(error).__name__}); is `Limits.memory` too small for Python itself?"
            ) from None
        if message["t"] != "ready":
            raise SandboxError(f"a sandbox run process sent {message['t']!r} instead of `ready`")
        self.layers = Layers.from_json(message.get("missing"))
        if confinement.require:
            self.layers.require()

    async def receive(self) -> dict[str, Any]:
        """The next frame from the process."""
        return await self.pipe.receive()

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the process."""
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
        held: HeldBytes | None = None,
    ) -> RunResult:
        """Run code in this process, serving its host calls; a breach kills it and is a result.

        Anything that goes wrong with the process (it dies, its pipe breaks, it sends a malformed frame) kills it
        and is a `crashed` result. Cancellation of the caller propagates; the caller kills the process. `held`
        is the sandbox's budget of call bytes held for all its runs, which this run's calls count against too.
        """
        run_id = 1
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
                json.dumps(limits.to_json(), separators=(",", ":"), ensure_ascii=False),
            )
        except FrameTooLargeError as error:
            return RunResult(
                error=RunError(
                    kind="forbidden",
                    message=f"the code and its settings are {error.size:,} bytes as JSON; the limit is "
                    f"{MAX_FRAME:,}. Send less code per run.",
                )
            )
        admission = Admission(limits, held)
        conversation = Conversation(self.pipe, dispatcher, run_id=run_id, admission=admission)
        try:
            await self.pipe.send_frame(frame)
            result = await conversation.serve(within=limits.timeout + KILL_GRACE)
        except BaseException as error:
            if _is_breakage(error):
                return await self._crashed(dispatcher, _protocol_violation(error))
            # The caller's cancellation, KeyboardInterrupt: it propagates, without any breakage that came with it
            # (cancel scopes only absorb groups of cancellations); the caller kills the process.
            if isinstance(error, BaseExceptionGroup):
                _, rest = error.split(Exception)
                if rest is not None and rest is not error:
                    raise rest from None
            raise
        finally:
            admission.close()  # what its calls still hold goes back to the sandbox's budget, however the run ended
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
            result, _ = checked_result(
                result, limits=limits, keeps=variables is not None, reserved=(*dispatcher.functions, *error_names)
            )
        except Exception as error:  # noqa: BLE001  # a result the checks trip on is the worker's fault, and a result
            return await self._crashed(dispatcher, f"{type(error).__name__} while the host checked its result")
        return result

    async def _crashed(self, dispatcher: Dispatcher, violation: str | None = None) -> RunResult:
        if violation is None:
            await self.wait_exit()  # it died by itself: how, the template says once it has reaped it
        await self.kill()
        if violation is not None:
            message = f"the run's process broke the protocol ({violation}); it was stopped with its code"
        elif self.returncode == -signal.SIGSEGV:
            message = (
                "the run's process crashed (a C stack overflow: something nested too deeply, like a chain of "
                "thousands of map() or generator objects, or memory ran out); the code was stopped. Nest less"
            )
        else:
            hint = " (it ran out of memory?)" if self.returncode in (-signal.SIGKILL, 1) else ""
            message = f"the run's process died{hint}; the code was stopped. Use less memory per run"
        return RunResult(error=RunError(kind="crashed", message=message), **_calls_made(dispatcher))

    async def wait_exit(self) -> None:
        """Wait (briefly) for the template's word on how the process ended."""
        with anyio.move_on_after(KILL_GRACE):
            await self._exited.wait()

    async def kill(self) -> None:
        """Stop the process now (the host is done with it); bounded and shielded, so cleanup always finishes."""
        pidfd, self.pidfd = self.pidfd, None
        if pidfd is not None:
            with contextlib.suppress(OSError):  # gone already
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)
        self.pipe.close()
        if self.on_close is not None:
            self.on_close(self.pid)
            self.on_close = None


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
