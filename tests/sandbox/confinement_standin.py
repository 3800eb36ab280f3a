"""A stand-in template for the start-up tests: `python confinement_standin.py MODE CONFINEMENT`.

A real template cannot be made to fail its start on a healthy machine, so this one does it on purpose, speaking
the real control protocol. `1` dies before `ready`, as a template whose interpreter cannot start would; `2` forks
run processes that report the seccomp layer missing, as on a kernel without seccomp, then serve nothing; `3`
starts once (per host process) and forks one run process that dies on its run, then dies when asked for another,
and every restart dies before `ready`, as when the machine runs out of processes after the sandbox started.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
from pathlib import Path

from sandbox._shared.frames import encode


def main() -> None:
    """Behave as the mode in `sys.argv[1]` says."""
    mode = sys.argv[1]
    started = Path(tempfile.gettempdir(), f"confinement-standin-{os.getppid()}")
    if mode == "1" or (mode == "3" and started.exists()):
        sys.exit(3)
    control = socket.socket(fileno=0)
    control.send(json.dumps({"t": "ready", "pid": os.getpid(), "missing": {}}).encode())
    while True:
        data, fds, _, _ = socket.recv_fds(control, 4096, 2)
        if not data:
            return
        if mode == "3" and started.exists():
            sys.exit(3)
        if mode == "3":
            started.touch()
        pid = os.fork()
        if pid == 0:
            os.write(
                fds[1], encode({"t": "ready", "pid": os.getpid(), "missing": {"seccomp": "the stand-in has none"}})
            )
            os.read(fds[0], 1)
            os._exit(0)
        for fd in fds:
            os.close(fd)
        reply = json.dumps({"t": "forked", "id": json.loads(data)["id"], "pid": pid}).encode()
        socket.send_fds(control, [reply], [os.pidfd_open(pid)])


if __name__ == "__main__":
    main()
