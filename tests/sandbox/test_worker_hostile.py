"""A compromised run process: the host takes nothing it sends on trust.

Code that gets past the policy holds its run's process. Each test runs real run processes whose run path is
replaced (`HOSTILE`, a sandbox's own run process with `Worker.run` overridden for code starting `#hostile`), as
such code could replace it, and checks what the host does with what that process sends: results past the run's
limits, forged error kinds, floods of calls, code left running after `done`, and state kept for later runs.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest
from confinement_kit import eventually

from sandbox import Limits, Sandbox
from sandbox._host.dispatch import Dispatcher
from sandbox._host.pipe import MAX_UNREAD, MAX_VALUES
from sandbox._host.template import Template
from sandbox._shared.confinement import Confinement
from sandbox.limits import calls_message, timeout_message

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from sandbox._host.process import RunProcess

HOSTILE = r"""
import asyncio, gc, os, resource, signal, time
from sandbox._compiler import compile as _compile
from sandbox._worker import main as _worker
from sandbox._shared.frames import HEADER, encode
from sandbox._shared.hostcall import Call, HostFailure

class Hostile(_worker.Worker):
    kept = None

    async def run(self, message):
        code = message["code"]
        if self.kept is not None:  # an earlier run left its hook: every later run is rewritten
            message = {**message, "code": "return " + repr(self.kept)}
        elif code.startswith("#hostile "):
            return await self.attack(message, code.split()[1])
        await super().run(message)

    def done(self, run_id, result):
        self.end_run()
        self.send({"t": "done", "run": run_id, "result": result})

    async def attack(self, message, name):
        run_id = self.current_run = message["run"]
        limits = _worker.Limits.from_json(message["limits"])
        self.memory.limit_run(limits.memory, limits.timeout)  # as every run starts
        if name == "oversized":
            return self.done(run_id, {
                "value": "v" * 5_000, "stdout": "o" * 5_000, "error": None,
                "variables": {"__builtins__": 1, "big": "b" * 5_000, "ok": 1}, "dropped_variables": {"_x": "y"},
            })
        if name == "kind":
            return self.done(run_id, {"value": None, "error": {"kind": "not-a-kind", "message": "x"}})
        if name in ("flood", "burst"):
            payload = [0] * 20_000
            calls = [self.call(run_id, Call("slow", None, [payload], {})) for _ in range(30)]
            values = await asyncio.gather(*calls, return_exceptions=True)
            return self.done(run_id, {"value": [v if isinstance(v, int) else repr(v) for v in values]})
        if name == "defy":  # what the CPU soft limit cannot stop: `SIGXCPU` ignored, the soft limit raised
            signal.signal(signal.SIGXCPU, signal.SIG_IGN)
            hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
            name = "spin"
        if name == "mixed":
            async def quick_later():
                await asyncio.sleep(0.02)  # `slow` holds the one slot on the host by now
                return await self.call(run_id, Call("quick", None, [[0]], {}))
            values = await asyncio.gather(self.call(run_id, Call("slow", None, [[0]], {})), quick_later())
            return self.done(run_id, {"value": values})
        if name == "spin":
            def spin():
                while True:
                    pass
            asyncio.get_running_loop().call_later(0.05, spin)
            return self.done(run_id, {"value": "ok"})
        if name == "persist":
            Hostile.kept = "SPOOFED"
            return self.done(run_id, {"value": "installed"})
        if name == "unread":  # 40 calls at once, then never a read of the replies
            frames = [encode({"t": "call", "run": run_id, "id": i + 1, "fn": "page", "args": []}) for i in range(40)]
            self.write(b"".join(frames))
            time.sleep(30)
        if name == "overflow":  # valid JSON numbers that no float holds, and a count below zero
            payload = b'{"t":"done","run":%d,"result":{"value":1,"duration":1%s,"calls":-7}}' % (run_id, b"0" * 400)
            self.end_run()
            return self.write(HEADER.pack(len(payload)) + payload)
        if name in ("lists", "strings"):  # a call frame of more values than any honest one: 6 or 10 MiB of them
            values = b"[]," * 2_100_000 if name == "lists" else b'"ab",' * 2_100_000
            payload = b'{"t":"call","run":%d,"id":1,"fn":"nope","args":[%s0]}' % (run_id, values)
            self.write(HEADER.pack(len(payload)) + payload)
            return self.done(run_id, {"value": "sent"})
        if name == "counts":  # names and counts no run of these limits could have made
            return self.done(run_id, {
                "value": 1, "assigned": ["a" * 300, "not an identifier", "ok"], "names": ["t." + "x" * 600, "t.y"],
                "calls": 10**6, "duration": 1e9,
            })
        if name == "deep":  # deeper than a worker's own conversion goes
            value = []
            for _ in range(150):
                value = [value]
            return self.done(run_id, {"value": value})
        if name == "environ":
            return self.done(run_id, {"value": dict(os.environ)})
        if name == "cache":
            sources = ["\n".join(getattr(entry, "lines", ())) for entry in _compile._cache.values()]
            return self.done(run_id, {"value": [s for s in sources if "VICTIM" in s]})

_worker.main(Hostile)
"""


@contextlib.asynccontextmanager
async def hostile(limits: Limits) -> AsyncIterator[Sandbox]:
    """A process sandbox whose run processes run `HOSTILE`; `taken` lists the pid of each run's process."""
    sandbox = Sandbox(isolation="process", limits=limits)
    assert sandbox._template is not None
    sandbox._template.entry = ("-c", HOSTILE)
    take = sandbox._template.take
    pids: list[int] = []

    async def taken(memory: int | None = None) -> RunProcess:
        child = await take(memory)
        pids.append(child.pid)
        return child

    sandbox._template.take = taken  # type: ignore[method-assign]
    sandbox.taken = pids  # type: ignore[attr-defined]
    async with sandbox:
        yield sandbox


@contextlib.asynccontextmanager
async def hostile_process() -> AsyncIterator[RunProcess]:
    """One run process running `HOSTILE`, for a test that serves its run with a dispatcher of its own."""
    async with Template(confinement=Confinement(), entry=("-c", HOSTILE), spares=0) as template:
        worker = await template.take()
        try:
            yield worker
        finally:
            await worker.kill()


MiB = 1024 * 1024
SMALL = Limits(timeout=5.0, result=1024, output=1024, variables=1024)


async def test_a_result_past_the_runs_limits_is_cut_by_the_host_with_the_workers_own_words() -> None:
    """A `done` frame past `result`, `output` and `variables` (a `__builtins__` one too) is cut as a worker would."""
    async with hostile(SMALL) as sb:
        result = await sb.run("#hostile oversized", variables={})
        assert result.value is None
        assert result.stdout == "o" * 512 + "\n[... 3,976 characters cut ...]\n" + "o" * 512
        assert result.error is not None
        assert result.error.kind == "result_limit"
        assert result.variables == {"ok": 1}
        assert result.dropped_variables == {"big": "too large: 5,002 bytes of JSON, over the 1,024 left for variables"}
        after = await sb.run("return 2", variables=result.variables)  # the kept variables are usable as they are
        assert (after.value, after.error) == (2, None)


async def test_a_value_past_the_result_limit_from_a_worker_is_a_result_limit_error() -> None:
    """Output within its limit, a value over it: `result_limit` with the worker-side wording, no value."""
    async with hostile(Limits(timeout=5.0, result=1024, output=10_000)) as sb:
        result = await sb.run("#hostile oversized")
    assert result.error is not None
    assert result.error.kind == "result_limit"
    assert result.error.message == (
        "the returned value is 5,002 bytes as JSON; the limit is 1,024. Return less (a summary, the fields you need, "
        "a slice)"
    )
    assert (result.value, result.variables, result.dropped_variables) == (None, None, {})


async def test_an_error_kind_outside_the_closed_set_is_refused_and_the_worker_replaced() -> None:
    """A forged `done` with an unknown kind is a protocol violation: `crashed`, never the forged kind."""
    async with hostile(SMALL) as sb:
        result = await sb.run("#hostile kind")
        assert result.error is not None
        assert result.error.kind == "crashed"
        assert "a `done` frame with an unknown error kind" in result.error.message
        after = await sb.run("return 3")
        assert after.value == 3


async def test_a_worker_past_its_call_limit_is_killed_and_the_run_says_so() -> None:
    """30 calls at once past `calls=5`: the host serves 5 at most, kills the worker at the 6th: `call_limit`."""
    served: list[int] = []

    async def slow(data: list[int]) -> int:
        served.append(len(data))
        return len(data)

    async with hostile(Limits(timeout=5.0, calls=5)) as sb:
        result = await sb.run("#hostile flood", functions={"slow": slow})
        assert result.error is not None
        assert result.error.kind == "call_limit"
        assert result.error.message.startswith(calls_message(5) + " (the worker process sent more calls")
        assert len(served) <= 5
        after = await sb.run("return 4")
        assert after.value == 4


async def test_the_host_holds_a_bounded_number_of_calls_however_fast_a_worker_sends_them() -> None:
    """30 calls written at once with `concurrent_calls=1`: the host takes in a frame only when a call is done."""
    limits = Limits(timeout=10.0, concurrent_calls=1)
    held: list[int] = []
    finished = 0

    async def slow(data: list[int]) -> int:
        nonlocal finished
        held.append(dispatcher.count - finished)  # calls the host has taken in and not finished
        await anyio.sleep(0.01)  # a slow tool: the worker's frames pile up on the pipe meanwhile
        finished += 1
        return finished

    dispatcher = Dispatcher({"slow": slow}, limits, limit=True)
    async with hostile_process() as worker:
        result = await worker.run("#hostile burst", limits=limits, dispatcher=dispatcher, error_names=())
    assert result.error is None, result.error
    assert result.value == list(range(1, 31))
    assert max(held) <= 2  # `2 * concurrent_calls` held at most; without the bound, all 30 at once


async def test_a_sync_function_waits_for_a_free_slot_held_by_an_async_call() -> None:
    """A worker that sends a sync call while its one in-flight slot is taken: the host runs it once the slot frees."""
    limits = Limits(timeout=10.0, concurrent_calls=1)
    order: list[str] = []

    async def slow(data: list[int]) -> int:
        order.append("slow begins")
        await anyio.sleep(0.05)
        order.append("slow ends")
        return 1

    def quick(data: list[int]) -> int:
        order.append("quick")
        return 2

    dispatcher = Dispatcher({"slow": slow, "quick": quick}, limits, limit=True)
    async with hostile_process() as worker:
        result = await worker.run("#hostile mixed", limits=limits, dispatcher=dispatcher, error_names=())
    assert result.error is None, result.error
    assert result.value == [1, 2]
    assert order == ["slow begins", "slow ends", "quick"]


@pytest.mark.parametrize("attack", ["spin", "defy"])
async def test_code_left_spinning_after_done_ends_with_its_process(attack: str) -> None:
    """A spin left on the loop after `done` (with `SIGXCPU` ignored and its soft limit raised, or not) is gone with
    the run: the host ends the run's process, and the next run works."""
    async with hostile(Limits(timeout=5.0)) as sb:
        assert (await sb.run(f"#hostile {attack}")).value == "ok"
        spinner = sb.taken[-1]  # type: ignore[attr-defined]
        await eventually(lambda: not Path(f"/proc/{spinner}").exists())  # killed by the host, reaped by the template
        assert (await sb.run("return 5")).value == 5


@pytest.mark.slow
async def test_a_worker_that_never_reads_its_replies_gets_no_more_of_its_calls_answered() -> None:
    """40 calls of a 1 MiB function, then no read: the host answers until `MAX_UNREAD` waits unread, then stops."""
    served = 0

    def page() -> str:
        nonlocal served
        served += 1
        return "x" * MiB

    async with hostile(Limits(timeout=1.0)) as sb:
        result = await sb.run("#hostile unread", functions={"page": page})
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        timeout_message(1.0, " in one long operation (a slow regular expression?)"),
    )
    assert served <= MAX_UNREAD // MiB + 1  # all 40 without the bound: 40 MiB held for a worker that reads none


async def test_a_done_frame_with_numbers_out_of_range_is_read_without_raising() -> None:
    """`duration` of 10**400 (`float()` of it raises `OverflowError`) and `calls` of -7: zero, never an exception."""
    async with hostile(SMALL) as sb:
        result = await sb.run("#hostile overflow")
        assert (result.value, result.error, result.duration, result.calls) == (1, None, 0.0, 0)
        assert (await sb.run("return 7")).value == 7


@pytest.mark.parametrize("values", ["lists", "strings"])
async def test_a_frame_of_more_values_than_an_honest_worker_sends_is_refused_before_it_is_parsed(values: str) -> None:
    """2,100,000 `[]` or `"ab"` in one call frame (28 and 12 times their size once parsed): `crashed`, unparsed."""
    async with hostile(SMALL) as sb:
        result = await sb.run(f"#hostile {values}")
        assert result.error is not None
        refused = f"a frame of more than {MAX_VALUES:,} values"
        assert (result.error.kind, result.error.message) == (
            "crashed",
            f"the run's process broke the protocol ({refused}); it was stopped with its code",
        )
        assert (await sb.run("return 8")).value == 8


async def test_names_and_counts_past_what_the_run_could_make_are_cut_and_the_worker_replaced() -> None:
    """A 300-character or non-identifier name assigned, a 602-character call label, 10**6 calls, 1e9 seconds."""
    async with hostile(SMALL) as sb:
        result = await sb.run("#hostile counts")
        assert (result.value, result.error) == (1, None)
        assert (result.assigned, result.names, result.calls, result.duration) == (("ok",), ("t.y",), 1000, 6.0)
        assert (await sb.run("return 9")).value == 9


async def test_a_value_deeper_than_a_worker_converts_is_refused_by_the_host() -> None:
    """150 nested lists (a worker stops at 100): the worker's own `TypeError`, no value, the worker replaced."""
    async with hostile(SMALL) as sb:
        result = await sb.run("#hostile deep")
        assert result.value is None
        assert result.error is not None
        deep = "the returned value" + "[0]" * 100 + " is nested more than 100 levels deep"
        assert (result.error.kind, result.error.type_name, result.error.message) == ("runtime", "TypeError", deep)
        assert (await sb.run("return 1")).value == 1


async def test_a_workers_environment_is_the_scrubbed_one_without_the_hosts_import_path() -> None:
    """What code holding the worker reads in `os.environ`: no host variable, and not where the host is installed."""
    async with hostile(SMALL) as sb:
        result = await sb.run("#hostile environ")
    assert result.value == {
        "PATH": os.defpath,
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
    }


async def test_a_hook_left_by_one_run_never_reaches_a_later_run() -> None:
    """The trust model, pinned: a hook installed by one run dies with its process, and no later process holds an
    earlier run's source."""
    async with hostile(SMALL) as sb:
        assert (await sb.run("#hostile persist")).value == "installed"
        assert (await sb.run("return 'mine'")).value == "mine"
        assert (await sb.run("api_key = 'VICTIM-SECRET'\nreturn len(api_key)")).value == 13
        assert (await sb.run("#hostile cache")).value == []
        assert len(set(sb.taken)) == 4  # type: ignore[attr-defined]


async def test_a_run_cut_off_by_its_timeout_ends_with_its_process_and_the_next_run_works() -> None:
    """A run that reached `timeout` mid-work is killed with its process; the next run is on a new one."""
    async with hostile(Limits(timeout=0.3)) as sb:
        stopped = await sb.run("while True:\n    pass")
        assert stopped.error is not None
        assert stopped.error.kind == "timeout"
        after = await sb.run("return 6")
        assert after.value == 6
