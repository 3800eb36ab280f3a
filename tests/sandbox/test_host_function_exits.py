"""A host function that raises `SystemExit` (argparse rejecting what the code passed) fails that call only."""

from __future__ import annotations

import argparse

import pytest

from sandbox import Limits, Sandbox


def parse(flags: list[str]) -> str:
    parser = argparse.ArgumentParser(prog="report", exit_on_error=False)
    parser.add_argument("--days", type=int)
    parser.error = lambda message: parser.exit(2)  # type: ignore[method-assign]  # quiet: no usage on stderr
    return str(parser.parse_args(flags).days)


async def parse_later(flags: list[str]) -> str:
    return parse(flags)


@pytest.mark.parametrize("isolation", ["inline", "process"])
@pytest.mark.parametrize("function", [parse, parse_later], ids=["sync", "async"])
async def test_a_host_function_that_exits_fails_its_call_and_the_code_goes_on(isolation: str, function: object) -> None:
    """The code catches the call's error by its type name and carries on; the host process is still here."""
    code = """
try:
    await report(["--weeks", "2"])
except Exception as e:
    first = f"{type(e).__name__}: {e}"
return [first, await report(["--days", "3"])]
"""
    async with Sandbox(isolation=isolation, limits=Limits(timeout=10)) as sb:  # type: ignore[arg-type]
        result = await sb.run(code, functions={"report": function})  # type: ignore[dict-item]
    assert result.error is None, result.error
    assert result.value == ["SystemExit: 2 (the function exited, as a command-line parser does on arguments)", "3"]
