"""What the process tests share: the layers this machine gives a run process, a skip naming a missing one, a wait."""

from __future__ import annotations

import collections
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from sandbox import Layers, Sandbox

if TYPE_CHECKING:
    from collections.abc import Callable


def machine_layers() -> Layers:
    """The layers a default sandbox's run processes get on this machine."""

    async def read() -> Layers:
        async with Sandbox(max_runs=1) as sandbox:
            return sandbox.layers

    return anyio.run(read)


LAYERS = machine_layers() if sys.platform.startswith("linux") else Layers.none(f"not Linux ({sys.platform})")
"""The layers of this machine, read once per test session."""


def needs(*layers: str) -> pytest.MarkDecorator:
    """Skip unless every one of `layers` is active on this machine, naming the missing ones and why."""
    missing = [f"the {layer} layer ({LAYERS.missing[layer]})" for layer in layers if layer in LAYERS.missing]  # type: ignore[index]
    return pytest.mark.skipif(bool(missing), reason="needs " + ", ".join(missing))


async def eventually(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until `condition()` holds, looking every 10 ms: for what only `/proc` or another process shows."""
    with anyio.fail_after(seconds):
        for _ in itertools.count():
            if condition():
                return
            await anyio.sleep(0.01)


def descendants(pid: int) -> set[int]:
    """The pids of every process below `pid` now, read from `/proc`."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children[int(stat.rpartition(")")[2].split()[1])].append(int(entry.name))
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found
