"""A compromised worker's error texts are cut on the host, its `type_name` too.

The host cuts a `done` frame's error `message` and `traceback` to what a worker writes. `type_name` was kept whole
(up to a frame's 64 MiB). Here a real run process, whose run is replaced as code past the policy could replace it,
forges one; an honest process's longest one passes.
"""

from __future__ import annotations

from sandbox import Limits, Sandbox

FORGER = r"""
from sandbox._worker import main as _worker

class Forger(_worker.Worker):
    async def run(self, message):
        if not message["code"].startswith("#forge"):
            return await super().run(message)
        self.current_run = message["run"]
        self.end_run()
        error = {"kind": "runtime", "message": "KeyError: 'x'", "type_name": "E" * 5_000_000}
        self.send({"t": "done", "run": message["run"], "result": {"value": None, "error": error}})

_worker.main(Forger)
"""
"""A sandbox's run process, but a run of `#forge` answers with a `type_name` of five million characters."""


async def test_a_forged_type_name_is_cut_and_the_next_run_still_works() -> None:
    """A 5,000,000-character `type_name` arrives as its first 200, and the run after it gets a process of its own."""
    sandbox = Sandbox(isolation="process", limits=Limits(timeout=5.0))
    assert sandbox._template is not None
    sandbox._template.entry = ("-c", FORGER)
    async with sandbox:
        long_name = "L" * 5_000
        # in a function: a top-level name that long is itself past what the host takes (`assigned`)
        raised = await sandbox.run(
            f"def f():\n    class {long_name}(Exception):\n        pass\n    raise {long_name}()\nf()"
        )
        assert raised.error is not None
        assert raised.error.type_name == "L" * 69 + " [... 4,931 characters cut ...]"  # the worker's own cut
        forged = await sandbox.run("#forge")
        assert forged.error is not None
        assert (forged.error.kind, forged.error.message, forged.error.type_name) == (
            "runtime",
            "KeyError: 'x'",
            "E" * 200,
        )
        assert (await sandbox.run("return 1")).value == 1
