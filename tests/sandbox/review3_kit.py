"""Shared by the third review's red-team files: a case with one exact expected outcome, checked in both modes.

An expected outcome is either a value (`Value(...)`: the run succeeds and returns exactly it) or a refusal
(`Refused(kind, type_name, fragment)`: the run fails with that error kind, that exception class name, and a
message containing the fragment). Every case then checks that the sandbox runs the next script normally.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from escape_kit import assert_still_works, run

from sandbox import Limits

if TYPE_CHECKING:
    from sandbox import RunResult, Sandbox

BOTH = ("inline", "process")
QUICK = Limits(timeout=5.0, operations=300_000, output=10_000, max_size=1_000_000)
"""An operation budget that ends loops in milliseconds; `max_size` is 1,000,000."""


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


@dataclass(frozen=True)
class Case:
    """One technique and its one expected outcome."""

    name: str
    code: str
    expected: Value | Refused
    limits: Limits = QUICK


def case(name: str, code: str | tuple[str, ...], expected: Value | Refused, **kwargs: Any) -> Case:
    """A case whose code is one piece of source, or several joined, each dedented on its own."""
    pieces = (code,) if isinstance(code, str) else code
    source = "".join(textwrap.dedent(piece).strip("\n") + "\n" for piece in pieces)
    return Case(name, source, expected, **kwargs)


def params(cases: list[Case]) -> list[Any]:
    """Each case once per isolation, named `<case>-<isolation>`."""
    return [pytest.param(c, isolation, id=f"{c.name}-{isolation}") for c in cases for isolation in BOTH]


def assert_outcome(result: RunResult, expected: Value | Refused) -> None:
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


async def check(sb: Sandbox, c: Case, **kwargs: Any) -> RunResult:
    """Run the case, check its outcome, and that the sandbox still works."""
    result = await run(sb, c.code, limits=c.limits, **kwargs)
    assert_outcome(result, c.expected)
    await assert_still_works(sb)
    return result
