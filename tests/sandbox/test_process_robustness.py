"""Process isolation under stress: a dying run process, frames over the size limit, calls left over from a run.

Whatever happens to a run's process, `Sandbox.run` returns a result and the next run works; the caller's own
cancellation still propagates. Each run has an id, and a call from code still running after its run ended is
refused, never served by a later run's functions.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from confinement_kit import eventually

from sandbox import Limits, Namespace, RunResult, Sandbox
from sandbox._host import template as template_module
from sandbox._host.dispatch import Dispatcher
from sandbox._host.process import RunProcess
from sandbox._host.template import Template
from sandbox._shared.confinement import Confinement
from sandbox._shared.frames import MAX_FRAME
from sandbox.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import Process

MiB = 1024 * 1024
LIMIT_TEXT = f"{MAX_FRAME:,}"
"""How the 64 MiB frame limit appears in messages."""
QUICK = Limits(timeout=3.0)
ROOT = str(Path(__file__).resolve().parents[2])
"""The repository root, for a stand-in worker's import path."""


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


@contextlib.asynccontextmanager
async def one_worker(limits: Limits = QUICK) -> AsyncIterator[Sandbox]:
    """A fresh process sandbox that runs one run at a time."""
    async with Sandbox(isolation="process", max_runs=1, limits=limits) as sandbox:
        warm = await sandbox.run("return 0")
        assert warm.value == 0
        yield sandbox


@pytest.fixture
async def sb() -> AsyncIterator[Sandbox]:
    """A fresh one-worker process sandbox with `QUICK` limits."""
    async with one_worker() as sandbox:
        yield sandbox


async def run(sb: Sandbox, code: str, **kwargs: Any) -> RunResult:
    """`sb.run`, turning anything raised out of it into a test failure (every outcome must be a result)."""
    try:
        return await sb.run(dedent(code), **kwargs)
    except Exception as exc:  # noqa: BLE001  # a run must never raise into the host
        pytest.fail(f"run raised instead of returning a result: {exc!r}")


async def assert_still_works(sb: Sandbox) -> None:
    """The next run, with a host function, works normally."""

    async def add(a: int, b: int) -> int:
        return a + b

    after = await run(sb, "return await add(a=1, b=2)", functions={"add": add})
    assert after.error is None, after.error
    assert after.value == 3


# -- 1. the worker dies, or the caller gives up -------------------------------------------------------------------

DEEP_C_RECURSION = """
it = iter([1])
for i in range(300_000):
    it = map(abs, it)
next(it)
"""


async def test_a_run_process_that_dies_mid_run_is_a_crashed_result(sb: Sandbox) -> None:
    """A segfault in the run's process (C recursion through 300,000 nested `map`s) is `crashed`, with the stack."""
    result = await run(sb, DEEP_C_RECURSION)
    assert result.error is not None
    assert result.error.kind == "crashed", result.error
    assert "C stack overflow" in result.error.message
    await assert_still_works(sb)


async def test_a_spare_that_died_while_it_waited_is_not_handed_a_run(sb: Sandbox) -> None:
    """Run processes forked ahead and killed before a run takes them are skipped: the run succeeds."""
    assert sb._template is not None
    await eventually(lambda: bool(sb._template and sb._template._children))
    spares = list(sb._template._children.values())
    for spare in spares:
        os.kill(spare.pid, signal.SIGKILL)
    await eventually(lambda: all(spare.returncode is not None for spare in spares))  # the template reaped them
    await assert_still_works(sb)


async def test_a_template_that_died_is_started_again_and_a_run_in_flight_finishes() -> None:
    """Killing the template mid-run ends nothing but the template: the run finishes, and the next ones work."""
    async with one_worker(Limits(timeout=10.0)) as sb:
        assert sb._template is not None
        template = sb._template.pid
        assert template is not None

        async def kill_template() -> str:
            os.kill(template, signal.SIGKILL)
            await anyio.sleep(0.2)
            return "killed"

        done = await run(sb, "return await kill_template()", functions={"kill_template": kill_template})
        assert (done.value, done.error) == ("killed", None)
        for _ in range(3):
            await assert_still_works(sb)
        assert sb._template.pid not in (None, template)
        assert sb._template.restarts == 1


def limit_leaving_free(free: int) -> int:
    """A limit on open files that leaves this process `free` more descriptors."""
    used = {int(fd) for fd in os.listdir("/proc/self/fd")}
    limit = 0
    while limit - len({fd for fd in used if fd < limit}) < free:
        limit += 1
    return limit


async def test_a_template_that_stops_answering_is_started_again_and_every_run_gets_its_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stopped template (SIGSTOP: alive, silent) misses the fork deadline, is killed and started again; every run
    gets its result and nothing is raised into the task that opened the sandbox."""
    monkeypatch.setattr(template_module, "FORK_TIMEOUT", 0.5)
    async with Sandbox(max_runs=8, limits=QUICK) as sb:
        assert sb._template is not None
        stopped = sb._template.pid
        assert stopped is not None
        os.kill(stopped, signal.SIGSTOP)
        values: list[object] = []

        async def one() -> None:
            values.append((await sb.run("return 1")).value)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                for _ in range(6):  # more than the spares forked before the stop
                    tasks.start_soon(one)
        assert values == [1] * 6
        assert sb._template.restarts >= 1
        assert sb._template.pid not in (None, stopped)


async def test_a_host_out_of_open_files_fails_runs_with_sandbox_error_and_recovers() -> None:
    """Runs that cannot get their descriptors (EMFILE) raise `SandboxError`, others finish, nothing else is raised
    into the task that opened the sandbox; with descriptors free again, runs work."""

    async def wait() -> str:
        await anyio.sleep(0.3)
        return "ok"

    async with Sandbox(max_runs=16, limits=QUICK) as sb:
        assert (await sb.run("return 0")).value == 0
        outcomes: list[object] = []

        async def one() -> None:
            try:
                outcomes.append((await sb.run("return await wait()", functions={"wait": wait})).value)
            except SandboxError:
                outcomes.append("SandboxError")

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit_leaving_free(8), hard))
        try:
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tasks:
                    for _ in range(12):
                        tasks.start_soon(one)
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert len(outcomes) == 12
        assert set(outcomes) == {"ok", "SandboxError"}
        for _ in range(3):
            await assert_still_works(sb)


async def test_runs_in_flight_together_hold_no_more_call_bytes_than_the_sandboxs_budget() -> None:
    """Past the sandbox's budget of held call bytes (here: any), a run that holds a call reads no more until some
    call is answered: four runs of four 1 MB calls each have at most one call each on the host at once, not
    sixteen; all finish, and the budget is whole again."""
    in_flight: list[int] = [0, 0]  # now, most

    async def sink(data: str) -> int:
        in_flight[0] += 1
        in_flight[1] = max(in_flight)
        await anyio.sleep(0.1)
        in_flight[0] -= 1
        return len(data)

    code = (
        "import asyncio\nbig = 'x' * 1_000_000\nreturn sum(await asyncio.gather(*[sink(data=big) for _ in range(4)]))"
    )
    async with Sandbox(max_runs=4, limits=QUICK) as sb:
        sb._held.budget = 1
        results: list[object] = []

        async def one() -> None:
            result = await sb.run(code, functions={"sink": sink})
            results.append(result.value if result.error is None else result.error)

        async with anyio.create_task_group() as tasks:
            for _ in range(4):
                tasks.start_soon(one)
        assert results == [4_000_000] * 4
        assert in_flight[0] == 0
        assert in_flight[1] <= 4
        assert sb._held.held == 0


async def test_the_callers_cancellation_propagates_and_the_next_run_works(sb: Sandbox) -> None:
    """Cancelling the caller mid-run cancels `run` (no result is made up); the next run works."""
    outcomes: list[RunResult] = []
    with anyio.move_on_after(2.5) as scope:

        async def begin() -> None:
            scope.cancel()  # the caller gives up while the code runs

        code = "await begin()\nimport asyncio\nawait asyncio.sleep(2)\nreturn 1"
        outcomes.append(await sb.run(code, functions={"begin": begin}))
    assert outcomes == []
    assert scope.cancelled_caught
    await assert_still_works(sb)


async def test_a_failing_namespace_resolver_is_an_error_the_code_sees(sb: Sandbox) -> None:
    """A resolver that raises a plain exception (not `FunctionError`) fails the call, not `run`."""

    def resolve(name: str) -> Any:
        raise LookupError(f"no tool {name!r}")

    code = """
    try:
        await tools.missing()
    except LookupError as error:
        return str(error)
    """
    result = await run(sb, code, functions={"tools": Namespace(resolve)})
    assert result.error is None, result.error
    assert result.value == "no tool 'missing'"
    await assert_still_works(sb)


# -- 2. frames over the size limit ----------------------------------------------------------------------------------


async def test_a_host_reply_over_the_frame_limit_is_an_error_the_code_sees(sb: Sandbox) -> None:
    """A host function returning 70 MiB of JSON fails that call with the limit named; the run and worker go on."""

    async def big() -> list[str]:
        return ["#" * MiB] * 70

    async def small() -> str:
        return "fine"

    code = """
    try:
        await big()
    except ValueError as error:
        message = str(error)
    return [message, await small()]
    """
    result = await run(sb, code, functions={"big": big, "small": small})
    assert result.error is None, result.error
    message, after = result.value  # type: ignore[misc]
    assert "`big`" in message
    assert LIMIT_TEXT in message
    assert after == "fine"
    assert result.calls == 2
    await assert_still_works(sb)


async def test_an_uncaught_oversized_host_reply_fails_the_run_as_a_runtime_error(sb: Sandbox) -> None:
    """Not caught, the oversized reply is an ordinary `ValueError` ending the run."""

    def big() -> list[str]:
        return ["#" * MiB] * 70

    result = await run(sb, "return len(await big())", functions={"big": big})
    assert result.error is not None
    assert (result.error.kind, result.error.type_name) == ("runtime", "ValueError")
    assert LIMIT_TEXT in result.error.message
    await assert_still_works(sb)


async def test_arguments_over_the_frame_limit_are_refused_in_the_worker() -> None:
    """The code passing 70 MiB of arguments gets a `ValueError` naming the limit; the host function never runs."""
    received: list[object] = []

    async def sink(value: object) -> None:
        received.append(value)

    code = """
    chunk = "#" * (1024 * 1024)
    try:
        await sink([chunk] * 70)
    except ValueError as error:
        return str(error)
    """
    async with one_worker(Limits(timeout=4.0, memory=1024 * MiB)) as sb:
        result = await run(sb, code, functions={"sink": sink})
        assert result.error is None, result.error
        assert "`sink(...)`" in str(result.value)
        assert LIMIT_TEXT in str(result.value)
        assert received == []
        await assert_still_works(sb)


async def test_a_result_over_the_frame_limit_is_a_result_limit_error() -> None:
    """With `Limits.result` above the frame limit, a 70 MiB value is `result_limit`, not a worker left hanging."""
    limits = Limits(timeout=3.0, memory=1024 * MiB, result=1024 * MiB)
    async with one_worker(limits) as sb:
        with anyio.fail_after(4.5):  # a lost `done` would only end at the wall clock, as a timeout
            result = await run(sb, "chunk = '#' * (1024 * 1024)\nprint('hi')\nreturn [chunk] * 70")
        assert result.error is not None
        assert result.error.kind == "result_limit", result.error
        assert LIMIT_TEXT in result.error.message
        await assert_still_works(sb)


# -- 3. calls left over from an earlier run ------------------------------------------------------------------------

LATE_GENERATOR = """
import asyncio
async def later():
    try:
        yield 1
    finally:
        await asyncio.sleep(0.2)
        await echo("late, from a generator")
g = later()
await anext(g)
return 1
"""

LATE_TASK = """
import asyncio
sleep = asyncio.sleep
async def stubborn():
    try:
        await sleep(5)
    except BaseException:
        pass  # swallows the run's cancellation of its tasks
    await sleep(1.3)  # past the second the run's end waits for its tasks
    await echo("late, from a task")
asyncio.create_task(stubborn())
await sleep(0)
return 1
"""


@pytest.mark.parametrize("code", [LATE_GENERATOR, LATE_TASK], ids=["async_generator_finally", "stubborn_task"])
async def test_a_call_left_over_from_a_run_reaches_no_host_function(sb: Sandbox, code: str) -> None:
    """Code still running after its run ended is never served by the next run's functions."""
    first: list[object] = []
    second: list[object] = []

    async def first_echo(value: object) -> object:
        first.append(value)
        return value

    async def second_echo(value: object) -> object:
        second.append(value)
        return value

    result = await run(sb, code, functions={"echo": first_echo})
    assert result.error is None, result.error
    # The next run is live while the leftover code would make its call (its process is gone with its run).
    after = await run(sb, "import asyncio\nawait asyncio.sleep(0.9)\nreturn 2", functions={"echo": second_echo})
    assert after.error is None, after.error
    assert after.value == 2
    assert second == []


async def test_the_run_process_sends_nothing_for_a_run_that_is_over() -> None:
    """At the protocol level: `done` carries the run's id, no leftover call crosses the pipe, and the process ends."""
    async with Template(confinement=Confinement(), spares=0) as template:
        worker = await template.take()
        await worker.send(
            {
                "t": "run",
                "run": 41,
                "code": LATE_GENERATOR,
                "limits": QUICK.to_json(),
                "functions": {"echo": None},
                "error_names": [],
            }
        )
        with anyio.fail_after(3):
            done = await worker.receive()
        assert (done["t"], done["run"], done["result"]["value"]) == ("done", 41, 1)
        with anyio.fail_after(3), pytest.raises(anyio.EndOfStream):  # it exits right after `done`, saying nothing
            await worker.receive()
        await worker.kill()


# A stand-in for a compromised worker: it speaks the protocol, but lies about run ids and then breaks a frame.
ROGUE_WORKER = """
import os, sys
from sandbox._shared.frames import HEADER, decode, encode, frame_size
inbound, outbound = sys.stdin.buffer, sys.stdout.buffer
def send(message):
    outbound.write(encode(message))
    outbound.flush()
def receive():
    return decode(inbound.read(frame_size(inbound.read(HEADER.size))))
send({"t": "ready", "pid": os.getpid()})
run = receive()
send({"t": "call", "run": run["run"] + 100, "id": 1, "fn": "echo", "attr": None, "args": ["stale"], "kwargs": {}})
reply = receive()
send({"t": "done", "run": run["run"], "result": {"value": reply, "stdout": "", "error": None}})
run = receive()
send({"t": "done", "run": run["run"], "result": {"value": 1, "error": {"kind": "bogus", "message": "x"}}})
run = receive()
outbound.write(HEADER.pack(1_000_000) + b"{")
outbound.flush()
"""


async def test_the_host_refuses_stale_calls_and_survives_malformed_frames(tmp_path: Path) -> None:
    """A call tagged with another run's id is answered with an error, unserved; a malformed frame is `crashed`."""
    called: list[object] = []

    async def echo(value: object) -> object:
        called.append(value)
        return value

    worker, process = await spawn_rogue(ROGUE_WORKER, tmp_path)
    try:
        with anyio.fail_after(5):
            assert (await worker.receive())["t"] == "ready"
            stale = await worker.run("", limits=QUICK, dispatcher=_dispatcher(echo), error_names=())
            assert stale.error is None, stale.error
            reply: Any = stale.value
            assert (reply["ok"], reply["type"]) == (False, "RuntimeError")
            assert "over" in reply["message"]
            assert called == []
            bogus = await worker.run("", limits=QUICK, dispatcher=_dispatcher(echo), error_names=())
            assert bogus.error is not None
            assert bogus.error.kind == "crashed"
    finally:
        await worker.kill()
        await process.aclose()


async def test_a_worker_cut_off_mid_frame_is_a_crashed_result(tmp_path: Path) -> None:
    """A frame header promising more than the worker sends before dying is `crashed`, not `IncompleteRead`."""
    script = ROGUE_WORKER.replace('"kind": "bogus"', '"kind": "runtime"')
    worker, process = await spawn_rogue(script, tmp_path)

    async def echo(value: object) -> object:
        return value

    try:
        with anyio.fail_after(5):
            assert (await worker.receive())["t"] == "ready"
            for _ in range(2):
                await worker.run("", limits=QUICK, dispatcher=_dispatcher(echo), error_names=())
            cut = await worker.run("", limits=QUICK, dispatcher=_dispatcher(echo), error_names=())
        assert cut.error is not None
        assert cut.error.kind == "crashed"
    finally:
        await worker.kill()
        await process.aclose()


async def spawn_rogue(script: str, workdir: Path) -> tuple[RunProcess, Process]:
    """A stand-in run process speaking the protocol on its stdin and stdout, and the host's handle on it."""
    child_in, to_child = os.pipe()
    from_child, child_out = os.pipe()
    env = {**os.environ, "PYTHONPATH": ROOT}
    process = await anyio.open_process([sys.executable, "-c", script], stdin=child_in, stdout=child_out, env=env)
    os.close(child_in)
    os.close(child_out)
    return RunProcess(process.pid, os.pidfd_open(process.pid), to_child=to_child, from_child=from_child), process


def _dispatcher(echo: Any) -> Dispatcher:
    return Dispatcher({"echo": echo}, QUICK, limit=True)


# -- 5. what a run the worker never reported on made ---------------------------------------------------------------

STUCK_AFTER_TWO_CALLS = (
    "await charge(amount=10)\nawait charge(amount=20)\nbig = [0] * 10_000_000\n" + "-1 in big\n" * 400
)
CRASH_AFTER_ONE_CALL = "await charge(amount=30)\nt = ()\nfor i in range(1_000_000):\n    t = (t,)\nhash(t)\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "kind", "seconds", "charged"),
    [(STUCK_AFTER_TWO_CALLS, "timeout", 1.0, [10, 20]), (CRASH_AFTER_ONE_CALL, "crashed", 20.0, [30])],
    ids=["killed_at_its_deadline", "crashed"],
)
async def test_a_killed_or_crashed_workers_run_still_counts_the_calls_the_host_made(
    code: str, kind: str, seconds: float, charged: list[int]
) -> None:
    """The host ran those calls, side effects and all, so the result says so, as an inline run's would."""
    ran: list[int] = []

    def charge(amount: int) -> str:
        ran.append(amount)
        return "charged"

    async with one_worker(Limits(timeout=seconds)) as sb:
        result = await run(sb, code, functions={"charge": charge})
    assert result.error is not None
    assert (result.error.kind, result.calls, result.names, ran) == (kind, len(charged), ("charge",), charged)
