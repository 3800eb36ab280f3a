"""A stand-in worker for the pool's start-up tests: `python confinement_standin.py MODE CONFINEMENT`.

A real worker cannot be made to fail its start on a healthy machine, so this one does it on purpose. The pool
passes its memory limit as the first argument, and the tests use it to pick a mode: `1` dies before `ready`, as a
worker whose interpreter cannot start would; `2` reports the seccomp layer missing, as a worker on a kernel
without seccomp would, then serves nothing; `3` starts once (per host process), dies on its first run, and every
replacement then dies before `ready`, as when the machine runs out of processes after the pool started.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from sandbox._protocol import encode


def main() -> None:
    """Behave as the mode in `sys.argv[1]` says."""
    mode = sys.argv[1]
    started = Path(tempfile.gettempdir(), f"confinement-standin-{os.getppid()}")
    if mode == "1" or (mode == "3" and started.exists()):
        sys.exit(3)
    if mode == "3":
        started.touch()
    os.write(1, encode({"t": "ready", "pid": os.getpid(), "missing": {"seccomp": "the stand-in has none"}}))
    os.read(0, 1)


if __name__ == "__main__":
    main()
