"""Bulk building: the cyclic garbage collector paused while a catalog or an index makes many objects at once.

Loading 10,000 definitions makes millions of dicts, lists and strings, none of them garbage; each allocation
burst triggers collections that walk every object alive, which costs about as much as the parsing itself.
Pausing the collector for the burst (and restoring it after, even on error) changes nothing but the time.
"""

from __future__ import annotations

import contextlib
import gc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, if it was running; reference counting goes on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
