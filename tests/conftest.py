"""Markers the whole suite shares: every case that runs code in a worker process is marked `process`."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `process` each case parametrized with `isolation="process"`, so `-m "not process"` leaves them out."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("isolation") == "process":
            item.add_marker(pytest.mark.process)
