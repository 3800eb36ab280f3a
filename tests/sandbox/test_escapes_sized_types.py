"""The size-checked stand-ins for the builtin collection types never hand out the real, unchecked type.

Found by the lead's review of this session's work: `list.real` was the stand-in's own attribute holding the builtin
`list`, whose constructor skips the size check (`list.real(range(10**8))` built 800 MB in the host, inline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from review3_kit import Refused, Value, case, check, params

if TYPE_CHECKING:
    from sandbox import Sandbox

TOO_BIG = Refused("memory", "MemoryError", "the limit is 1,000,000")

CASES = [
    case("the_stand_in_checks_its_size", "return len(list(range(2_000_000)))", TOO_BIG),
    *(
        case(
            f"{name}_real_is_not_an_attribute",
            f"return len({name}.real(range(2_000_000)))",
            Refused("runtime", "AttributeError", f"type object '{name}' has no attribute 'real'"),
        )
        for name in ("list", "tuple", "set", "frozenset", "bytearray")
    ),
    case(
        "getattr_finds_no_real_either",
        "return len(getattr(list, 'real')(range(2_000_000)))",
        Refused("runtime", "AttributeError", "has no attribute 'real'"),
    ),
    case("dir_lists_no_real", "return [n for n in dir(list) + dir(bytes) if 'real' in n]", Value([])),
    case(
        "subclasses_still_work",
        "class Stack(list):\n    pass\nreturn isinstance(Stack([1]), list), len(Stack([1, 2]))",
        Value([True, 2]),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(CASES))
async def test_the_size_checked_types_hand_out_no_unchecked_constructor(sb: Sandbox, case: object) -> None:
    """Each way to the builtin type behind a stand-in fails exactly, and the stand-in itself still checks sizes."""
    await check(sb, case)  # type: ignore[arg-type]
