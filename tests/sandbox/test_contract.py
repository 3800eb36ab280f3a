"""The sandbox's public contract: host functions, JSON-only crossings, errors as results, limits, run processes."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest
from confinement_kit import descendants

import sandbox
from sandbox import FunctionError, Limits, Namespace, RunResult, Sandbox, SandboxClosedError, SandboxError
from sandbox._host.dispatch import Dispatcher
from sandbox._shared.hostcall import HostFailure

if TYPE_CHECKING:
    from sandbox import HostFunction
    from sandbox._host.process import RunProcess

ISOLATIONS = ["inline", "process"]
both = pytest.mark.parametrize("isolation", ISOLATIONS)


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


# -- the public surface ----------------------------------------------------------------------------------------


def test_public_names_are_pinned() -> None:
    """`sandbox` exports exactly its public names, sorted."""
    assert sandbox.__all__ == [
        "Confinement",
        "ConfinementError",
        "ErrorKind",
        "FunctionError",
        "HostFunction",
        "Isolation",
        "JsonObject",
        "JsonText",
        "JsonValue",
        "Layers",
        "Limits",
        "Namespace",
        "RunError",
        "RunResult",
        "Sandbox",
        "SandboxClosedError",
        "SandboxError",
    ]


def test_limits_have_the_documented_defaults() -> None:
    """Defaults: 30 s, 256 MiB, 1 MiB output kept of 8 MiB printed, 1,000 calls (32 at once), 256 KiB code, 1 MiB."""
    limits = Limits()
    assert (limits.timeout, limits.memory, limits.output, limits.flood) == (
        30.0,
        256 * 1024 * 1024,
        1024**2,
        8 * 1024**2,
    )
    assert (limits.calls, limits.concurrent_calls) == (1000, 32)
    assert (limits.source, limits.result) == (256 * 1024, 1024 * 1024)
    assert Limits.from_json(limits.to_json()) == limits


@both
async def test_results_survive_a_json_round_trip(sb: Sandbox) -> None:
    """A run result, failed or not, is plain data that rebuilds to an equal result."""
    for code in ("print('hi')\nreturn [1, {'a': None}]", "{}['missing']"):
        result = await sb.run(code)
        assert RunResult.from_json(result.to_json()) == result


# -- values, output, errors ------------------------------------------------------------------------------------


@both
async def test_return_final_expression_and_print_give_value_and_stdout(sb: Sandbox) -> None:
    """`return x` and a final bare expression give the value; `print` goes to stdout; no value is None."""
    returned = await sb.run("print('a', 1)\nreturn {'x': (1, 2)}")
    assert (returned.value, returned.stdout, returned.ok) == ({"x": [1, 2]}, "a 1\n", True)
    final = await sb.run("x = 20\nx + 1")
    assert final.value == 21
    nothing = await sb.run("x = 1")
    assert nothing.ok
    assert nothing.value is None


@both
async def test_a_runtime_error_is_a_result_with_type_name_and_line(sb: Sandbox) -> None:
    """An uncaught exception gives kind `runtime`, its class name, and the model's line."""
    result = await sb.run("x = 1\ny = {}\nreturn y['missing']")
    assert result.error is not None
    assert (result.error.kind, result.error.type_name, result.error.line) == ("runtime", "KeyError", 3)
    assert "missing" in result.error.message


@both
async def test_error_line_points_at_the_models_line(sb: Sandbox) -> None:
    """Syntax, forbidden and runtime errors (inner frames too) name the line in the model's code."""
    cases = {
        "x = 1\ny = (\n": ("syntax", {2, 3}),
        "x = 1\nreturn ().__class__.__base__\n": ("forbidden", {2}),
        "x = 1\nname = '__redu' + 'ce_ex__'\nreturn getattr(1, name)\n": ("forbidden", {3}),
        "def f(n):\n    return 1 / n\n\nf(0)\n": ("runtime", {2}),
    }
    for code, (kind, lines) in cases.items():
        result = await sb.run(code)
        assert result.error is not None, code
        assert result.error.kind == kind, (code, result.error)
        assert result.error.line in lines, (code, result.error)


@both
async def test_traceback_shows_only_the_models_frames(sb: Sandbox) -> None:
    """The traceback names the model's functions and lines, and no host or sandbox file."""
    code = dedent(
        """
        def inner(d):
            return d["missing"]

        def outer():
            return inner({})

        outer()
        """
    )
    result = await sb.run(code)
    assert result.error is not None
    traceback = result.error.traceback
    assert "inner" in traceback
    assert "outer" in traceback
    assert "line 2" in traceback
    assert "line 5" in traceback
    for host_marker in ("sandbox/", ".py", 'File "/', "site-packages", "RestrictedPython", "asyncio"):
        assert host_marker not in traceback, traceback
        assert host_marker not in result.error.message, result.error.message


@both
async def test_a_host_exception_shows_only_its_class_name_and_message(sb: Sandbox) -> None:
    """A host function's exception reaches the model as its class name and message, without host frames."""

    class Carrier(Exception):
        def __init__(self) -> None:
            super().__init__("the database is down")
            self.secret = "HOST-ONLY"

    def fail() -> object:
        raise Carrier

    result = await sb.run("x = 1\nawait fail()", functions={"fail": fail})
    assert result.error is not None
    assert (result.error.kind, result.error.type_name, result.error.line) == ("runtime", "Carrier", 2)
    assert "the database is down" in result.error.message
    shown = result.error.message + result.error.traceback
    assert "HOST-ONLY" not in shown
    assert "test_contract" not in shown
    caught = await sb.run(
        "try:\n    await fail()\nexcept Exception as e:\n    return [str(e), hasattr(e, 'secret')]",
        functions={"fail": fail},
    )
    assert caught.value == ["the database is down", False]


@both
async def test_a_host_value_error_is_catchable_as_value_error(sb: Sandbox) -> None:
    """Host exceptions of builtin classes can be caught by that class."""

    def fail() -> object:
        raise ValueError("bad city")

    code = "try:\n    await fail()\nexcept ValueError as e:\n    return 'caught ' + str(e)"
    result = await sb.run(code, functions={"fail": fail})
    assert result.value == "caught bad city"


@both
async def test_a_host_key_error_reads_as_python_s_own(sb: Sandbox) -> None:
    """A host `KeyError` reaches the code with the key itself, so `str(e)` is quoted once, as in CPython."""

    def lookup(key: str) -> object:
        raise KeyError({"k": "k", "five": 5, "msg": "no user 'ann'"}[key])

    code = (
        "out = []\nfor key in ['k', 'five', 'msg']:\n    try:\n        await lookup(key)\n"
        "    except KeyError as e:\n        out.append([str(e), e.args[0]])\nreturn out"
    )
    result = await sb.run(code, functions={"lookup": lookup})
    assert result.error is None, result.error
    assert result.value == [["'k'", "k"], ["5", 5], ["\"no user 'ann'\"", "no user 'ann'"]]


# -- host functions --------------------------------------------------------------------------------------------


@both
async def test_sync_and_async_host_functions_are_awaited(sb: Sandbox) -> None:
    """Sync and async host functions both appear as awaitables, with positional and keyword arguments."""

    def add(a: int, b: int) -> int:
        return a + b

    async def mul(a: int, b: int) -> int:
        await anyio.lowlevel.checkpoint()
        return a * b

    result = await sb.run(
        "return [await add(1, 2), await add(a=3, b=4), await mul(5, b=6)]", functions={"add": add, "mul": mul}
    )
    assert result.error is None, result.error
    assert result.value == [3, 7, 30]
    assert result.calls == 3


@both
async def test_result_calls_counts_host_calls(sb: Sandbox) -> None:
    """`result.calls` is the number of host calls the run made, failed ones included."""

    def echo(x: object = None) -> object:
        return x

    def fail() -> object:
        raise FunctionError("nope")

    code = "for i in range(4):\n    await echo(x=i)\ntry:\n    await fail()\nexcept Exception:\n    pass"
    result = await sb.run(code, functions={"echo": echo, "fail": fail})
    assert result.error is None, result.error
    assert result.calls == 5


@both
async def test_gathered_calls_run_concurrently_on_the_host(sb: Sandbox) -> None:
    """Twenty gathered calls are all in flight at once: each waits until all twenty have started."""
    started = 0
    everyone_started = anyio.Event()

    async def barrier(i: int) -> int:
        nonlocal started
        started += 1
        if started == 20:
            everyone_started.set()
        with anyio.fail_after(10):
            await everyone_started.wait()
        return i

    code = "import asyncio\nreturn await asyncio.gather(*[barrier(i=i) for i in range(20)])"
    result = await sb.run(code, functions={"barrier": barrier}, limits=Limits(timeout=20.0))
    assert result.error is None, result.error
    assert result.value == list(range(20))


@both
async def test_concurrent_calls_limit_caps_calls_in_flight(sb: Sandbox) -> None:
    """With `Limits(concurrent_calls=2)`, at most two host calls are in flight, and two are."""
    in_flight = 0
    peak = 0
    two_in_flight = anyio.Event()

    async def work(i: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight >= 2:
            two_in_flight.set()
        with anyio.move_on_after(5):
            await two_in_flight.wait()
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        in_flight -= 1
        return i

    code = "import asyncio\nreturn await asyncio.gather(*[work(i=i) for i in range(10)])"
    limits = Limits(timeout=20.0, concurrent_calls=2)
    result = await sb.run(code, functions={"work": work}, limits=limits)
    assert result.error is None, result.error
    assert result.value == list(range(10))
    assert peak == 2


FORGOT_AWAIT = {
    "returned": "return echo(x=1)",
    "indexed": "r = echo(x=1)\nreturn r['x']",
    "printed": "print(echo(x=1))",
    "in_an_fstring": "r = echo(x=1)\nreturn f'got {r}'",
    "tested": "if echo(x=1):\n    return 1",
    "discarded": "echo(x=1)\nreturn 2",
}


@both
@pytest.mark.parametrize("code", FORGOT_AWAIT.values(), ids=FORGOT_AWAIT.keys())
async def test_calling_without_await_gives_a_one_line_fix_it(sb: Sandbox, code: str) -> None:
    """A host call used without `await` fails the run with a one-line message saying to add `await`."""

    def echo(x: object) -> object:
        return {"x": x}

    result = await sb.run(code, functions={"echo": echo})
    assert result.error is not None, (result.value, result.stdout)
    assert result.error.kind == "runtime"
    assert "await" in result.error.message
    assert "\n" not in result.error.message.strip()
    assert "<coroutine" not in result.stdout + result.error.message


@both
async def test_function_error_becomes_an_exception_the_code_can_catch_by_name(sb: Sandbox) -> None:
    """`FunctionError(type_name="ToolError")` is `except ToolError` (with `error_names`) and `except Exception`."""

    def lookup(city: str) -> object:
        raise FunctionError(f"no city {city!r}", type_name="ToolError")

    code = dedent(
        """
        results = []
        try:
            await lookup(city="Atlantis")
        except ToolError as e:
            results.append(["named", str(e)])
        try:
            await lookup(city="Mu")
        except Exception as e:
            results.append(["generic", str(e), isinstance(e, ToolError)])
        return results
        """
    )
    result = await sb.run(code, functions={"lookup": lookup}, error_names=("ToolError",))
    assert result.error is None, result.error
    assert result.value == [["named", "no city 'Atlantis'"], ["generic", "no city 'Mu'", True]]


@both
async def test_error_names_can_be_caught_before_any_was_raised(sb: Sandbox) -> None:
    """A name in `error_names` exists from the start, so an `except` clause naming it is valid at once."""

    def ok() -> object:
        return "fine"

    code = "try:\n    return await ok()\nexcept ToolError:\n    return 'never'"
    result = await sb.run(code, functions={"ok": ok}, error_names=("ToolError",))
    assert result.value == "fine"


@both
async def test_uncaught_function_error_reports_its_type_name_and_message(sb: Sandbox) -> None:
    """An uncaught `FunctionError` fails the run with its type name, its message and the call's line."""

    def lookup(city: str) -> object:
        raise FunctionError("quota exceeded, retry tomorrow", type_name="ToolError")

    result = await sb.run("x = 1\nawait lookup(city='Paris')", functions={"lookup": lookup})
    assert result.error is not None
    assert (result.error.kind, result.error.type_name, result.error.line) == ("runtime", "ToolError", 2)
    assert "quota exceeded, retry tomorrow" in result.error.message


# -- namespaces -------------------------------------------------------------------------------------------------


def registry_namespace() -> tuple[Namespace, dict[str, HostFunction]]:
    """A namespace over a registry that a host function can grow during a run."""
    registry: dict[str, HostFunction] = {}

    def resolve(name: str) -> HostFunction:
        if name not in registry:
            raise FunctionError(f"no tool {name!r}", type_name="LookupError")
        return registry[name]

    def register(name: str) -> str:
        registry[name] = lambda **kwargs: {"tool": name, "kwargs": kwargs}
        return name

    registry["register"] = register
    return Namespace(resolve, names=lambda: sorted(registry)), registry


@both
async def test_namespace_resolves_names_at_call_time(sb: Sandbox) -> None:
    """Names added during a run work through `tools.name`, `tools["name"]` and `getattr(tools, name)`."""
    tools, _ = registry_namespace()
    code = dedent(
        """
        name = await tools.register(name="late_tool")
        a = await tools.late_tool(x=1)
        b = await tools["late_tool"](x=2)
        c = await getattr(tools, name)(x=3)
        return [a, b, c]
        """
    )
    result = await sb.run(code, functions={"tools": tools})
    assert result.error is None, result.error
    assert result.value == [{"tool": "late_tool", "kwargs": {"x": n}} for n in (1, 2, 3)]


@both
async def test_namespace_unknown_name_is_a_catchable_error(sb: Sandbox) -> None:
    """An unknown name fails the call with the resolver's message; the code can catch it and go on."""
    tools, _ = registry_namespace()
    code = "try:\n    await tools.nothing_here()\nexcept LookupError as e:\n    return str(e)"
    result = await sb.run(code, functions={"tools": tools})
    assert result.error is None, result.error
    assert result.value == "no tool 'nothing_here'"


@both
async def test_a_namespace_name_past_the_bound_is_refused_before_the_resolver_sees_it(sb: Sandbox) -> None:
    """A 100,000-character name, by attribute or subscript: refused in the sandbox, quoted short; never resolved."""
    asked: list[int] = []

    def resolve(name: str) -> HostFunction:
        asked.append(len(name))
        raise FunctionError("no such tool", type_name="LookupError")

    code = dedent(
        """
        name = "ab" * 50_000
        seen = []
        for lookup in (lambda: tools[name], lambda: getattr(tools, name)):
            try:
                lookup()
            except (KeyError, AttributeError) as e:
                seen.append([type(e).__name__, e.args[0]])
        return seen
        """
    )
    result = await sb.run(code, functions={"tools": Namespace(resolve)})
    refused = f"`tools` has no name {'ab' * 20!r}... (100,000 characters): names are at most 256"
    assert (result.error, result.value) == (None, [["KeyError", refused], ["AttributeError", refused]])
    assert asked == []


def test_the_hosts_dispatcher_refuses_a_long_namespace_name_a_worker_sends() -> None:
    """A forged call frame's 100,000-character name is refused by the host before the namespace resolves it."""
    asked: list[str] = []
    dispatcher = Dispatcher({"tools": Namespace(asked.append)}, Limits(), limit=True)  # type: ignore[arg-type]
    with pytest.raises(HostFailure) as refused:
        dispatcher.resolve("tools", "ab" * 50_000)
    assert (refused.value.type_name, refused.value.message) == (
        "AttributeError",
        f"`tools` has no name {'ab' * 20!r}... (100,000 characters): names are at most 256",
    )
    with pytest.raises(HostFailure) as unknown:
        dispatcher.resolve("x" * 100_000, None)
    assert unknown.value.message == f"name {'x' * 256!r} is not defined"
    assert asked == []


@both
async def test_dir_of_a_namespace_lists_its_names(sb: Sandbox) -> None:
    """`dir(tools)` in the model's code lists the namespace's names."""
    tools, registry = registry_namespace()
    registry["search"] = lambda **kwargs: []
    result = await sb.run("return sorted(dir(tools))", functions={"tools": tools})
    assert result.error is None, result.error
    assert result.value == ["register", "search"]


# -- JSON in both directions -------------------------------------------------------------------------------------


@both
async def test_arguments_and_results_are_fresh_json_copies(sb: Sandbox) -> None:
    """Tuples become lists both ways; neither side's later mutation reaches the other."""
    kept: list[object] = []
    shared = {"items": (1, 2), "nested": {"n": 0}}

    def keep(value: object) -> object:
        kept.append(value)
        return shared

    def touch() -> None:
        shared["nested"]["n"] = 99  # type: ignore[index]

    code = dedent(
        """
        mine = {"pair": (1, 2), "xs": [1]}
        got = await keep(value=mine)
        mine["xs"].append(2)
        got["nested"]["n"] = -1
        await touch()
        return [got, type(got["items"]) is list]
        """
    )
    result = await sb.run(code, functions={"keep": keep, "touch": touch})
    assert result.error is None, result.error
    assert kept == [{"pair": [1, 2], "xs": [1]}]
    assert type(kept[0]["pair"]) is list  # type: ignore[index]
    assert result.value == [{"items": [1, 2], "nested": {"n": -1}}, True]
    assert shared == {"items": (1, 2), "nested": {"n": 99}}


NON_JSON_ARGUMENTS = {
    "function": "await echo(x=lambda: 0)",
    "instance": "class P:\n    pass\nawait echo(x=P())",
    "nested_instance": "class P:\n    pass\nawait echo(x=[{'a': P()}])",
    "bytes_not_utf8": "await echo(x=b'\\xff')",
    "generator": "await echo(x=(i for i in range(3)))",
    "positional_function": "await echo(print)",
}


@both
@pytest.mark.parametrize("code", NON_JSON_ARGUMENTS.values(), ids=NON_JSON_ARGUMENTS.keys())
async def test_non_json_arguments_fail_the_call_without_reaching_the_host(sb: Sandbox, code: str) -> None:
    """A function, instance, generator or non-UTF-8 bytes argument is a runtime error; the host is never called."""
    called: list[object] = []

    def echo(*args: object, **kwargs: object) -> object:
        called.append((args, kwargs))
        return None

    result = await sb.run(code, functions={"echo": echo})
    assert result.error is not None
    assert result.error.kind == "runtime"
    assert called == []


NON_JSON_RESULTS: dict[str, object] = {
    "set": {1, 2},
    "object": object(),
    "function": len,
    "nested_object": {"a": [1, object()]},
    "int_keys": {1: "a"},
    "bytes": b"raw",
}


@both
@pytest.mark.parametrize("value", NON_JSON_RESULTS.values(), ids=NON_JSON_RESULTS.keys())
async def test_non_json_host_results_fail_the_call(sb: Sandbox, value: object) -> None:
    """A host function returning non-JSON data fails the call with a runtime error the code can catch."""

    def give() -> object:
        return value

    result = await sb.run("await give()", functions={"give": give})
    assert result.error is not None
    assert result.error.kind == "runtime"
    caught = await sb.run("try:\n    await give()\nexcept Exception:\n    return 'caught'", functions={"give": give})
    assert caught.value == "caught"


@both
async def test_a_non_json_return_value_is_a_runtime_error(sb: Sandbox) -> None:
    """Returning an object that is not JSON data fails the run with kind `runtime` and a clear message."""
    result = await sb.run("class P:\n    pass\nreturn P()")
    assert result.error is not None
    assert result.error.kind == "runtime"
    assert result.error.message


# -- limits and timeouts -----------------------------------------------------------------------------------------


@both
async def test_per_run_limits_override_the_sandbox_defaults(sb: Sandbox) -> None:
    """`run(limits=...)` applies to that run only."""
    code = "for i in range(5):\n    await echo(i=i)\nreturn 'done'"
    functions = {"echo": lambda i: i}
    tight = await sb.run(code, functions=functions, limits=Limits(timeout=5.0, calls=3))
    assert tight.error is not None
    assert tight.error.kind == "call_limit"
    loose = await sb.run(code, functions=functions)
    assert loose.value == "done"


@both
async def test_a_timed_out_run_cancels_its_host_calls(sb: Sandbox) -> None:
    """When the wall clock runs out, host calls still in flight are cancelled."""
    cancelled = anyio.Event()

    async def hang() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    result = await sb.run("await hang()", functions={"hang": hang}, limits=Limits(timeout=0.5))
    assert result.error is not None
    assert result.error.kind == "timeout"
    with anyio.fail_after(5):
        await cancelled.wait()


@both
async def test_output_over_the_limit_is_cut_in_its_middle_and_the_run_goes_on(sb: Sandbox) -> None:
    """Printing past `Limits.output` keeps the head and the tail with a count of what was cut; the run returns."""
    limits = Limits(timeout=5.0, output=1000)
    result = await sb.run("for i in range(1000):\n    print(f'{i:04}' + '#' * 45)\nreturn 'done'", limits=limits)
    assert (result.error, result.value) == (None, "done")
    lines = result.stdout.split("\n")
    head, marker, tail = lines[:10], lines[10], result.stdout[-500:]
    assert head == [f"{i:04}" + "#" * 45 for i in range(10)]
    assert marker == "[... 49,000 characters cut ...]"
    assert tail.endswith("0999" + "#" * 45 + "\n")
    assert len(result.stdout) == 1000 + len(marker) + 1


@both
async def test_a_flood_of_output_stops_the_run_keeping_what_was_printed_first(sb: Sandbox) -> None:
    """Printing past `Limits.flood` in all stops the run with `output_limit`; the head of the output is kept."""
    limits = Limits(timeout=5.0, output=1000, flood=100_000)
    result = await sb.run("print('first')\nwhile True:\n    print('#' * 50)", limits=limits)
    assert result.error is not None
    assert result.error.kind == "output_limit"
    assert result.stdout.startswith("first\n####")
    assert len(result.stdout) <= 1000 + 100


# -- lifecycle and run processes -------------------------------------------------------------------------------------


@both
async def test_running_a_sandbox_that_is_not_open_raises(isolation: str) -> None:
    """`run` before `async with` or after it raises `SandboxClosedError` (a host mistake, not a result)."""
    sb = Sandbox(isolation=isolation)  # type: ignore[arg-type]
    with pytest.raises(SandboxClosedError):
        await sb.run("return 1")
    async with sb:
        assert (await sb.run("return 1")).value == 1
    with pytest.raises(SandboxClosedError):
        await sb.run("return 1")


BREACHES = {
    "memory": ("x = bytearray(10**9)\nreturn 1", Limits(timeout=5.0, max_size=10**12), {"memory", "crashed"}),
    "redos": ("import re\nre.match('(a+)+$', 'a' * 40 + 'b')", Limits(timeout=1.0), {"timeout"}),
    "c_loop": (
        "import itertools, collections\ncollections.deque(itertools.count(), maxlen=0)",
        Limits(timeout=1.0),
        {"timeout", "crashed"},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize(("code", "limits", "kinds"), BREACHES.values(), ids=BREACHES.keys())
async def test_a_run_after_a_breached_run_works(code: str, limits: Limits, kinds: set[str]) -> None:
    """A process killed by a breach ends only its run: the same sandbox, one run at a time, runs the next normally."""
    async with Sandbox(isolation="process", max_runs=1, limits=Limits(memory=128 * 1024 * 1024)) as sb:
        breach = await sb.run(code, limits=limits)
        assert breach.error is not None
        assert breach.error.kind in kinds, breach.error
        for _ in range(3):
            after = await sb.run("return sum(range(10))")
            assert after.error is None, after.error
            assert after.value == 45


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
async def test_each_run_gets_a_process_no_other_run_used_and_none_outlives_the_sandbox() -> None:
    """Thirty sequential runs report thirty different process ids; after the sandbox closes no process is left."""
    before = descendants(os.getpid())
    pids: set[int] = set()
    sb = Sandbox(isolation="process", max_runs=2)
    assert sb._template is not None
    take = sb._template.take

    async def taken(memory: int | None = None) -> RunProcess:
        child = await take(memory)
        pids.add(child.pid)
        return child

    sb._template.take = taken  # type: ignore[method-assign]  # records each run's process
    async with sb:
        for i in range(30):
            result = await sb.run(f"return {i} * 2")
            assert result.value == i * 2
        assert len(pids) == 30
    assert descendants(os.getpid()) - before == set()


@both
async def test_runs_on_one_sandbox_may_overlap(sb: Sandbox) -> None:
    """Several runs started at once on one sandbox all complete with their own results."""
    results: dict[int, object] = {}

    async def one(i: int) -> None:
        result = await sb.run(f"import asyncio\nawait asyncio.sleep(0)\nreturn {i}")
        results[i] = result.value

    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(one, i)
    assert results == {i: i for i in range(6)}


async def test_runs_over_the_cap_wait_their_turn() -> None:
    """With `max_runs=2`, five runs waiting on a host function are never more than two at once, and all finish."""
    inside = peak = 0

    async def hold() -> int:
        nonlocal inside, peak
        inside += 1
        peak = max(peak, inside)
        await anyio.sleep(0.05)
        inside -= 1
        return 1

    async with Sandbox(isolation="process", max_runs=2) as sb:
        results: list[object] = []

        async def one() -> None:
            results.append((await sb.run("return await hold()", functions={"hold": hold})).value)

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(one)
    assert (results, peak) == ([1] * 5, 2)


@pytest.mark.slow
@pytest.mark.process
async def test_by_default_64_runs_wait_on_their_host_functions_at_once() -> None:
    """64 runs each waiting until all 64 are waiting: with the default cap they meet, each in a process of its own."""
    arrived = 0
    everyone = anyio.Event()

    async def meet() -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 64:
            everyone.set()
        with anyio.fail_after(30):
            await everyone.wait()
        return "met"

    async with Sandbox(limits=Limits(timeout=40.0)) as sb:
        results: list[object] = []

        async def one() -> None:
            results.append((await sb.run("return await meet()", functions={"meet": meet})).value)

        async with anyio.create_task_group() as group:
            for _ in range(64):
                group.start_soon(one)
    assert results == ["met"] * 64


@pytest.mark.parametrize("max_runs", [0, -1, 2.5, True])
def test_a_cap_on_runs_that_is_not_a_whole_number_of_at_least_one_is_refused(max_runs: object) -> None:
    """`Sandbox(max_runs=...)` below 1, or not an int, raises `SandboxError` (a host mistake)."""
    with pytest.raises(SandboxError):
        Sandbox(max_runs=max_runs)  # type: ignore[arg-type]  # the mistake under test
