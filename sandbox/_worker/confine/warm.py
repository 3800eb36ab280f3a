"""Warm-up before confinement: everything a run may load from disk is loaded while the disk is still there.

A confined worker cannot open a file, so a module imported lazily (by `datetime.strptime`, a codec lookup, the
policy's first compile) or a time zone read on first use would fail later. `warm_up` imports every module the
sandbox offers, runs one script through the real runner, and touches the standard library's lazy paths.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from typing import TYPE_CHECKING

from sandbox._runtime.runner import run_code
from sandbox._runtime.stdlib.modules import ALLOWED_MODULES
from sandbox._shared.hostcall import HostFailure
from sandbox.limits import Limits

if TYPE_CHECKING:
    from sandbox._shared.hostcall import Call
    from sandbox.jsonvalue import JsonValue

_CODECS = (
    "ascii latin-1 utf-8 utf-8-sig utf-16 utf-16-le utf-16-be utf-32 utf-32-le utf-32-be cp1252 cp437 idna "
    "punycode unicode_escape raw_unicode_escape"
).split()
"""Codecs whose module is imported on first lookup (`str.encode("utf-16")`)."""

_SCRIPT = "\n".join(
    [
        *(f"import {name}" for name in sorted(ALLOWED_MODULES)),
        "datetime.datetime.strptime('2024-01-02 03:04', '%Y-%m-%d %H:%M').astimezone()",
        "time.strptime('2024', '%Y')",
        "decimal.Decimal('1.5').quantize(decimal.Decimal('1'))",
        "re.compile(r'(?P<a>\\w+)\\s*\\d+', re.I).match('ab 12')",
        "json.loads(json.dumps({'a': [1.5, None]}))",
        "print(f'{3.5:>10.2f}', statistics.mean([1, 2]), random.random() < 1)",
        "return 0",
    ]
)
"""One run through the real runner: every facade built, the policy's compiler and guards exercised."""


async def _no_host(call: Call) -> JsonValue:
    raise HostFailure("RuntimeError", "no host functions during warm-up")


async def _warm_run() -> None:
    await run_code(_SCRIPT, limits=Limits(), bridge=_no_host, functions={})


def warm_up() -> None:
    """Load what a run can reach from disk; a warm-up step that fails only makes that feature slower to fail."""
    for name in _CODECS:
        codecs.lookup(name)
    time.localtime()  # the C library reads the time zone file once
    asyncio.run(_warm_run())
