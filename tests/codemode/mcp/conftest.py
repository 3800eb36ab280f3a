"""Shared fixtures of the MCP tests: the event loop, and a temporary git repository."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run the async tests on asyncio only (module-scoped async fixtures need a session-scoped backend)."""
    return "asyncio"


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with one commit, for `mcp-server-git`."""
    repo = tmp_path_factory.mktemp("repo")
    run = ["git", "-C", str(repo), "-c", "user.name=Test", "-c", "user.email=test@example.com"]
    subprocess.run([*run, "init", "-q", "-b", "main"], check=True)
    (repo / "README.md").write_text("hello\n")
    subprocess.run([*run, "add", "README.md"], check=True)
    subprocess.run([*run, "commit", "-q", "-m", "initial commit"], check=True)
    return repo
