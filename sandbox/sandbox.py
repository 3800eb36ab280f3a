"""`Sandbox`: runs model-written Python, inline or in a warm pool of worker processes.

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
from typing import TYPE_CHECKING, Literal, Self

from sandbox._budgets import valid_name
from sandbox._confine import Confinement, Layers
from sandbox._dispatch import Dispatcher
from sandbox._jsonvalue import NotJsonError, check_json
from sandbox._pool import WorkerPool
from sandbox._repeat import Repeat
from sandbox._runner import run_code
from sandbox.errors import SandboxClosedError, SandboxError
from sandbox.limits import Limits

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from types import TracebackType

    from sandbox._jsonvalue import JsonValue
    from sandbox.functions import HostFunction, Namespace
    from sandbox.result import RunResult

Isolation = Literal["process", "inline"]
"""`process`: each run in a worker process with OS limits and, on Linux, OS-level confinement (the default, and
the security boundary). `inline`: in the host's own event loop, with the same policy and cooperative limits and
no boundary at all: code that gets past the policy is the host. For trusted code and tests only."""


class Sandbox:
    """Runs untrusted Python with host functions; an async context manager that owns its workers.

    Args:
        limits: The default limits of every run.
        isolation: Where runs happen (see `Isolation`).
        workers: Worker processes kept warm (process isolation).
        confinement: How each worker confines itself (process isolation on Linux).
        fresh_workers: Give every run a worker no other run has used, replaced after it, so code that got past
            the policy cannot see or change another run. By default a worker serves the runs of this sandbox
            (and only this sandbox) one after another, and is replaced after a run that was cut off.
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        isolation: Isolation = "process",
        workers: int = 2,
        confinement: Confinement | None = None,
        fresh_workers: bool = False,
    ) -> None:
        if isolation not in ("process", "inline"):
            raise SandboxError(f"isolation must be 'process' or 'inline', not {isolation!r}")
        if workers < 1:
            raise SandboxError(f"workers must be at least 1, not {workers!r}")
        if isolation == "inline" and confinement is not None and confinement.require:
            raise SandboxError("inline isolation has no OS-level confinement to require; use isolation='process'")
        self.limits = limits or Limits()
        """The default limits of every run."""
        self.isolation: Isolation = isolation
        """Where runs happen."""
        self.confinement = confinement or Confinement()
        """How each worker process confines itself (process isolation on Linux)."""
        self._pool = (
            WorkerPool(size=workers, memory=self.limits.memory, confinement=self.confinement, fresh=fresh_workers)
            if isolation == "process"
            else None
        )
        self._open = False

    @property
    def layers(self) -> Layers:
        """The OS-level confinement runs get: the layers active in the workers, and why any other is missing."""
        if self._pool is None:
            return Layers.none("inline isolation: the code runs in the host process, with no boundary at all")
        return self._pool.layers

    async def __aenter__(self) -> Self:
        if self._pool is not None:
            await self._pool.__aenter__()
        self._open = True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the workers; the sandbox cannot run code afterwards."""
        if self._open and self._pool is not None:
            await self._pool.__aexit__(None, None, None)
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
            limits: Limits for this run; defaults to the sandbox's. In process isolation a run that may use
                more memory than the sandbox's limit gets a worker process of its own, started for it.
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
        dispatcher = Dispatcher(dict(functions or {}), limits, limit=self._pool is not None)
        names = tuple(error_names)
        repeat = Repeat(seed=seed, clock=clock) if seed is not None or clock is not None else None
        initial = None if variables is None else _checked_variables(variables, (*dispatcher.kinds(), *names))
        if self._pool is None:
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
        worker = await self._pool.lend(limits.memory)
        try:
            return await worker.run(
                code, limits=limits, dispatcher=dispatcher, error_names=names, variables=initial, repeat=repeat
            )
        finally:
            await self._pool.give_back(worker)


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
