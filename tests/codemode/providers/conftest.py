"""Shared fixtures for the provider tests: the whole and the saved-and-resumed conversations, run once for all."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest
from provider_fakes import SAVE_AFTER, SERVERS, Conversation, FakeServer, Resumed, full_run, resume_in_new_process

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run the async tests on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
async def every_run() -> dict[str, dict[bool, tuple[Conversation, FakeServer]]]:
    """Each provider through the whole scripted conversation, plain (False) and streamed (True), all at once."""
    results: dict[str, dict[bool, tuple[Conversation, FakeServer]]] = {provider: {} for provider in SERVERS}

    async def one(provider: str, stream: bool) -> None:
        results[provider][stream] = await full_run(provider, stream=stream)

    async with anyio.create_task_group() as group:
        for provider in SERVERS:
            for stream in (False, True):
                group.start_soon(one, provider, stream)
    return results


@pytest.fixture
def runs(
    request: pytest.FixtureRequest, every_run: dict[str, dict[bool, tuple[Conversation, FakeServer]]]
) -> dict[bool, tuple[Conversation, FakeServer]]:
    """The test module's provider (its `PROVIDER`) through the whole conversation, plain and streamed."""
    return every_run[request.module.PROVIDER]


@pytest.fixture(params=[False, True], ids=["plain", "streamed"])
def run(
    request: pytest.FixtureRequest, runs: dict[bool, tuple[Conversation, FakeServer]]
) -> tuple[Conversation, FakeServer]:
    """One of the two whole conversations."""
    return runs[request.param]


@pytest.fixture(scope="session")
async def resumed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Resumed]:
    """Each provider's conversation saved after five requests and continued in a new process, all at once."""
    results: dict[str, Resumed] = {}

    async def resume(provider: str, folder: Path) -> None:
        first, first_server = await full_run(provider, stream=False, max_requests=SAVE_AFTER)
        bodies, final = await resume_in_new_process(provider, first, folder)
        results[provider] = (first_server.bodies, bodies, final)

    async with anyio.create_task_group() as group:
        for provider in SERVERS:
            group.start_soon(resume, provider, tmp_path_factory.mktemp(provider))
    return results
