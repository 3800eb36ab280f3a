"""The one case kit of the red-team suites: each attack, the mode(s) it runs in, and the exact outcome.

Every escape suite (`test_escapes_*.py`, `test_dunders.py`) is a table of `Case`s; its tests come from here, so
each file is its cases and one line per test (`test_x = runs(CASES, "claim")`, `works_in_cpython(CASES)`,
`names_are_unique(CASES)`). A case's expected outcome proves which layer stopped it:

- `policy(fragment)`: refused at compile time by the policy (kind `forbidden`, no exception type);
- `guard(fragment)`: refused at run time by a guard (kind `forbidden`, `ForbiddenError`);
- `raised(type_name, fragment)`: a plain Python error of that type (the facade offers no such name, a type check
  of the sandbox refused the value, the code's own exception);
- `limit(kind, fragment)`: a limit ended the run (`timeout`, `memory`, `call_limit`, `output_limit`,
  `result_limit`, `crashed`), with `type_name` where the limit raises one;
- `Value(value, stdout=...)`: the run succeeds with exactly this value (a technique that is harmless, or a
  refusal the code itself observed and returned).

An outcome can differ by mode (`expected={"inline": ..., "process": ...}`). A known open finding carries its
reason beside its case (`still_open=`, for every mode or a mapping of mode to reason): it is a strict xfail, so
a fix shows up as an XPASS. `check` also asserts, for every case, that nothing of the host shows (its secret, or
the `PWNED` marker payloads build at run time as `"PW" + "NED"`), that host functions received only plain JSON,
that error text stays short, and that the sandbox runs the next script normally. Cases marked `control=True`
are real attacks: `assert_works_in_cpython` runs them in a plain interpreter to prove the sandbox, not a typo,
is what stops them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from sandbox import FunctionError, Limits, Namespace

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Mapping
    from pathlib import Path

    from sandbox import RunResult, Sandbox

BOTH = ("inline", "process")
INLINE = ("inline",)
PROCESS = ("process",)
MiB = 1024 * 1024
MAX_MESSAGE = 2000
"""Characters an error message may have: the model reads it."""
MAX_ERROR_TEXT = 64 * 1024
"""Characters of error message plus traceback a run may hand back."""
SECRET_NAME = "SANDBOX_TEST_SECRET"
"""The host environment variable that conftest's `host_secret` fixture fills."""

QUICK = Limits(timeout=5.0, operations=300_000, output=10_000, flood=10_000, max_size=1_000_000)
"""Most cases: an operation budget ends loops in milliseconds; `max_size` is 1,000,000; the wall clock is a
backstop generous enough for a loaded machine."""
WALL = Limits(timeout=0.5, operations=10**12, max_size=1_000_000)
"""Cases only the wall clock can end (sleeps, C-level work, ticks that do not run out)."""
BIG = Limits(timeout=5.0, memory=128 * MiB)
"""Real bombs with the default size guard, in a worker process only."""
RAW_MEMORY = Limits(timeout=10.0, memory=64 * MiB, max_size=10**12, operations=10**12)
"""Memory bombs that only the worker's address-space limit can stop."""
CALLS = Limits(timeout=30.0, calls=1000, operations=10**9)
"""Host-call floods: the call limit ends them; the wall clock is far enough away for a loaded machine."""
WALL_UNSIZED = Limits(timeout=0.5, operations=10**12, max_size=10**12)
"""Process-only cases that only the worker's wall clock or address-space limit can stop."""
RESULT = Limits(timeout=5.0, result=100_000)
"""A returned value may be 100,000 characters of JSON."""
BUDGET = Limits(timeout=30.0, operations=1_000_000)
"""The default size cap (10,000,000) and a budget of a million operations; the wall clock is far away."""


@dataclass(frozen=True)
class Value:
    """The run succeeds and returns exactly `value` (and, when given, prints exactly `stdout`)."""

    value: Any
    stdout: str | None = None


@dataclass(frozen=True)
class Refused:
    """The run fails with `kind`, the exception class `type_name`, and a message containing `fragment`."""

    kind: str
    type_name: str | None
    fragment: str


Outcome = Value | Refused


def policy(fragment: str) -> Refused:
    """Refused at compile time by the policy."""
    return Refused("forbidden", None, fragment)


def guard(fragment: str) -> Refused:
    """Refused at run time by one of the sandbox's guards."""
    return Refused("forbidden", "ForbiddenError", fragment)


def raised(type_name: str | None, fragment: str) -> Refused:
    """The run fails with a Python exception of `type_name` (None: the sandbox's report of an exit)."""
    return Refused("runtime", type_name, fragment)


def limit(kind: str, fragment: str, type_name: str | None = None) -> Refused:
    """A limit of kind `kind` ended the run."""
    return Refused(kind, type_name, fragment)


def syntax(fragment: str) -> Refused:
    """The code does not compile."""
    return Refused("syntax", None, fragment)


@dataclass(frozen=True)
class Case:
    """One technique and its exact outcome in each mode it runs in."""

    name: str
    code: str
    expected: Outcome | Mapping[str, Outcome]
    limits: Limits = QUICK
    modes: tuple[str, ...] = BOTH
    still_open: str | Mapping[str, str] = ""
    """Why the technique still gets through (a strict xfail), for every mode or by mode."""
    control: bool = False
    """The payload succeeds in plain CPython (checked by `assert_works_in_cpython`)."""
    then: tuple[str, Any] | None = None
    """A second run in the same sandbox and the value it must return: it sees nothing of the first."""
    slow: bool = False
    """The case takes about two seconds or more (a worker killed at its deadline, after the host's grace)."""

    def outcome(self, mode: str) -> Outcome:
        """The expected outcome in `mode`."""
        if isinstance(self.expected, Value | Refused):
            return self.expected
        return self.expected[mode]

    def open_reason(self, mode: str) -> str:
        """The strict-xfail reason in `mode`, or `""`."""
        if isinstance(self.still_open, str):
            return self.still_open
        return self.still_open.get(mode, "")


def case(name: str, code: str | tuple[str, ...], expected: Outcome | Mapping[str, Outcome], **kwargs: Any) -> Case:
    """A case whose code is one piece of source, or several joined, each dedented on its own."""
    pieces = (code,) if isinstance(code, str) else code
    source = "".join(textwrap.dedent(piece).strip("\n") + "\n" for piece in pieces)
    return Case(name, source, expected, **kwargs)


def open_marks(reason: str) -> list[pytest.MarkDecorator]:
    """The strict xfail of a finding still open for `reason`; none when the reason is empty."""
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def params(cases: list[Case]) -> list[Any]:
    """Each case once per mode it runs in, named `<case>-<mode>`, a strict xfail where it is still open."""
    return [
        pytest.param(
            c,
            mode,
            id=f"{c.name}-{mode}",
            marks=[*open_marks(c.open_reason(mode)), *([pytest.mark.slow] if c.slow else [])],
        )
        for c in cases
        for mode in c.modes
    ]


def controls(cases: list[Case]) -> list[Any]:
    """The cases that are real attacks in plain CPython, once each."""
    return [pytest.param(c, id=c.name) for c in cases if c.control]


def assert_unique(cases: list[Case]) -> None:
    """Each case has its own name, so a test id names one technique."""
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


# -- the host side -------------------------------------------------------------------------------------------------


class Carrier:
    """A host object with a secret on it; it must never reach the model's code."""

    def __init__(self, secret: str) -> None:
        self.secret = secret


class CarrierError(Exception):
    """A host exception with a neutral message and a secret on an attribute."""

    def __init__(self, secret: str) -> None:
        super().__init__("the host failed")
        self.secret = secret
        self.carrier = Carrier(secret)


class HostKit:
    """The host functions every case sees, recording each value the sandbox hands them.

    `echo` returns what it got (and carries the secret as bait, on an attribute and in its docstring); the `leak_*`
    and `raise_*` functions try to hand host objects in; `hang` never returns; `boom` fails; `tools` is a namespace
    that resolves `echo` and `lookup` (both to `echo`).
    """

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: list[object] = []

    def functions(self) -> dict[str, Any]:
        """The functions one run sees."""
        secret = self.secret

        async def echo(*args: object, **kwargs: object) -> object:
            self.received.extend(args)
            self.received.extend(kwargs.values())
            return {"args": list(args), "kwargs": kwargs}

        echo.secret = secret  # type: ignore[attr-defined]  # bait for attribute walks on the proxy
        echo.__doc__ = f"echo, with {secret} in its docstring"

        async def leak_future() -> object:
            import asyncio  # the host's own loop, only where this bait runs

            return asyncio.get_running_loop().create_future()

        def raise_(exc: BaseException) -> Any:
            def fail() -> object:
                raise exc

            return fail

        def boom() -> object:
            raise ValueError("the host failed")

        boom.__doc__ = secret

        def resolve(name: str) -> object:
            if name in ("echo", "lookup"):
                return echo
            raise FunctionError(f"no function {name!r}", type_name="LookupError")

        chained = RuntimeError("outer failure")
        chained.__cause__ = CarrierError(secret)
        return {
            "echo": echo,
            "leak_object": lambda: Carrier(secret),
            "leak_nested": lambda: {"ok": [1, Carrier(secret)]},
            "leak_set": lambda: {1, 2},
            "leak_function": lambda: lambda: Carrier(secret),
            "leak_future": leak_future,
            "raise_carrier": raise_(CarrierError(secret)),
            "raise_object_arg": raise_(ValueError(Carrier(secret))),
            "raise_chained": raise_(chained),
            "hang": anyio.sleep_forever,
            "boom": boom,
            "tools": Namespace(resolve),
        }


def is_plain_json(value: object) -> bool:
    """Whether `value` is made only of exact JSON types."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) is list:
        return all(is_plain_json(item) for item in value)
    if type(value) is dict:
        return all(type(k) is str and is_plain_json(v) for k, v in value.items())
    return False


# -- running a case ------------------------------------------------------------------------------------------------


async def run(sb: Sandbox, code: str, **kwargs: Any) -> RunResult:
    """`sb.run`, turning anything raised out of it into a test failure (every outcome must be a result)."""
    try:
        return await sb.run(code, **kwargs)
    except BaseException as exc:  # noqa: BLE001  # even BaseException: a run must never raise into the host
        pytest.fail(f"run raised instead of returning a result: {exc!r}")


async def assert_still_works(sb: Sandbox) -> None:
    """The sandbox runs the next script normally."""
    after = await run(sb, "return 1")
    assert after.error is None, after.error
    assert after.value == 1


def assert_outcome(result: RunResult, expected: Outcome) -> None:
    """The run ended exactly as expected."""
    if isinstance(expected, Value):
        assert result.error is None, result.error
        assert result.value == expected.value
        if expected.stdout is not None:
            assert result.stdout == expected.stdout
        return
    assert result.error is not None, f"the attack ran: value={result.value!r:.300} stdout={result.stdout[:300]!r}"
    assert (result.error.kind, result.error.type_name) == (expected.kind, expected.type_name), result.error
    assert expected.fragment in result.error.message, result.error.message


def assert_nothing_leaked(result: RunResult, secret: str) -> None:
    """No host secret and no escape marker in anything the run shows; error text short."""
    texts = [json.dumps(result.value, default=repr), result.stdout]
    if result.error is not None:
        assert result.error.message
        assert len(result.error.message) <= MAX_MESSAGE, result.error.message[:300]
        assert len(result.error.message) + len(result.error.traceback) <= MAX_ERROR_TEXT
        texts += [result.error.message, result.error.traceback]
    for text in texts:
        assert secret not in text
        assert "PWNED" not in text


async def check(sb: Sandbox, c: Case, mode: str, secret: str) -> RunResult:
    """Run the case against the host kit, check its exact outcome and the after-checks, and return the result."""
    kit = HostKit(secret)
    result = await run(sb, c.code, functions=kit.functions(), limits=c.limits)
    assert_outcome(result, c.outcome(mode))
    assert_nothing_leaked(result, secret)
    assert result.calls <= c.limits.calls
    assert all(is_plain_json(value) for value in kit.received), kit.received
    if c.then is not None:
        after = await run(sb, c.then[0], limits=c.limits)
        assert after.error is None, after.error
        assert after.value == c.then[1]
    await assert_still_works(sb)
    return result


CONTROL_SERVER = """
import asyncio, json, os, sys, tempfile, textwrap, time


def run_case(source, cwd, stderr):
    # A forked child: the case runs as `python -c` would run it, its output kept out of the server's pipe.
    os.chdir(cwd)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(stderr.fileno(), 2)
    namespace = {"__name__": "__main__"}
    exec("async def __main__():\\n" + textwrap.indent(source, "    ") + "\\n    pass\\n", namespace)
    asyncio.run(namespace["__main__"]())


def wait(pid, deadline):
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.002)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "timed out"


# Out of the test's process tree: tests that inspect every process the test started see only the sandbox's.
if os.fork():
    os._exit(0)
for line in sys.stdin:
    request = json.loads(line)
    with tempfile.TemporaryFile() as stderr:
        pid = os.fork()
        if pid == 0:
            run_case(request["source"], request["cwd"], stderr)
            sys.exit(0)
        code = wait(pid, time.monotonic() + request["seconds"])
        stderr.seek(0)
        text = stderr.read().decode(errors="replace")[-2000:]
    print(json.dumps({"code": code, "stderr": text}), flush=True)
"""
"""A plain interpreter that runs each control case in a child forked from it: what a fresh `python -c` does,
without an interpreter's start-up per case. It leaves the test's process tree first."""


class PlainCPython:
    """The control server of one test session: `run` gives a case's exit code and the end of its stderr."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", CONTROL_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        # The process started forks the server and exits at once (see `CONTROL_SERVER`); the pipes stay the server's.
        self.process.wait(timeout=30)

    def run(self, source: str, cwd: Path, seconds: float = 30.0) -> tuple[int | str, str]:
        """Run `source` as the body of an async `__main__` in a fresh child; its exit code and stderr."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps({"source": source, "cwd": str(cwd), "seconds": seconds}) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        return reply["code"], reply["stderr"]

    def close(self) -> None:
        """End the server: with its stdin closed it ends its loop, and its stdout reaches its end."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.stdout.read()
        self.process.stdout.close()


async def assert_works_in_cpython(c: Case, plain: PlainCPython, tmp_path: Path) -> None:
    """Run in a plain interpreter, the payload succeeds: the sandbox is what stops it."""
    code, stderr = await anyio.to_thread.run_sync(plain.run, c.code, tmp_path)
    assert code == 0, stderr


# -- the tests of a table: each suite binds them under its own names -----------------------------------------------


def runs(cases: list[Case], claim: str) -> Callable[..., Coroutine[Any, Any, None]]:
    """The test that runs every case in each of its modes with `check`; `claim` is what the table proves."""

    @pytest.mark.parametrize(("case", "isolation"), params(cases))
    async def test(sb: Sandbox, case: Case, isolation: str, host_secret: str) -> None:
        await check(sb, case, isolation, host_secret)

    test.__doc__ = claim
    return test


def works_in_cpython(cases: list[Case]) -> Callable[..., Coroutine[Any, Any, None]]:
    """The test that runs each `control=True` case in plain CPython, where the payload must succeed."""

    @pytest.mark.parametrize("case", controls(cases))
    async def test(case: Case, plain_cpython: PlainCPython, tmp_path: Path) -> None:
        """Run in a plain interpreter, the payload succeeds: the sandbox is what stops it."""
        await assert_works_in_cpython(case, plain_cpython, tmp_path)

    return test


def names_are_unique(cases: list[Case]) -> Callable[[], None]:
    """The test that each case of the table has its own name."""

    def test() -> None:
        """Each case has its own name, so a test id names one technique."""
        assert_unique(cases)

    return test
