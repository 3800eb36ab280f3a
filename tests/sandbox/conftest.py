"""Shared fixtures for the sandbox tests: the anyio backend, a host secret, open sandboxes of both isolations, and
a plain interpreter for the red-team controls."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from redteam_kit import PlainCPython

from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

HOST_SECRET = "HOST-SECRET-0b1f6c"
"""A value the host holds (in its environment, on objects) that must never show up in a run's output."""


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run the async tests on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def host_secret() -> Iterator[str]:
    """Put a secret in the host's environment for the session; no run may ever show it."""
    previous = os.environ.get("SANDBOX_TEST_SECRET")
    os.environ["SANDBOX_TEST_SECRET"] = HOST_SECRET
    yield HOST_SECRET
    if previous is None:
        os.environ.pop("SANDBOX_TEST_SECRET", None)
    else:
        os.environ["SANDBOX_TEST_SECRET"] = previous


@pytest.fixture(scope="session")
async def sandboxes(host_secret: str) -> AsyncIterator[dict[str, Sandbox]]:
    """One open sandbox per isolation, shared by the tests of the session (of one xdist worker).

    Each run has a process of its own, so a test that needs no option of its own shares these: it saves a template's
    start-up per test file.
    """
    limits = Limits(timeout=10.0)
    async with (
        Sandbox(limits=limits, isolation="inline") as inline,
        Sandbox(limits=limits, isolation="process") as process,
    ):
        yield {"inline": inline, "process": process}


@pytest.fixture
def sb(sandboxes: dict[str, Sandbox], isolation: str) -> Sandbox:
    """The shared sandbox for the test's `isolation` parameter."""
    return sandboxes[isolation]


@pytest.fixture(scope="session")
def plain_cpython(host_secret: str) -> Iterator[PlainCPython]:
    """One plain interpreter for the session that runs each red-team control in a child of its own.

    It starts with the host's secret in its environment, for the controls that read it.
    """
    plain = PlainCPython()
    yield plain
    plain.close()
