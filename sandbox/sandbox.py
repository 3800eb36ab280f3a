"""`Sandbox`: runs model-written Python, inline or each run in a process of its own.

Example:
    ```python
    async def add(a: int, b: int) -> int:
        return a + b

    async with Sandbox(limits=Limits(timeout=5.0)) as sb:
        result = await sb.run("return await add(a=1, b=2)", functions={"add": add})
    assert result.value == 3
    ```
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final, Literal, Self

import anyio

from sandbox._host.dispatch import Dispatcher
from sandbox._host.distrust import HELD_BYTES, HeldBytes
from sandbox._host.template import Template
from sandbox._runtime.runner import run_code
from sandbox._shared.budgets import valid_name
from sandbox._shared.confinement import Confinement, Layers
from sandbox._shared.repeat import Repeat
from sandbox.errors import SandboxClosedError, SandboxError
from sandbox.jsonvalue import NotJsonError, check_json
from sandbox.limits import Limits

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from types import TracebackType

    from sandbox.functions import HostFunction, Namespace
    from sandbox.jsonvalue import JsonValue
    from sandbox.result import RunResult

Isolation = Literal["process", "inline"]
"""`process`: each run in a process of its own, forked from a warm template, with OS limits and, on Linux,
OS-level confinement (the default, and the security boundary). `inline`: in the host's own event loop, with the
same policy and cooperative limits and no boundary at all: code that gets past the policy is the host. For
trusted code and tests only."""


MAX_RUNS: Final = 64
"""Runs in flight at once by default: enough for 64 runs to wait on their host functions together."""


class Sandbox:
    """Runs untrusted Python with host functions; an async context manager that owns its processes.

    In process isolation every run gets a process no other run has used, which ends with the run, so code that
    got past the policy cannot see or change another run (see `docs/process-per-run.md`).

    Args:
        limits: The default limits of every run.
        isolation: Where runs happen (see `Isolation`).
        max_runs: Runs in flight at once; a run over the cap waits for one to end. In process isolation each
            costs a process (a few MB of private memory while it waits on its host functions).
        confinement: How the template and each run's process confine themselves (process isolation on Linux).
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        isolation: Isolation = "process",
        max_runs: int = MAX_RUNS,
        confinement: Confinement | None = None,
    ) -> None:
        if isolation not in ("process", "inline"):
            raise SandboxError(f"isolation must be 'process' or 'inline', not {isolation!r}")
        if type(max_runs) is not int or max_runs < 1:
            raise SandboxError(f"max_runs must be an int of at least 1, not {max_runs!r}")
        if isolation == "inline" and confinement is not None and confinement.require:
            raise SandboxError("inline isolation has no OS-level confinement to require; use isolation='process'")
        self.limits = limits or Limits()
        """The default limits of every run."""
        self.isolation: Isolation = isolation
        """Where runs happen."""
        self.confinement = confinement or Confinement()
        """How the template and each run's process confine themselves (process isolation on Linux)."""
        self.max_runs = max_runs
        """Runs in flight at once."""
        self._cap = anyio.CapacityLimiter(max_runs)
        self._held = HeldBytes(HELD_BYTES)
        """Bytes of call arguments the host holds for all the runs in flight, against one budget."""
        self._template = (
            Template(confinement=self.confinement, memory=self.limits.memory) if isolation == "process" else None
        )
        self._open = False

    @property
    def layers(self) -> Layers:
        """The OS-level confinement runs get: the layers active in their processes, and why any other is missing."""
        if self._template is None:
            return Layers.none("inline isolation: the code runs in the host process, with no boundary at all")
        return self._template.layers

    async def __aenter__(self) -> Self:
        if self._template is not None:
            await self._template.__aenter__()
        self._open = True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the template and every run process; the sandbox cannot run code afterwards."""
        if self._open and self._template is not None:
            await self._template.__aexit__(None, None, None)
        self._open = False

    async def run(
        self,
        code: str,
        *,
        functions: Mapping[str, HostFunction | Namespace] | None = None,
        limits: Limits | None = None,
        error_names: Iterable[str] = (),
        variables: Mapping[str, JsonValue] | None = None,
        seed: int | None = None,
        clock: float | None = None,
    ) -> RunResult:
        """Run `code`; every outcome, failures included, is a `RunResult`.

        Args:
            code: The model's Python source. Top-level `await` and `return` work.
            functions: Host functions (sync or async) and namespaces the code can await, by name.
            limits: Limits for this run; defaults to the sandbox's.
            error_names: Exception class names that host functions raise (through `FunctionError`) and that the
                code may name in `except` clauses before any was raised.
            variables: Keep variables across runs: these JSON values are bound as top-level names before the
                code runs, and `RunResult.variables` holds the top-level variables the run leaves that convert
                to JSON (within `Limits.variables`), ready to pass to the next run. `{}` starts keeping.
            seed: Makes the run's `random` functions and `uuid.uuid4()` repeatable: the same seed, the same values.
            clock: Seconds since the epoch that the wall clock (`time.time()`, `datetime.now()`, `date.today()`)
                reads for the whole run, so a rerun sees the same time; monotonic clocks keep running.

        Example:
            ```python
            first = await sb.run("rows = [1, 2, 3]", variables={})
            second = await sb.run("return sum(rows)", variables=first.variables)
            assert second.value == 6
            ```
        """
        if not self._open:
            raise SandboxClosedError("the sandbox is not open; use `async with Sandbox(...) as sb:`")
        limits = limits or self.limits
        dispatcher = Dispatcher(dict(functions or {}), limits, limit=self._template is not None)
        names = tuple(error_names)
        repeat = Repeat(seed=seed, clock=clock) if seed is not None or clock is not None else None
        initial = None if variables is None else _checked_variables(variables, (*dispatcher.kinds(), *names))
        async with self._cap:
            if self._template is None:
                _require_asyncio()
                return await run_code(
                    code,
                    limits=limits,
                    bridge=dispatcher,
                    functions=dispatcher.kinds(),
                    error_names=names,
                    variables=initial,
                    repeat=repeat,
                    watched=True,
                )
            child = await self._template.take(limits.memory)
            try:
                return await child.run(
                    code,
                    limits=limits,
                    dispatcher=dispatcher,
                    error_names=names,
                    variables=initial,
                    repeat=repeat,
                    held=self._held,
                )
            finally:
                await child.kill()


def _checked_variables(variables: Mapping[str, JsonValue], reserved: Iterable[str]) -> dict[str, JsonValue]:
    """A fresh JSON copy of `variables`; `SandboxError` for a name the code could not use, or a value not JSON."""
    taken = set(reserved)
    for name in variables:
        if not valid_name(name) or name in taken:
            raise SandboxError(
                f"variables: {name!r} cannot be a variable (use an identifier that is not a keyword, does not start "
                "with `_` and is not the name of a host function)"
            )
    try:
        return {name: check_json(value) for name, value in variables.items()}
    except NotJsonError as error:
        raise SandboxError(f"variables: {error}; pass plain JSON values") from None


def _require_asyncio() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise SandboxError("inline isolation runs on asyncio; use isolation='process' on other event loops") from None
