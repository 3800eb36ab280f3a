"""The host's checks on what a worker process sends: a worker is never taken on trust.

Code that gets past the policy holds its worker and can write any frame. So the host checks a `done` frame's result
against the run's limits with the same rules and words as the worker's own checks (`sandbox._runtime.runner` for the
value, `sandbox._runtime.builtins` for printed output, `sandbox._runtime.variables` for kept variables), and admits
`call` frames as they arrive: one past `Limits.calls` ends the run and the worker, and while many calls are outstanding
the host stops reading the pipe, so what it holds for a worker stays bounded however fast the worker writes.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import anyio

from sandbox._shared.budgets import keep_values, result_size_error, valid_name
from sandbox._shared.frames import MAX_FRAME
from sandbox._shared.hostcall import MAX_NAME
from sandbox.jsonvalue import NotJsonError, check_json
from sandbox.limits import MARKER_SLACK, calls_message, cut_middle
from sandbox.result import RunError, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from sandbox.jsonvalue import JsonValue
    from sandbox.limits import Limits

_MAX_TEXT = 8 * 1024
"""Characters of an error's message or traceback kept from a worker (the worker's own are shorter)."""
_MAX_TYPE_NAME = 200
"""Characters of an error's `type_name` kept from a worker (its own are at most 100 and a short marker)."""
_MAX_REASON = 500
"""Characters of a dropped variable's reason kept from a worker."""
KILL_GRACE = 1.0
"""Seconds past a run's timeout the host waits before it kills the worker still busy with it."""


def checked_result(
    result: RunResult, *, limits: Limits, keeps: bool, reserved: Iterable[str]
) -> tuple[RunResult, bool]:
    """`result` as the run's limits allow it, and whether the worker had sent anything past them.

    Args:
        result: What the worker's `done` frame says.
        limits: The run's limits.
        keeps: Whether the run was given `variables=` (only then can it leave any).
        reserved: The names no kept variable may take (the run's host functions and error names).
    """
    error, lied = _checked_error(result.error)
    counts, lied_counts = _checked_counts(result, limits)
    lied = lied or lied_counts
    stdout = result.stdout
    if len(stdout) > limits.output + MARKER_SLACK:  # the worker keeps at most that much, its marker included
        stdout, lied = cut_middle(stdout, limits.output), True
    value = result.value
    if error is not None:
        lied, value = lied or value is not None, None
    elif not _small_scalar(value, limits.result):
        try:  # the worker's own rules for a value (depth, values, int size), then the size
            value = check_json(value)
        except (NotJsonError, RecursionError) as problem:
            error = RunError(kind="runtime", message=f"the returned {problem}", type_name="TypeError")
        else:
            error = result_size_error(value, limits.result)
        if error is not None:
            lied, value = True, None
    variables: dict[str, JsonValue] | None = None
    dropped: dict[str, str] = {}
    if keeps and result.variables is not None:
        variables, dropped = keep_values(result.variables, budget=limits.variables, skip=reserved)
        lied = lied or variables != result.variables
    told = [
        (name, reason[:_MAX_REASON])
        for name, reason in (result.dropped_variables.items() if keeps else ())
        if valid_name(name)
        and len(name) <= MAX_NAME
        and name not in dropped
        and variables is not None
        and name not in variables
    ]
    if told:
        lied = lied or len(told) > _most_names(limits)
        dropped.update(told[: _most_names(limits)])
    lied = lied or (not keeps and (result.variables is not None or bool(result.dropped_variables)))
    kept = value is result.value and stdout is result.stdout and error is result.error and not lied_counts
    if kept and variables is result.variables and dropped == result.dropped_variables:
        return result, lied  # nothing to cut (a scalar value, say): the result as it came
    checked = dataclasses.replace(
        result, value=value, stdout=stdout, error=error, variables=variables, dropped_variables=dropped, **counts
    )
    return checked, lied


def _small_scalar(value: object, limit: int) -> bool:
    """Whether `value` is None, a bool or an int of at most 18 digits, and `limit` at least their 19 characters.

    Such a value passes the worker's rules for a value as it is, and its JSON cannot be over `limit`.
    """
    kind = type(value)
    return limit >= _SMALL_JSON and (
        value is None or kind is bool or (kind is int and -_SMALL_INT < value < _SMALL_INT)  # type: ignore[operator]
    )


_SMALL_INT = 10**18
_SMALL_JSON = 19
"""Characters of the longest JSON of a `_small_scalar`: `-999999999999999999`."""


def _checked_counts(result: RunResult, limits: Limits) -> tuple[dict[str, Any], bool]:
    """`calls`, `duration`, `names` and `assigned` within what the run could have made, and whether any was not."""
    calls = min(result.calls, limits.calls)
    duration = min(result.duration, limits.timeout + KILL_GRACE)  # the host stops a run at that
    names = _cut(result.names, _short_label, limits.calls)
    assigned = _cut(result.assigned, _short_name, _most_names(limits))
    lied = (calls, duration, names, assigned) != (result.calls, result.duration, result.names, result.assigned)
    return {"calls": calls, "duration": duration, "names": names, "assigned": assigned}, lied


def _cut(names: tuple[str, ...], fits: Callable[[str], bool], most: int) -> tuple[str, ...]:
    """The first `most` of `names` that fit: `names` itself when that is all of them."""
    if len(names) <= most and all(map(fits, names)):
        return names
    return tuple(name for name in names if fits(name))[:most]


def _short_label(name: str) -> bool:
    """Whether `name` can be a call's label a worker reports (`function` or `namespace.function`)."""
    return len(name) <= 2 * MAX_NAME + 1


def _short_name(name: str) -> bool:
    """Whether `name` can be a top-level variable's name a worker reports: an identifier of a bounded length."""
    return name.isidentifier() and len(name) <= MAX_NAME


def _most_names(limits: Limits) -> int:
    """The most top-level names a run can leave (each takes two characters of its source or given variables)."""
    return (limits.source + limits.variables) // 2


def _checked_error(error: RunError | None) -> tuple[RunError | None, bool]:
    """The error with its texts cut to what a worker writes; the kind is checked when the frame is read."""
    if error is None:
        return None, False
    type_name = error.type_name
    if (
        len(error.message) <= _MAX_TEXT
        and len(error.traceback) <= _MAX_TEXT
        and (type_name is None or len(type_name) <= _MAX_TYPE_NAME)
    ):
        return error, False
    return dataclasses.replace(
        error,
        message=error.message[:_MAX_TEXT],
        traceback=error.traceback[:_MAX_TEXT],
        type_name=None if type_name is None else type_name[:_MAX_TYPE_NAME],
    ), True


class CallsOverError(Exception):
    """A worker sent more `call` frames in one run than `Limits.calls` allows: its own cap did not hold."""

    def __init__(self, calls: int) -> None:
        super().__init__(
            f"{calls_message(calls)} (the worker process sent more calls than its own limit lets through, "
            "so it was replaced)"
        )


class HeldBytes:
    """The bytes of call frames the host holds for all the runs of one sandbox, against one budget.

    Each run's `Admission` already bounds what one run makes the host hold; with many runs in flight at once
    (`max_runs`), this bounds their sum: past the budget, a run that already holds a call reads no more frames
    until the host has answered some call, of any run. A run that holds nothing may always read one more, so every
    run goes on.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0
        self.waiting: set[Admission] = set()
        """The runs waiting for room, woken when any run's call has its outcome."""

    @property
    def full(self) -> bool:
        """Whether the runs together hold the whole budget."""
        return self.held >= self.budget

    def add(self, size: int) -> None:
        """A run took in a call frame of `size` bytes."""
        self.held += size

    def remove(self, size: int) -> None:
        """A call of `size` bytes has its outcome: the runs waiting for room may read again."""
        self.held -= size
        if not self.full:
            for admission in list(self.waiting):
                admission.wake()


class Admission:
    """How many of a run's calls the host holds, and whether it may read another frame now.

    A worker whose code is honest never has more than `concurrent_calls` calls out, except calls its code
    stopped waiting for (`asyncio.wait_for`): those still run on the host. So up to twice that many, or one
    frame's worth of bytes, are held before the host stops reading; a `done` frame behind them waits too. With
    `shared`, the bytes also count against the sandbox's budget for all its runs (`HeldBytes`).
    """

    def __init__(self, limits: Limits, shared: HeldBytes | None = None) -> None:
        self.max_calls = limits.calls
        self.max_held = 2 * max(limits.concurrent_calls, 1)
        self.count = 0
        self.held = 0
        self.held_bytes = 0
        self._shared = shared
        self._room: anyio.Event | None = None
        """What the reader waits on while the host holds as many calls as it may (made only then)."""

    @property
    def full(self) -> bool:
        """Whether the host holds as many calls as it may: it reads no more frames until one has its outcome."""
        if self.held >= self.max_held or self.held_bytes >= MAX_FRAME:
            return True
        return self.held > 0 and self._shared is not None and self._shared.full

    def admit(self, size: int) -> None:
        """Count a `call` frame of `size` bytes; `CallsOverError` past the run's call limit."""
        self.count += 1
        if self.count > self.max_calls:
            raise CallsOverError(self.max_calls)
        self.held += 1
        self.held_bytes += size
        if self._shared is not None:
            self._shared.add(size)

    def release(self, size: int) -> None:
        """A held call has its outcome: the host may read again."""
        self.held -= 1
        self.held_bytes -= size
        if self._shared is not None:
            self._shared.remove(size)
        self.wake()

    def wake(self) -> None:
        """Let the reader go on if it waits and there is room now."""
        if self._room is not None and not self.full:
            self._room.set()
            self._room = None

    async def room(self) -> None:
        """Wait until the host may read another frame."""
        while self.full:
            self._room = anyio.Event()
            if self._shared is not None:
                self._shared.waiting.add(self)
            try:
                await self._room.wait()
            finally:
                if self._shared is not None:
                    self._shared.waiting.discard(self)

    def close(self) -> None:
        """The run is over: whatever it still holds goes back to the sandbox's budget."""
        shared, self._shared = self._shared, None
        if shared is not None:
            shared.remove(self.held_bytes)


HELD_BYTES = 4 * MAX_FRAME
"""Bytes of call frames the host holds for all the runs of one sandbox at once (256 MiB), beyond one call per run."""
