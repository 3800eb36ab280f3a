"""A run process's side of its pipes: `Worker` serves one run, then the process ends.

The template (`sandbox._worker.template`) forks a process per run; that process puts up its own layers, starts an
event loop, seals itself with the full seccomp filter, says `ready` and waits for its `run` frame. It runs that one
piece of code, sending host calls over its pipes, writes `done` and exits. Each call carries the id of its run;
code left running after the run ended (a task that ignored cancellation) cannot call the host any more.
`python -m sandbox._worker.main` starts a template whose processes run this `Worker`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import math
import os
import resource
import time
from typing import TYPE_CHECKING, Any

from sandbox._runtime.runner import run_code
from sandbox._shared.frames import HEADER, MAX_FRAME, FrameTooLargeError, ProtocolError, decode, encode, frame_size
from sandbox._shared.hostcall import HostFailure
from sandbox._shared.repeat import Repeat
from sandbox._worker.confine.apply import seal_child
from sandbox.limits import Limits
from sandbox.result import RunError, RunResult

if TYPE_CHECKING:
    from sandbox._shared.confinement import Layer
    from sandbox._shared.hostcall import Bridge, Call
    from sandbox.jsonvalue import JsonValue


CPU_CEILING = 3600
"""CPU seconds any run process may use in its life (its hard `RLIMIT_CPU`, from its fork); the template has none."""


class _Memory:
    """A run process's limits: a hard address space fixed at its fork, and its run's own when the run arrives."""

    def __init__(self, base: int, ceiling: int = 0) -> None:
        self.base = base
        """Bytes the template had mapped when it forked this process (0: unknown); the run may add its memory."""
        self.ceiling = ceiling
        """The most bytes any run of this process may add (0: no limit), fixed as its hard limit at the fork."""

    def limit_fork(self) -> None:
        """Fix the hard address space right after the fork: nothing this process runs can raise it."""
        if self.base and self.ceiling > 0:
            limit = self.base + self.ceiling
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    def limit_run(self, memory: int, timeout: float) -> None:
        """Set the run's address space (what the template had mapped, plus `memory`) and CPU time (its timeout).

        Both limits are hard: code that got past the policy can neither raise them nor ignore `SIGXCPU` for long,
        since the hard CPU limit a second later is `SIGKILL`.
        """
        if self.base and memory > 0:
            limit = self.base + (memory if self.ceiling <= 0 else min(memory, self.ceiling))
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        spent = time.process_time()  # the CPU time `RLIMIT_CPU` counts (user and system), without a `getrusage`
        seconds = min(math.ceil(spent + timeout + 1), CPU_CEILING) if math.isfinite(timeout) else CPU_CEILING
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, min(seconds + 1, CPU_CEILING)))


class Worker:
    """The worker's side of the pipe: reads frames, runs code, answers host calls."""

    def __init__(self, inbound: int, outbound: int, *, memory: _Memory, missing: dict[Layer, str]) -> None:
        self.inbound = inbound
        self.outbound = outbound
        self.memory = memory
        self.missing = missing
        """The confinement layers this worker could not put up, with the reason."""
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        self.run_task: asyncio.Task[None] | None = None
        self.current_run: object = None
        """The id of the run in progress; None between runs."""
        self.outbox: list[bytes] = []
        """Call frames not written yet: calls issued in one turn of the loop go out in one write."""
        self.buffer = bytearray()
        """Bytes read from the host that do not make a whole frame yet."""
        self.finished: asyncio.Future[None] | None = None
        """Done when the host closes the pipe or says `exit`; failed when it sends a malformed frame."""

    def send(self, message: dict[str, Any]) -> None:
        """Write one frame (blocking: the host reads all the time a run lasts, and nothing is sent between runs)."""
        self.write(encode(message))

    def write(self, frame: bytes) -> None:
        """Write one encoded frame."""
        data = memoryview(frame)
        while data:
            written = os.write(self.outbound, data)
            data = data[written:]

    def bridge_for(self, run_id: object) -> Bridge:
        """The bridge of one run: its calls carry the run's id and are refused once the run is over."""
        return functools.partial(self.call, run_id)

    async def call(self, run_id: object, call: Call) -> JsonValue:
        """A host call over the pipe, on behalf of run `run_id`."""
        if run_id is None or run_id != self.current_run:
            raise HostFailure("RuntimeError", _RUN_OVER)
        call_id = next(self.ids)
        message = {
            "t": "call",
            "run": run_id,
            "id": call_id,
            "fn": call.function,
            "attr": call.attribute,
            "args": call.args,
            "kwargs": call.kwargs,
        }
        try:
            frame = encode(message)
        except FrameTooLargeError as error:
            raise HostFailure(
                "ValueError",
                f"the arguments of `{call.label}(...)` are {error.size:,} bytes as JSON; one call can send at most "
                f"{MAX_FRAME:,}. Send less per call",
            ) from None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[call_id] = future
        try:
            if len(self.pending) == 1 and not self.outbox:  # the only call: no other to join it in one write
                self.write(frame)
            else:
                self.post(frame)
            del frame
            reply = await future
        finally:
            self.pending.pop(call_id, None)
        if reply.get("ok"):
            return reply.get("value")  # type: ignore[no-any-return]
        raise HostFailure(str(reply.get("type") or "Error"), str(reply.get("message") or ""))

    def post(self, frame: bytes) -> None:
        """Queue a call frame; the loop writes the queue once this turn's other calls are in it too."""
        if not self.outbox:
            asyncio.get_running_loop().call_soon(self.flush)
        self.outbox.append(frame)
        if len(frame) > _BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the queued call frames in one go."""
        if self.outbox:
            frames, self.outbox = self.outbox, []
            self.write(frames[0] if len(frames) == 1 else b"".join(frames))

    def readable(self) -> None:
        """Read what the host sent and handle each whole frame (the loop calls this when the pipe is readable)."""
        try:
            data: bytes | bytearray = os.read(self.inbound, _READ_SIZE)
        except BlockingIOError:
            return
        finished = self.finished
        if finished is None or finished.done():
            return
        if not data:
            finished.set_result(None)
            return
        if self.buffer:
            self.buffer += data
            data, self.buffer = self.buffer, bytearray()
        start, size = 0, len(data)
        try:
            while size - start >= HEADER.size:  # most reads hold one whole frame: it is decoded from them as they are
                end = start + HEADER.size + frame_size(data, start)
                if end > size:
                    break
                message = decode(data[start + HEADER.size : end])
                start = end
                self.handle(message)
                if finished.done():
                    return
        except ProtocolError as error:
            finished.set_exception(error)
            return
        if start < size:
            self.buffer = bytearray(data[start:])

    def handle(self, message: dict[str, Any]) -> None:
        """One frame from the host."""
        kind = message["t"]
        if kind == "result":
            future = self.pending.get(int(message["id"]))
            if future is not None and not future.done():
                future.set_result(message)
        elif kind == "run":
            if self.run_task is None:  # a process serves one run; a second `run` frame is ignored
                self.run_task = asyncio.create_task(self.run(message))
        elif kind == "exit":
            assert self.finished is not None
            self.finished.set_result(None)
        else:
            self.other(message)

    async def run(self, message: dict[str, Any]) -> None:
        """Run one piece of code and send its result."""
        run_id = message.get("run")
        self.current_run = run_id
        try:
            limits = Limits.from_json(message["limits"])
            self.memory.limit_run(limits.memory, limits.timeout)
            result = await run_code(
                message["code"],
                limits=limits,
                bridge=self.bridge_for(run_id),
                functions=message["functions"],
                error_names=message.get("error_names") or (),
                variables=message.get("variables"),
                repeat=Repeat(**message["repeat"]) if message.get("repeat") else None,
            )
        except BaseException as error:  # noqa: BLE001  # whatever happens, the host gets a result
            result = RunResult(error=RunError(kind="crashed", message=f"the worker failed: {type(error).__name__}"))
        finally:
            self.end_run()
        self.write(_done_frame(run_id, result))
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(None)  # the run is this process's only one: it ends with it

    def end_run(self) -> None:
        """The run is over: calls still waiting for the host fail, and no new call is sent."""
        self.current_run = None
        self.outbox.clear()  # calls not sent yet are failed below, never sent after the run's `done`
        for future in self.pending.values():
            if not future.done():
                future.set_exception(HostFailure("RuntimeError", _RUN_OVER))
        self.pending.clear()

    async def serve(self) -> None:
        """Read frames until the host closes the pipe."""
        loop = asyncio.get_running_loop()
        os.set_blocking(self.inbound, False)
        self.finished = loop.create_future()
        seal_child(self.missing)  # last: from here on the process can make no descriptor, process or connection
        await _prewarm()
        loop.add_reader(self.inbound, self.readable)
        self.send({"t": "ready", "pid": os.getpid(), "missing": self.missing})
        try:
            await self.finished
        finally:
            loop.remove_reader(self.inbound)

    def other(self, message: dict[str, Any]) -> None:
        """A frame this worker does not serve: ignored (the probe's worker serves one more)."""


_READ_SIZE = 1 << 16
_BATCH_BYTES = 1 << 16
"""A call frame this large is written at once rather than joined with others (no second copy of a big one)."""
_RUN_OVER = "the run that made this call is over; code left running after a run ends cannot call the host"


async def _prewarm() -> None:
    """One trivial run before `ready`: the pages a run writes are copied from the template's now, not in the run."""
    await run_code(_PREWARM, limits=Limits(), bridge=_no_host, functions={"f": None})


async def _no_host(call: Call) -> JsonValue:
    raise HostFailure("RuntimeError", "no host functions before the run")


_PREWARM = "try:\n    await f(x=1)\nexcept Exception:\n    pass\nreturn 1"
"""A trivial run with one host call (refused): the paths nearly every run takes."""


def _done_frame(run_id: object, result: RunResult) -> bytes:
    """The `done` frame for a result; if the result cannot be sent whole, a short one that says why."""
    try:
        return encode({"t": "done", "run": run_id, "result": result.to_json()})
    except FrameTooLargeError as error:
        failure = RunError(
            kind="result_limit",
            message=f"the run's value, printed output and error text are {error.size:,} bytes as JSON; at most "
            f"{MAX_FRAME:,} can be sent back. Return and print less",
        )
    except MemoryError:
        failure = RunError(kind="memory", message="the run's result was too large to send back; return and print less")
    short = RunResult(error=failure, calls=result.calls, duration=result.duration)
    return encode({"t": "done", "run": run_id, "result": short.to_json()})


def main(worker: type[Worker] | None = None) -> None:
    """Entry point of the template process: `python -m sandbox._worker.main [CONFINEMENT]`.

    `worker` is what each run process runs (a subclass serves more frames: the probe's, a test's hostile one).
    """
    from sandbox._worker.template import main as template_main  # the template imports this module

    template_main(worker or Worker)


if __name__ == "__main__":
    main()
