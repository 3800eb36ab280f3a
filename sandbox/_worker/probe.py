"""The template behind `python -m sandbox.probe`: a run process made as a run's is, that also runs plain Python.

Its template starts exactly as a sandbox's does (same limits, warm-up and layers), and each process it forks is
confined as a run's is. Its `run` frame may carry a `probe` instead of code: the run's own limits (memory, CPU) are
set exactly as for code, then the file's source runs unrestricted in the run's task with `sys.argv` set, its
printed output streamed back as `out` frames and its exit status as `exited`. Only `sandbox.probe` starts this
module; a sandbox's run processes have no such frame.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import sys
import traceback
from typing import Any

from sandbox._worker.main import Worker, main
from sandbox.limits import Limits


class _Stream(io.TextIOBase):
    """A text stream whose writes go to the host as `out` frames, as they happen."""

    def __init__(self, worker: Worker, fd: int) -> None:
        self.worker = worker
        self.fd = fd

    def write(self, text: str) -> int:
        if text:
            self.worker.send({"t": "out", "fd": self.fd, "text": text})
        return len(text)


class ProbeWorker(Worker):
    """A confined worker that runs the probe's file as plain Python."""

    async def run(self, message: dict[str, Any]) -> None:
        """Run a `run` frame's probe file, under the run's limits, and report its exit status (else code, as ever)."""
        probe = message.get("probe")
        if not isinstance(probe, dict):
            await super().run(message)
            return
        self.current_run = message.get("run")
        limits = Limits.from_json(message["limits"])
        self.memory.limit_run(limits.memory, limits.timeout)
        status = self.probe(str(probe["file"]), str(probe["source"]), probe)
        self.end_run()
        self.send({"t": "exited", "status": status})
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(None)  # like a run, the probe is this process's only one

    def probe(self, path: str, source: str, message: dict[str, Any]) -> int:
        """Run `source` as `__main__`; its exit status (1 for an uncaught exception, printed with its traceback)."""
        sys.argv = [path, *map(str, message.get("args") or [])]
        os.environ["SANDBOX_PROBE_SIBLING"] = str(message.get("sibling", ""))
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
        stdout, stderr = _Stream(self, 1), _Stream(self, 2)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                exec(compile(source, path, "exec"), namespace)  # noqa: S102  # the point: unrestricted code
            except SystemExit as exit:
                return _status(exit.code, stderr)
            except BaseException:  # noqa: BLE001  # reported like the interpreter does, with status 1
                traceback.print_exc(file=stderr)
                return 1
        return 0


def _status(code: object, stderr: _Stream) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


if __name__ == "__main__":
    main(ProbeWorker)
