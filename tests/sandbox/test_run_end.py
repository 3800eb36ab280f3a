"""How a run ends: the host's exception stays out of it, and a stop the code caught still ends it as that stop."""

from __future__ import annotations

import textwrap

import pytest

from sandbox import Limits, Sandbox
from sandbox.limits import output_message


def dedent(code: str) -> str:
    """Source without the test file's indentation."""
    return textwrap.dedent(code).strip("\n") + "\n"


class HostError(Exception):
    """An exception the host is handling while it runs code (a retry path)."""


BARE_RAISE = dedent(
    """
    try:
        raise
    except BaseException as e:
        try:
            e.args[1]["token"] = "overwritten"
        except BaseException:
            pass
        return [type(e).__name__, str(e)]
    """
)


async def test_a_run_started_while_the_host_handles_an_exception_does_not_see_it() -> None:
    """The code's bare `raise` has no active exception, as in CPython; the host's exception is left as it was."""
    state = {"token": "sk-live-123"}
    async with Sandbox(limits=Limits(timeout=5.0), isolation="inline") as sb:
        try:
            raise HostError("db password", state)
        except HostError as exc:
            result = await sb.run(BARE_RAISE)
            caught = exc
    assert (result.error, result.value) == (None, ["RuntimeError", "No active exception to reraise"])
    assert state == {"token": "sk-live-123"}
    assert getattr(caught, "__notes__", None) is None
    assert caught.args == ("db password", state)


CATCHES_THE_STOP = dedent(
    """
    n = 0
    try:
        for i in range(10**12):
            n += 1
    except BaseException as e:
        caught = type(e).__name__
    return ["survived", n, caught]
    """
)


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_budget_stop_the_code_catches_still_ends_the_run(isolation: str) -> None:
    """Code that catches the operation budget's stop and returns gets the stop, never its value."""
    async with Sandbox(limits=Limits(timeout=10.0, operations=10_000), isolation=isolation) as sb:
        result = await sb.run(CATCHES_THE_STOP)
    assert result.value is None
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "timeout",
        "the code used its whole operation budget (an endless loop?); do less work per run",
    )


async def test_a_stop_the_code_catches_and_replaces_with_its_own_error_still_ends_the_run() -> None:
    """Code that catches the output limit's stop and raises its own error gets the output limit."""
    code = dedent(
        """
        try:
            while True:
                print("x" * 100)
        except BaseException:
            raise ValueError("all is well")
        """
    )
    async with Sandbox(limits=Limits(timeout=10.0, output=1_000), isolation="inline") as sb:
        result = await sb.run(code)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("output_limit", output_message(1_000))
