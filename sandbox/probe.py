"""`python -m sandbox.probe FILE [ARG ...]`: run FILE as plain Python in a run process made exactly as a run's is.

This is how to see what OS-level confinement refuses without needing a real escape from the language policy:
FILE runs with no policy at all (any import, `open`, `socket`, `os.fork`, `ctypes`), in a process forked from a
warm, confined template and confined itself exactly as a `Sandbox`'s run processes are, as a run with the default
`Limits`: its memory and CPU limits set before FILE starts, and killed past its deadline (exit status 124).
What FILE prints is relayed to stdout and stderr as it happens, and the probe exits with FILE's status. The
layers the process runs under are printed to stderr first. A process that dies is reported on stderr, with
status 128 + its signal.

FILE can find what an escaped run would aim at: `os.getppid()` is the template, and the environment variable
`SANDBOX_PROBE_SIBLING` holds the pid of another run process of the same template, waiting for its run.

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
from typing import TYPE_CHECKING

import anyio

from sandbox._host.distrust import KILL_GRACE
from sandbox._host.template import Template
from sandbox._shared.confinement import Confinement
from sandbox._shared.frames import ProtocolError
from sandbox.errors import SandboxError
from sandbox.limits import Limits

if TYPE_CHECKING:
    from sandbox._host.process import RunProcess

_DIED = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, ProtocolError, OSError)


PROBE_WORKER = ("-m", "sandbox._worker.probe")
"""How the interpreter is told to run the probe's template."""


async def probe(
    path: str, source: str, args: list[str], confinement: Confinement, entry: tuple[str, ...] = PROBE_WORKER
) -> int:
    """Run `source`, read from `path`, in a confined run process; its exit status."""
    async with Template(confinement=confinement, memory=Limits().memory, entry=entry, spares=0) as template:
        worker, sibling = await template.take(), await template.take()
        print(f"sandbox.probe: {worker.layers}", file=sys.stderr, flush=True)
        try:
            return await _probe(worker, {"file": path, "source": source, "args": args, "sibling": sibling.pid})
        finally:
            await worker.kill()
            await sibling.kill()


async def _probe(worker: RunProcess, request: dict[str, object], limits: Limits | None = None) -> int:
    """Send the probe's file as a run, under `limits` (a run's defaults), and relay what it prints until it exits.

    The process sets the run's memory and CPU limits before the file runs, and the run's deadline holds as it does
    for code: past `limits.timeout` (and the grace a run gets) the process is killed.
    """
    limits = limits or Limits()
    await worker.send({"t": "run", "run": 1, "limits": limits.to_json(), "probe": request})
    with anyio.move_on_after(limits.timeout + KILL_GRACE):
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
    await worker.kill()
    print(f"sandbox.probe: the run's deadline ({limits.timeout:g} s) passed; it was stopped", file=sys.stderr)
    return 124


async def _died(worker: RunProcess) -> int:
    await worker.wait_exit()
    code = worker.returncode
    print(f"sandbox.probe: the confined run process died (exit status {code})", file=sys.stderr, flush=True)
    if code is None or code == 0:
        return 1
    return 128 - code if code < 0 else code


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.probe",
        description="Run FILE as plain, unrestricted Python in a process forked and confined exactly as a Sandbox's "
        "run processes are, to see what the OS-level confinement refuses.",
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
    except SandboxError as error:  # the template did not start, or lacks a layer `--require` asked for
        print(f"sandbox.probe: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
