"""Where codemode keeps its caches on disk (the search index, embeddings), and the switch that turns them off.

`$CODEMODE_CACHE_DIR`, else `$XDG_CACHE_HOME/codemode`, else `~/.cache/codemode`; `CODEMODE_CACHE=off` (or `0`,
`false`, `no`) keeps everything in memory. A cache only ever saves time: what is read from it is checked, and
anything unreadable, stale or not owned by the user is ignored and rebuilt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

_OFF: Final = frozenset({"off", "0", "false", "no"})


def default_cache_dir() -> Path | None:
    """The cache folder the environment names, or None when `CODEMODE_CACHE` turns caching off."""
    if os.environ.get("CODEMODE_CACHE", "").strip().lower() in _OFF:
        return None
    explicit = os.environ.get("CODEMODE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "codemode"
