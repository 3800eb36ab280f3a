"""Shared by the red-team suites: running an attack so that nothing it raises escapes, and the after-checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from sandbox import RunResult, Sandbox


def is_plain_json(value: object) -> bool:
    """Whether `value` is made only of exact JSON types."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) is list:
        return all(is_plain_json(item) for item in value)
    if type(value) is dict:
        return all(type(k) is str and is_plain_json(v) for k, v in value.items())
    return False


async def run(sb: Sandbox, code: str, **kwargs: Any) -> RunResult:
    """`sb.run`, turning anything raised out of it into a test failure (every outcome must be a result)."""
    try:
        return await sb.run(code, **kwargs)
    except BaseException as exc:  # noqa: BLE001  # even BaseException: a run must never raise into the host
        pytest.fail(f"run raised instead of returning a result: {exc!r}")


async def assert_still_works(sb: Sandbox) -> None:
    """The sandbox runs the next script normally."""
    after = await run(sb, "return 1")
    assert after.error is None, after.error
    assert after.value == 1
