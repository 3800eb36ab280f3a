"""Red team, the pipe protocol: an escaped run writes what it likes to its pipe, under the real `Sandbox.run`.

Each case (finding 91) runs in a sandbox whose run processes run code starting `#escaped` as plain Python inside
the run's own task, after the run's limits are set (`ESCAPED`), with `frame(dict)` and `raw(bytes)` writing to
the host. Whatever it writes ends its own run only, with the exact outcome in `CASES`, no host function is called
for it, and the next run works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ESCAPED = r"""
import asyncio
from sandbox._worker import main as _worker
from sandbox._shared.frames import encode

class Escaped(_worker.Worker):
    async def run(self, message):
        code = message["code"]
        if not code.startswith("#escaped\n"):
            return await super().run(message)
        run_id = self.current_run = message["run"]
        limits = _worker.Limits.from_json(message["limits"])
        self.memory.limit_run(limits.memory, limits.timeout)
        namespace = {"frame": lambda m: self.write(encode(m)), "raw": self.write, "asyncio": asyncio}
        body = "\n".join("    " + line for line in code.splitlines())
        exec(compile("async def escaped():\n" + body + "\n", "<escaped>", "exec"), namespace)
        await namespace["escaped"]()
        self.end_run()
        self.send({"t": "done", "run": run_id, "result": {"value": "finished"}})

_worker.main(Escaped)
"""

CALL = {"t": "call", "id": 1, "fn": "f", "attr": None, "args": [], "kwargs": {}}
CASES = {
    "done for another run": (
        'frame({"t": "done", "run": 2, "result": {"value": 1}})\nawait asyncio.sleep(2)',
        ("crashed", "`done` for run 2 during run 1"),
    ),
    "call for another run": (
        f"frame({{**{CALL!r}, 'run': 7}})\nawait asyncio.sleep(0.2)",
        (None, "finished"),
    ),
    "calls after its own done": (
        (
            'frame({"t": "done", "run": 1, "result": {"value": "early"}})\n'
            f"for i in range(100):\n    frame({{**{CALL!r}, 'run': 1, 'id': i + 10}})\nawait asyncio.sleep(0.5)"
        ),
        (None, "early"),
    ),
    "a frame promised and never sent": (
        'import struct\nraw(struct.pack(">I", 64 * 1024 * 1024) + b" " * 100_000)\nawait asyncio.sleep(60)',
        ("timeout", "past its 0.5 s time limit"),
    ),
    "a header over the frame limit": (
        'import struct\nraw(struct.pack(">I", 2**31))\nawait asyncio.sleep(2)',
        ("crashed", "frame of 2,147,483,648 bytes is over the 67,108,864"),
    ),
    "JSON nested past any parser": (
        (
            "import struct\n"
            'payload = b\'{"t":"done","run":1,"result":\' + b"[" * 100_000 + b"]" * 100_000 + b"}"\n'
            'raw(struct.pack(">I", len(payload)) + payload)\nawait asyncio.sleep(2)'
        ),
        ("crashed", "a frame is not valid JSON: RecursionError"),
    ),
    "ready again mid-run": (
        'frame({"t": "ready", "pid": 1, "missing": {}})\nawait asyncio.sleep(2)',
        ("crashed", "unexpected frame 'ready' during a run"),
    ),
}
"""What the escaped run writes, and the run's outcome: its error kind and words from its message (its value)."""


@pytest.fixture(scope="module")
async def escaped() -> AsyncIterator[Sandbox]:
    """One process sandbox whose run processes run `ESCAPED`, for every case."""
    sandbox = Sandbox(limits=Limits(timeout=0.5))
    assert sandbox._template is not None
    sandbox._template.entry = ("-c", ESCAPED)
    async with sandbox:
        yield sandbox


@pytest.mark.parametrize("case", list(CASES))
async def test_what_an_escaped_run_writes_to_its_pipe_ends_its_own_run_only(escaped: Sandbox, case: str) -> None:
    """Forged frames, frames for other runs, calls after `done`, broken and oversized frames: the exact outcome,
    no host function called, and the next run works."""
    called: list[object] = []

    def f() -> int:
        called.append(1)
        return 1

    code, (kind, words) = CASES[case]
    result = await escaped.run("#escaped\n" + code, functions={"f": f})
    if kind is None:
        assert (result.error, result.value) == (None, words)
    else:
        assert result.error is not None
        assert result.error.kind == kind
        assert words in result.error.message
    assert (called, result.calls) == ([], 0)
    assert (await escaped.run("return 1")).value == 1
