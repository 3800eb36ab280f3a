"""Red team, third review: the code's work that outlives its run, and host state it could change.

An async generator's `finally` runs when the run closes it, after the run's own task is over; an
exception's `__str__` runs when the run describes the error. Both are the code's, so both stay inside the
run's guards and its own context: the size-checked builtins refuse there as everywhere, and the decimal
context they see is the run's, never the caller's.
"""

from __future__ import annotations

import decimal
import gc
import textwrap
import typing
from typing import TYPE_CHECKING

import pytest
from escape_kit import run
from review3_kit import QUICK, Case, Refused, Value, case, check, params

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


_DECIMAL_CHANGERS = {
    "an_exception_message": """
        import decimal
        class E(Exception):
            def __str__(self):
                decimal.getcontext().prec = 3
                return "changed"
        raise E()
        """,
    "an_async_generator_finally": """
        import decimal
        async def g():
            try:
                yield 1
            finally:
                decimal.getcontext().prec = 3
        it = g()
        await anext(it)
        return 1
        """,
    "an_async_generator_suspended_in_a_localcontext": """
        import decimal
        async def g():
            with decimal.localcontext() as c:
                c.prec = 3
                yield 1
        it = g()
        await anext(it)
        return 1
        """,
    "a_generator_closed_after_the_run": """
        import decimal
        def g():
            try:
                yield 1
            finally:
                decimal.getcontext().prec = 3
        it = g()
        next(it)
        box = [it]
        box.append(box)  # a cycle: the garbage collector closes the generator later, in the host's context
        return 1
        """,
    "a_generator_in_a_localcontext_closed_after_the_run": """
        import decimal
        def g():
            with decimal.localcontext(prec=3):
                yield 1
        it = g()
        next(it)
        box = [it]
        box.append(box)  # a cycle: the garbage collector closes the generator later, in the host's context
        return 1
        """,
}


@pytest.mark.parametrize("isolation", ["inline"])
@pytest.mark.parametrize("name", list(_DECIMAL_CHANGERS))
async def test_the_hosts_decimal_context_outlives_the_code(sb: Sandbox, name: str) -> None:
    """Code that runs in the caller's context (a message, a `finally`, a finalizer) changes only the run's."""
    mine = decimal.Context(prec=50)
    decimal.setcontext(mine)
    try:
        await run(sb, textwrap.dedent(_DECIMAL_CHANGERS[name]), limits=QUICK)
        gc.collect()
        assert decimal.getcontext() is mine
        assert mine.prec == 50
    finally:
        decimal.setcontext(decimal.Context())


DECIMAL: list[Case] = [
    case(
        "decimal_contexts_work_as_in_python",
        """
        import decimal
        decimal.getcontext().prec = 5
        a = str(decimal.Decimal(1) / 7)
        with decimal.localcontext() as c:
            c.prec = 2
            b = str(decimal.Decimal(1) / 7)
        with decimal.localcontext(prec=3):
            c2 = str(decimal.Decimal(1) / 7)
        return [a, b, c2, str(decimal.Decimal(1) / 7), decimal.getcontext().prec]
        """,
        Value(["0.14286", "0.14", "0.143", "0.14286", 5]),
    ),
    case(
        "a_new_run_starts_with_the_default_decimal_context",
        "import decimal\nreturn decimal.getcontext().prec",
        Value(28),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(DECIMAL))
async def test_decimal_facade_keeps_python_semantics(sb: Sandbox, case: Case) -> None:
    """The run's own decimal context behaves as CPython's does."""
    await check(sb, case)


_COMPLEX_LOOKALIKE = """
import typing
class M(type):
    def __hash__(cls):
        return HASH
    def __eq__(cls, other):
        return True
K = M("K", (), {})
"""

TYPING: list[Case] = [
    case(
        f"typing_{name}_with_an_argument_hashed_by_the_code",
        (_COMPLEX_LOOKALIKE.replace("HASH", str(hash(complex))), code),
        Refused("forbidden", "ForbiddenError", "typing's caches are shared by the whole process"),
    )
    for name, code in [
        ("optional", "x = typing.Optional[K]"),
        ("union", "x = typing.Union[int, K]"),
        ("list", "x = typing.List[K]"),
        ("callable", "x = typing.Callable[[K], int]"),
        ("generic_class", "T = typing.TypeVar('T')\nclass Box(typing.Generic[T]):\n    pass\nx = Box[K]"),
        ("itemgetter", "import operator\nx = operator.itemgetter(K)(typing.Optional)"),
    ]
] + [
    case(
        "typing_chainmap_forwards_a_subscription_with_an_argument_hashed_by_the_code",
        (
            _COMPLEX_LOOKALIKE.replace("HASH", str(hash(complex))),
            "import collections\nx = collections.ChainMap(typing.Optional)[K]",
        ),
        Refused("runtime", "TypeError", "a ChainMap holds mappings, not '_SpecialForm'"),
    ),
    case(
        "typing_literal_of_a_str_subclass_with_its_own_eq",
        """
        import typing
        class S(str):
            def __eq__(self, other):
                return True
            def __hash__(self):
                return hash("x")
        x = typing.Literal[S("y")]
        """,
        Refused("forbidden", "ForbiddenError", "typing's caches are shared by the whole process"),
    ),
    case(
        "typing_still_takes_the_codes_plain_classes",
        """
        import typing
        class K:
            pass
        T = typing.TypeVar("T")
        class Box(typing.Generic[T]):
            pass
        return [str(typing.Optional[K]).replace("__main__.", ""), str(Box[int]).replace("__main__.", ""),
                str(typing.Literal["a", 1])]
        """,
        Value(["typing.Optional[K]", "Box[int]", "typing.Literal['a', 1]"]),
    ),
    case(
        "typing_overload_registers_nothing",
        """
        import typing
        @typing.overload
        def f(x: int) -> int: ...
        def f(x):
            return x
        try:
            typing.overload(lambda: 1)()
        except NotImplementedError:
            return f(2)
        """,
        Value(2),
    ),
    case(
        "runtime_checkable_on_a_stdlib_protocol",
        "import typing\ntyping.runtime_checkable(typing.Protocol)",
        Refused("forbidden", "ForbiddenError", "`typing.runtime_checkable` works only on the code's own"),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(TYPING))
async def test_typing_caches_take_no_object_the_code_hashes(sb: Sandbox, case: Case) -> None:
    """A typing subscription refuses arguments whose hashing is the code's; typing's registries stay untouched."""
    await check(sb, case)


async def test_typing_lookups_of_the_host_are_its_own(sandboxes: dict[str, Sandbox]) -> None:
    """After the code tried, `Optional[complex]` in the host is still `Optional[complex]`, and no overload is kept."""
    code = (
        _COMPLEX_LOOKALIKE.replace("HASH", str(hash(complex)))
        + "try:\n    typing.Optional[K]\nexcept Exception:\n    pass\n"
    )
    code += "@typing.overload\ndef kept(x: int) -> int: ...\nreturn 1"
    result = await run(sandboxes["inline"], code, limits=QUICK)
    assert result.value == 1, result.error
    assert typing.get_args(typing.Optional[complex]) == (complex, type(None))  # noqa: UP045  # the cached form
    assert all("kept" not in name for names in typing._overload_registry.values() for name in names)  # type: ignore[attr-defined]
