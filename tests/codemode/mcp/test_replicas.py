"""Many replicas: one conversation alternating between two real `codemode serve --stateless` processes.

Nothing is shared between the processes but what each result's `_meta["codemode/state"]` carries back to the
client, as behind a load balancer that sends every request to any replica. The conversation must go exactly as
it goes against one process: the same texts, the same announcements (once), the same kept variables.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("mcp.client")

from cli_kit import python_config, serve_http
from mcp import Client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

TOOLS_PY = '''
from codemode import Catalog

catalog = Catalog()


@catalog.tool
async def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temp_c": len(city) + 10}


@catalog.tool
async def convert_temperature(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32
'''

CONVERSATION = [
    'hits = await tools.search("weather in a city")\nparis = await tools.get_weather(city="Paris")\nreturn paris',
    'oslo = await tools.get_weather(city="Oslo")\ncities = [paris["city"], oslo["city"]]\nreturn cities',
    (
        "import math\nfound = await tools.search('convert celsius to fahrenheit')\ncities.append('Rome')\n"
        "return [await tools.convert_temperature(celsius=t) for t in (paris['temp_c'], oslo['temp_c'])]"
    ),
    "return {'cities': cities, 'hot': [c for c in cities if len(c) > 4], 'pi': round(math.pi, 2)}",
    "del cities\nreturn [paris['city'], oslo['city']]",
]
"""Five steps: discoveries, variables set, read, mutated, a dropped import (a `NameError` on `math`), a `del`."""


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A config with the two tools above."""
    return python_config(tmp_path_factory.mktemp("replicas"), TOOLS_PY)


def replica(config: Path, log: Path) -> AbstractAsyncContextManager[str]:
    """One `codemode serve --transport http --stateless --persist-variables --log LOG`; its URL while it runs."""
    return serve_http(config, "--stateless", "--persist-variables", "--log", str(log))


@pytest.fixture(scope="module")
async def replicas(config: Path) -> AsyncIterator[list[tuple[str, Path]]]:
    """Two replicas of the same server, each with its URL and its run log."""
    async with AsyncExitStack() as stack:
        logs = [config.with_name(f"replica-{number}.jsonl") for number in range(2)]
        yield [(await stack.enter_async_context(replica(config, log)), log) for log in logs]


async def converse(urls: list[str]) -> list[tuple[bool, list[str], dict[str, Any]]]:
    """Run `CONVERSATION`, step N on `urls[N % len(urls)]`, carrying the state from each result to the next."""
    steps = []
    state: dict[str, Any] | None = None
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(url)) for url in urls]
        for number, code in enumerate(CONVERSATION):
            meta = None if state is None else {"codemode/state": state}
            result = await clients[number % len(clients)].call_tool("code", {"code": code}, meta=meta)
            assert result.meta is not None
            state = result.meta["codemode/state"]
            steps.append((result.is_error, [block.text for block in result.content], state))
    return steps


@pytest.mark.slow
async def test_a_conversation_alternating_between_two_replicas_goes_as_on_one(
    replicas: list[tuple[str, Path]],
) -> None:
    """Replica A, B, A, B, A: every result and state is the one a single process gives, variables included."""
    urls = [url for url, _ in replicas]
    alternating = await converse(urls)
    single = await converse(urls[:1])
    assert alternating == single
    logged = [[json.loads(line)["code"] for line in log.read_text().splitlines()] for _, log in replicas]
    assert logged == [CONVERSATION[0::2] + CONVERSATION, CONVERSATION[1::2]]  # each replica logs the runs it made
    errors = [is_error for is_error, _, _ in single]
    assert errors == [False, False, False, True, False]
    texts = [content for _, content, _ in single]
    assert texts[0][0] == 'Returned: {\n "city": "Paris",\n "temp_c": 15\n}'
    assert "# new tool: get_weather" in texts[0][1]
    assert texts[1] == ['Returned: [\n "Paris",\n "Oslo"\n]']  # announced once: B read it from the state
    assert texts[2][0].startswith("Returned: [\n 59.0,\n 57.2\n]\nNot kept for the next run: math (a module")
    assert "# new tool: convert_temperature" in texts[2][1]
    assert texts[3][0].endswith(
        "Note: `math` from an earlier run was not kept: only variables holding JSON data (dict, list, str, "
        "numbers, bool, None) carry over. Define or compute it again in this run."
    )
    assert texts[4] == ['Returned: [\n "Paris",\n "Oslo"\n]']
    final = single[-1][2]
    assert sorted(final["variables"]) == ["found", "hits", "oslo", "paris"]
    assert sorted(final["announced"]) == ["convert_temperature", "get_weather"]
