"""`python -m sandbox.probe FILE [ARG ...]`: run FILE as plain Python in a worker confined like the pool's.

This is how to see what OS-level confinement refuses without needing a real escape from the language policy:
FILE runs with no policy at all (any import, `open`, `socket`, `os.fork`, `ctypes`), in a worker process that
started, warmed up and confined itself exactly as a `Sandbox`'s workers do. What FILE prints is relayed to
stdout and stderr as it happens, and the probe exits with FILE's status. The layers the worker runs under are
printed to stderr first. A worker that dies is reported on stderr, with status 128 + its signal.

It is an entry point of its own, started from a shell or a test: model code in a sandbox cannot reach it.

Example:
    ```
    $ python -m sandbox.probe attack.py /etc/passwd
    sandbox.probe: OS-level confinement: fds, no_new_privs, namespaces, uid, landlock, seccomp
    PermissionError: [Errno 1] Operation not permitted: '/etc/passwd'
    ```
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from sandbox._confine import Confinement
from sandbox._process import WorkerProcess
from sandbox._protocol import ProtocolError
from sandbox.errors import SandboxError
from sandbox.limits import Limits

_DIED = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, ProtocolError, OSError)


PROBE_WORKER = ("-m", "sandbox._confine_probe")
"""How the interpreter is told to run the probe's worker."""


async def probe(
    path: str, source: str, args: list[str], confinement: Confinement, entry: tuple[str, ...] = PROBE_WORKER
) -> int:
    """Run `source`, read from `path`, in a confined worker; its exit status."""
    worker = await WorkerProcess.start(Limits().memory, confinement, entry=entry)
    print(f"sandbox.probe: {worker.layers}", file=sys.stderr, flush=True)
    try:
        await worker.send({"t": "probe", "file": path, "source": source, "args": args})
        while True:
            try:
                message = await worker.receive()
            except _DIED:
                return await _died(worker)
            if message["t"] == "exited":
                return int(message["status"])
            if message["t"] == "out":
                stream = sys.stdout if message.get("fd") == 1 else sys.stderr
                stream.write(str(message.get("text", "")))
                stream.flush()
    finally:
        await worker.kill()


async def _died(worker: WorkerProcess) -> int:
    with anyio.move_on_after(5.0):
        await worker.process.wait()
    code = worker.process.returncode
    print(f"sandbox.probe: the confined worker died (exit status {code})", file=sys.stderr, flush=True)
    if code is None or code == 0:
        return 1
    return 128 - code if code < 0 else code


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.probe",
        description="Run FILE as plain, unrestricted Python in a worker process confined exactly as a Sandbox's "
        "workers are, to see what the OS-level confinement refuses.",
    )
    parser.add_argument("file", metavar="FILE", help="the Python file to run")
    parser.add_argument("args", metavar="ARG", nargs=argparse.REMAINDER, help="its arguments (sys.argv[1:])")
    parser.add_argument(
        "--require", action="store_true", help="refuse to run unless every layer of confinement is active"
    )
    options = parser.parse_args(argv)
    try:
        source = Path(options.file).read_text(encoding="utf-8")
    except OSError as error:
        print(f"sandbox.probe: cannot read {options.file!r}: {error.strerror}", file=sys.stderr)
        return 2
    try:
        return anyio.run(probe, options.file, source, options.args, Confinement(require=options.require))
    except SandboxError as error:  # the worker did not start, or lacks a layer `--require` asked for
        print(f"sandbox.probe: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
