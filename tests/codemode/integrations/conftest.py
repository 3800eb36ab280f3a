"""Fixtures shared by the framework adapter tests (the scripted codes are in `integration_fakes`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from codemode import CodeMode
from codemode.demo.catalog import build_demo_catalog

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@pytest.fixture
def anyio_backend() -> str:
    """The frameworks run on asyncio."""
    return "asyncio"


@pytest.fixture
async def code_mode() -> AsyncIterator[CodeMode]:
    """A `CodeMode` over the 300-tool demo catalog, entered, with the inline sandbox (fast; no process boundary)."""
    async with CodeMode(build_demo_catalog(), isolation="inline") as cm:
        yield cm
