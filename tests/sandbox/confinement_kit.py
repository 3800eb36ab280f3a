"""What the confinement tests share: the layers this machine gives a worker, and a skip that names a missing one."""

from __future__ import annotations

import sys

import anyio
import pytest

from sandbox import Layers, Sandbox


def machine_layers() -> Layers:
    """The layers a default sandbox's workers get on this machine."""

    async def read() -> Layers:
        async with Sandbox(workers=1) as sandbox:
            return sandbox.layers

    return anyio.run(read)


LAYERS = machine_layers() if sys.platform.startswith("linux") else Layers.none(f"not Linux ({sys.platform})")
"""The layers of this machine, read once per test session."""


def needs(*layers: str) -> pytest.MarkDecorator:
    """Skip unless every one of `layers` is active on this machine, naming the missing ones and why."""
    missing = [f"the {layer} layer ({LAYERS.missing[layer]})" for layer in layers if layer in LAYERS.missing]  # type: ignore[index]
    return pytest.mark.skipif(bool(missing), reason="needs " + ", ".join(missing))
