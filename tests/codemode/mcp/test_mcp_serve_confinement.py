"""`codemode serve` says at start-up which OS-level confinement its sandbox runs under."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import anyio
import pytest

from sandbox import Sandbox

if TYPE_CHECKING:
    from pathlib import Path

pytest.importorskip("mcp.client")


INLINE = "inline isolation: the code runs in the host process, with no boundary at all"


async def machine_layers() -> str:
    """How a default process sandbox reports its layers on this machine."""
    async with Sandbox(max_runs=1) as sandbox:
        return str(sandbox.layers)


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["process", "inline"])
async def test_serve_prints_its_confinement_layers_at_start_up(tmp_path: Path, isolation: str) -> None:
    """A line on stderr names the layers (process) or says there is no boundary (inline); stdout stays MCP's."""
    expected = await machine_layers() if isolation == "process" else f"no OS-level confinement: {INLINE}"
    (tmp_path / "tools.py").write_text("from codemode import Catalog\ncatalog = Catalog()\n")
    (tmp_path / "codemode.toml").write_text('[[tools]]\npython = "tools.py"\n')
    command = [sys.executable, "-m", "codemode", "serve", "--config", str(tmp_path / "codemode.toml")]
    done = await anyio.run_process([*command, "--isolation", isolation], input=b"", check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    printed = [text for text in done.stderr.decode().splitlines() if text.startswith("codemode: sandbox ")]
    assert printed == [f"codemode: sandbox {expected}"]
