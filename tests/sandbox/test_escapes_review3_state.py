"""Red team, third review: the code's work that outlives its run, and host state it could change.

An async generator's `finally` runs when the run closes it, after the run's own task is over; an
exception's `__str__` runs when the run describes the error. Both are the code's, so both stay inside the
run's guards and its own context: the size-checked builtins refuse there as everywhere, and the decimal
context they see is the run's, never the caller's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from review3_kit import Case, Refused, Value, case, check, params

if TYPE_CHECKING:
    from sandbox import Sandbox

_LEFT_OPEN = """
async def g():
    try:
        yield 1
    finally:
        print("closing")
        x = BUILD
        print("built", len(x))
it = g()
await anext(it)
return 1
"""

AFTER_THE_RUN: list[Case] = [
    case(
        f"async_generator_finally_builds_{name}_past_max_size",
        _LEFT_OPEN.replace("BUILD", build),
        Value(1, stdout="closing\n"),
    )
    for name, build in [
        ("a_list", "list(range(5_000_000))"),
        ("a_tuple", "tuple(range(5_000_000))"),
        ("bytes", "bytes(5_000_000)"),
        ("a_sorted_list", "sorted(range(5_000_000))"),
    ]
] + [
    case(
        "bytes_of_an_index_object_is_counted_once",
        """
        class N:
            calls = 0
            def __index__(self):
                N.calls += 1
                return 10 if N.calls == 1 else 5_000_000
        return len(bytes(N()))
        """,
        Value(10),
    ),
    case(
        "bytes_of_an_int_subclass_is_size_checked",
        "class I(int):\n    pass\nreturn len(bytes(I(5_000_000)))",
        Refused("memory", "MemoryError", "bytes of length"),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(AFTER_THE_RUN))
async def test_size_checked_builtins_hold_after_the_run(sb: Sandbox, case: Case) -> None:
    """`list`, `tuple`, `bytes` and `sorted` are checked with the run's own guards, in code that outlives it too."""
    await check(sb, case)
