"""Hooks of the whole suite: every case that runs code in a worker process is marked `process`, and the objects
collection made are kept out of the cyclic collector's reach."""

from __future__ import annotations

import gc

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `process` each case parametrized with `isolation="process"`, so `-m "not process"` leaves them out."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("isolation") == "process":
            item.add_marker(pytest.mark.process)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built (thousands of items, every framework imported) out of the cyclic collector.

    Each full collection would otherwise walk it again; the objects the tests make are collected as before.
    """
    gc.freeze()
