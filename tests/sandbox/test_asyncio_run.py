"""`asyncio.run(main())` at the top level runs its coroutine on the run's loop, as a script would; elsewhere, a hint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Sandbox

ISOLATIONS = ["inline", "process"]

MAIN = """\
import asyncio

async def main():
    await asyncio.sleep(0)
    print("in main")
    return 41
"""


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize(
    ("ending", "value"),
    [
        pytest.param("result = asyncio.run(main())\nresult + 1", 42, id="assigned"),
        pytest.param("asyncio.run(main())", 41, id="last-statement"),
        pytest.param('if __name__ == "__main__":\n    asyncio.run(main())', None, id="main-guard"),
        pytest.param("from asyncio import run as go\ngo(main()) + 1", 42, id="imported-run"),
    ],
)
async def test_asyncio_run_at_the_top_level_awaits_the_coroutine(sb: Sandbox, ending: str, value: int | None) -> None:
    """The way a tutorial ends a script runs its coroutine to the end and gives its value."""
    result = await sb.run(MAIN + ending)

    assert result.error is None, result.error
    assert (result.stdout, result.value) == ("in main\n", value)


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_asyncio_run_inside_a_function_says_to_await_instead(sb: Sandbox) -> None:
    """In a function the run's loop is already running: the call is refused with the fix."""
    result = await sb.run(MAIN + "def start():\n    return asyncio.run(main())\nstart()")

    assert result.error is not None
    assert (result.error.type_name, result.error.line) == ("RuntimeError", 8)
    assert result.error.message == (
        "RuntimeError: `asyncio.run()` is not needed here: top-level `await` works, so write `await main()` (line 8)"
    )
