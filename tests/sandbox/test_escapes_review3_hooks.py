"""Red team, third review: hooks the standard library calls on the code's objects while holding host state.

`copy.deepcopy` asks each object for `__deepcopy__` by attribute, so a class with `__getattr__` used to get
the memo, which keeps the originals of everything copied so far (the sandbox's own objects among them).
`dataclasses.asdict` copies its leaves the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from review3_kit import Case, Refused, Value, case, check, params

if TYPE_CHECKING:
    from sandbox import Sandbox

EVIL = """
import copy, collections, dataclasses
asked = []
class Evil:
    def __getattr__(self, name):
        asked.append(name)
        if name == "__deepcopy__":
            return lambda memo: [value for value in memo.values()]
        raise AttributeError(name)
"""

HOOKS: list[Case] = [
    case(
        "deepcopy_asks_a_getattr_for_its_hook_and_hands_it_the_memo",
        (
            EVIL,
            """
            copied = copy.deepcopy([echo, collections.deque([1]), Evil()])
            return [isinstance(copied[2], Evil), asked]
            """,
        ),
        Value([True, []]),
    ),
    case(
        "asdict_copies_a_leaf_with_the_real_deepcopy",
        (
            EVIL,
            """
            @dataclasses.dataclass
            class P:
                leaf: object
            out = dataclasses.asdict(P(collections.deque([echo, Evil()])))
            return [isinstance(out["leaf"], collections.deque), isinstance(out["leaf"][1], Evil), asked]
            """,
        ),
        Value([True, True, []]),
    ),
    case(
        "deepcopy_memo_argument_is_refused",
        "import copy\ncopy.deepcopy([1], {})",
        Refused("forbidden", "ForbiddenError", "`copy.deepcopy(x, memo)` is not allowed"),
    ),
    case(
        "deepcopy_of_a_host_function_is_the_function",
        "import copy\nreturn [copy.deepcopy(echo) is echo, copy.deepcopy([echo])[0] is echo]",
        Value([True, True]),
    ),
    case(
        "deepcopy_keeps_sharing_cycles_and_the_types_it_copies",
        """
        import copy, collections, dataclasses, datetime, decimal, fractions
        @dataclasses.dataclass
        class P:
            x: list
        class Own:
            def __init__(self):
                self.items = [1, 2]
        shared = [1]
        data = {"a": shared, "b": shared, "t": (1, [2]), "u": (1, "s"), "d": collections.deque([shared]),
                "c": collections.Counter("aab"), "dd": collections.defaultdict(list, k=[1]), "p": P([3]),
                "o": Own(), "when": datetime.date(2024, 1, 2), "n": decimal.Decimal("1.5"),
                "q": fractions.Fraction(1, 3), "s": {1, 2}}
        data["self"] = data
        c = copy.deepcopy(data)
        return [c["a"] is c["b"], c["a"] is not shared, c["self"] is c, c["t"] == (1, [2]), c["t"] is not data["t"],
                c["u"] is data["u"], c["d"][0] is c["a"], c["c"] == data["c"], c["dd"]["k"] == [1],
                c["dd"]["k"] is not data["dd"]["k"], c["dd"]["new"], c["p"] == data["p"], c["p"].x is not data["p"].x,
                c["o"].items == [1, 2], c["o"].items is not data["o"].items, c["when"] == data["when"], str(c["n"]),
                str(c["q"]), c["s"] == {1, 2}]
        """,
        Value([True] * 8 + [True, True, [], True, True, True, True, True, "1.5", "1/3", True]),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(HOOKS))
async def test_copying_never_hands_the_code_the_memo(sb: Sandbox, case: Case) -> None:
    """`deepcopy` and `asdict` copy by class-level hooks only; the code's `__getattr__` is never asked."""
    await check(sb, case, functions={"echo": lambda *args: list(args)})
