"""Red team, the host boundary: values and callbacks in both directions.

Host functions get only plain JSON (functions, instances, generators, NaN and cycles are refused with the path;
sets, subclasses and int keys convert), results and host errors come back as plain data with nothing of the host
object on them, proxies hide their state, and `copy`/`dataclasses` never call the code's hooks with the memo.
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import TYPE_CHECKING

import pytest
from redteam_kit import (
    BUDGET,
    INLINE,
    QUICK,
    MiB,
    Value,
    assert_outcome,
    assert_still_works,
    case,
    guard,
    names_are_unique,
    raised,
    run,
    runs,
)

if TYPE_CHECKING:
    from sandbox import Sandbox

CASES = [
    case(
        "host_returns_object_with_secret",
        """
        obj = await leak_object()
        return obj.secret
        """,
        raised(
            "TypeError",
            "`leak_object` returned data that is not JSON: value is a Carrier, not JSON data (use dict, list, str",
        ),
    ),
    case(
        "host_returns_nested_object",
        """
        d = await leak_nested()
        return d["ok"][1].secret
        """,
        raised(
            "TypeError",
            "`leak_nested` returned data that is not JSON: value['ok'][1] is a Carrier, not JSON data (use dict, list,",
        ),
    ),
    case(
        "host_returns_set",
        "return sorted(await leak_set())",
        raised(
            "TypeError",
            "`leak_set` returned data that is not JSON: value is a set, not JSON data (use dict, list, str, int",
        ),
    ),
    case(
        "host_returns_function",
        """
        f = await leak_function()
        return f().secret
        """,
        raised(
            "TypeError",
            "`leak_function` returned data that is not JSON: value is a function, not JSON data (use dict, list, str",
        ),
    ),
    case(
        "host_returns_future_with_loop",
        """
        fut = await leak_future()
        return str(getattr(fut, "get_" + "loop")())
        """,
        raised(
            "TypeError",
            "`leak_future` returned data that is not JSON: value is a Future, not JSON data (use dict, list, str, int,",
        ),
    ),
    case(
        "host_exception_attribute",
        """
        try:
            await raise_carrier()
        except Exception as e:
            return e.secret
        """,
        raised("AttributeError", "'CarrierError' object has no attribute 'secret'"),
    ),
    case(
        "host_exception_object_argument",
        """
        try:
            await raise_object_arg()
        except Exception as e:
            return e.args[0].secret
        """,
        raised("AttributeError", "'str' object has no attribute 'secret'"),
    ),
    case(
        "host_exception_uncaught_carries_nothing",
        "await raise_carrier()",
        raised("CarrierError", "the host failed"),
    ),
    case(
        "host_exception_chained_cause",
        """
        try:
            await raise_chained()
        except Exception as e:
            return getattr(e, "__cau" + "se__").secret
        """,
        guard("`.__cause__` is not allowed"),
    ),
    case(
        "host_function_attributes",
        """
        for name in ["secret", "func", "fn", "function", "callable", "target", "wrapped", "host", "resolve",
                     "handler", "impl", "call", "f", "_fn", "_func", "_function", "_resolve", "_target"]:
            try:
                value = getattr(echo, name)
            except Exception:
                continue
            for inner in [value, getattr(value, "secret", None)]:
                if isinstance(inner, str):
                    return inner
        raise LookupError("nothing on the proxy")
        """,
        raised("LookupError", "nothing on the proxy"),
    ),
    case(
        "namespace_resolve_attribute",
        """
        f = tools.resolve("echo")
        return f(x=1)
        """,
        raised("TypeError", "'PendingCall' object is not callable"),
    ),
    case(
        "namespace_private_attributes",
        """
        for name in ["_resolve", "_namespace", "_names", "names", "_host", "_functions"]:
            try:
                value = getattr(tools, name)
            except Exception:
                continue
            if callable(value) and not isinstance(value, type(tools)):
                try:
                    got = value("echo")
                except Exception:
                    continue
                return str(got) + "PW" + "NED"
        raise LookupError("nothing on the namespace")
        """,
        raised("NotAwaitedError", "`tools.names(...)` must be awaited: write `await tools.names(...)`"),
    ),
    case(
        "unawaited_host_call_coroutine_frame",
        """
        c = echo(x=1)
        frame = getattr(c, "cr_" + "frame")
        return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
        """,
        guard("`.cr_frame` is not allowed"),
    ),
    case(
        "unawaited_host_call_driven_by_hand",
        """
        c = echo(x=1)
        try:
            c.send(None)
        except StopIteration as stop:
            return str(stop.value) + "PW" + "NED"
        return "PW" + "NED"
        """,
        raised("NotAwaitedError", "`echo(...)` must be awaited: write `await echo(...)`"),
    ),
    case(
        "lambda_passed_to_host",
        "return await echo(x=lambda: 0)",
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x'] is a 'function' object: a function is not data: call it and",
        ),
    ),
    case(
        "lambda_passed_positionally",
        "return await echo(lambda: 0)",
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: args[0] is a 'function' object: a function is not data: call it and return",
        ),
    ),
    case(
        "instance_passed_to_host",
        """
        class Spy:
            def __str__(self):
                return 'spy'
        return await echo(x=Spy())
        """,
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x'] is a 'Spy' object: return plain data (dict, list, str, int",
        ),
    ),
    case(
        "dict_subclass_passed_to_host",
        """
        class Evil(dict):
            def items(self):
                raise RuntimeError("model code ran in the host")
            def keys(self):
                raise RuntimeError("model code ran in the host")
        return await echo(x=Evil(a=1))
        """,
        Value({"args": [], "kwargs": {"x": {"a": 1}}}),
    ),
    case(
        "str_subclass_passed_to_host",
        """
        class S(str):
            def __eq__(self, other):
                return True
            def __hash__(self):
                return 0
        return await echo(x=S("a"))
        """,
        Value({"args": [], "kwargs": {"x": "a"}}),
    ),
    case(
        "int_subclass_passed_to_host",
        """
        class I(int):
            pass
        return await echo(x=I(3))
        """,
        Value({"args": [], "kwargs": {"x": 3}}),
    ),
    case(
        "set_passed_to_host",
        "return await echo(x={1, 2})",
        Value({"args": [], "kwargs": {"x": [1, 2]}}),
    ),
    case(
        "generator_passed_to_host",
        "return await echo(x=(i for i in range(3)))",
        raised(
            "TypeError", "`echo(...)` takes JSON data: kwargs['x'] is a 'generator' object: return `list(...)` of it"
        ),
    ),
    case(
        "host_function_passed_to_host",
        "return await echo(x=echo)",
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x'] is a 'function' object: a function is not data: call it and",
        ),
    ),
    case(
        "module_passed_to_host",
        """
        import math
        return await echo(x=math)
        """,
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x'] is a 'Module' object: return plain data (dict, list, str, int,",
        ),
    ),
    case(
        "nested_callable_passed_to_host",
        'return await echo(x={"a": [1, {"b": print}]})',
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x']['a'][1]['b'] is a 'method' object: a function is not data: call",
        ),
    ),
    case(
        "int_keys_passed_to_host",
        "return await echo(x={1: 2})",
        Value({"args": [], "kwargs": {"x": {"1": 2}}}),
    ),
    case(
        "nan_passed_to_host",
        'return await echo(x=float("nan"))',
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x'] is nan, which JSON cannot carry: use None or a string instead",
        ),
    ),
    case(
        "counter_passed_to_host",
        """
        from collections import Counter
        return await echo(x=Counter("ab"))
        """,
        Value({"args": [], "kwargs": {"x": {"a": 1, "b": 1}}}),
    ),
    case(
        "return_object_with_secret",
        """
        class S:
            secret = 'x'
        return S()
        """,
        raised(
            "TypeError",
            "the returned value is a 'S' object: return plain data (dict, list, str, int, float, bool, None)",
        ),
    ),
    case(
        "return_function",
        """
        def f():
            pass
        return f
        """,
        raised(
            "TypeError",
            "the returned value is a 'function' object: a function is not data: call it and return its result, or",
        ),
    ),
    case(
        "return_module",
        """
        import math
        return math
        """,
        raised(
            "TypeError",
            "the returned value is a 'Module' object: return plain data (dict, list, str, int, float, bool, None)",
        ),
    ),
    case(
        "return_generator",
        "return (i for i in range(3))",
        raised("TypeError", "the returned value is a 'generator' object: return `list(...)` of it"),
    ),
    case(
        "return_set",
        "return {1, 2}",
        Value([1, 2]),
    ),
    case(
        "return_bytes",
        'return b"raw"',
        Value("raw"),
    ),
    case(
        "return_nan",
        'return float("nan")',
        raised("TypeError", "the returned value is nan, which JSON cannot carry: use None or a string instead"),
    ),
    case(
        "return_int_keys",
        "return {1: 2}",
        Value({"1": 2}),
    ),
    case(
        "return_dict_subclass",
        """
        class D(dict):
            pass
        return D(a=1)
        """,
        Value({"a": 1}),
    ),
    case(
        "return_host_proxy",
        "return echo",
        raised(
            "TypeError",
            "the returned value is a 'function' object: a function is not data: call it and return its result, or",
        ),
    ),
    case(
        "return_unawaited_host_call",
        "return echo(x=1)",
        raised(
            "NotAwaitedError",
            "a call was never awaited, so it never ran: `echo(...)` must be awaited: write `await echo(...)`",
        ),
    ),
    case(
        "super_of_a_host_proxy_hides_its_private_state",
        'return str(getattr(super(type(echo), echo), "_calls")) + "PW" + "NED"',
        guard("`super(...)` works in the sandbox only inside the code's own classes"),
    ),
    case(
        "proxy_class_private_slot",
        'return str(type(echo)._calls) + "PW" + "NED"',
        guard("`._calls` is not allowed"),
    ),
    case(
        "super_init_of_a_host_proxy_is_object_init",
        """
        super(type(echo), echo).__init__()
        return 1
        """,
        guard("`super(...)` works in the sandbox only inside the code's own classes"),
    ),
    case(
        "method_type_rebinds_print_to_a_value",
        """
        M = type(print)
        M(print, 1)
        return 1
        """,
        Value(1),
    ),
    case(
        "copy_of_a_host_proxy_still_calls_through_the_sandbox",
        """
        import copy
        return await copy.copy(echo)(x=1)
        """,
        Value({"args": [], "kwargs": {"x": 1}}),
    ),
    case(
        "pending_call_awaited_twice",
        """
        c = echo(x=1)
        return [await c, await c]
        """,
        Value([{"args": [], "kwargs": {"x": 1}}, {"args": [], "kwargs": {"x": 1}}]),
    ),
    case(
        "recursive_list_passed_to_host",
        """
        x = []
        x.append(x)
        return await echo(x=x)
        """,
        raised("TypeError", "is nested more than 100 levels deep"),
    ),
    case(
        "huge_int_passed_to_host",
        "return await echo(x=10**5000)",
        raised("TypeError", "`echo(...)` takes JSON data: kwargs['x'] is an int too large to send (16610 bits)"),
    ),
    case(
        "infinity_passed_to_host",
        'return await echo(x=float("inf"))',
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: kwargs['x'] is inf, which JSON cannot carry: use None or a string instead",
        ),
    ),
    case(
        "bytes_passed_to_host",
        'return await echo(x=b"raw")',
        Value({"args": [], "kwargs": {"x": "raw"}}),
    ),
    case(
        "own_instance_passed_positionally",
        """
        class P:
            pass
        return await echo(P())
        """,
        raised(
            "TypeError",
            "`echo(...)` takes JSON data: args[0] is a 'P' object: return plain data (dict, list, str, int, float",
        ),
    ),
    case(
        "own_str_subclass_key_passed_to_host",
        """
        class K(str):
            pass
        return await echo(x={K('a'): 1})
        """,
        Value({"args": [], "kwargs": {"x": {"a": 1}}}),
    ),
    case(
        "lone_surrogate_passed_to_host",
        'return await echo(x="\\ud800")',
        Value({"args": [], "kwargs": {"x": "\ud800"}}),
    ),
    case(
        "dunder_keyword_names_passed_to_host",
        'return await echo(**{"__class__": 1, "a-b": 2})',
        Value({"args": [], "kwargs": {"__class__": 1, "a-b": 2}}),
    ),
    case(
        "namespace_item_shaped_like_a_dunder",
        'return str(tools["__class__"]) + "PW" + "NED"',
        raised("KeyError", "'__class__'"),
    ),
    case(
        "namespace_function_attribute_chain",
        "return await tools.echo.more(x=1)",
        raised("LookupError", "no function 'echo.more'"),
    ),
    case(
        "deepcopy_memo_holds_the_host_functions",
        """
        import copy
        memo = {}
        copy.deepcopy(echo, memo)
        for value in memo.values():
            for item in value if type(value) is list else [value]:
                if type(item) is dict and "echo" in item:
                    return item["echo"].secret + "PW" + "NED"
        """,
        guard("`copy.deepcopy(x, memo)` is not allowed"),
        modes=INLINE,
    ),
    case(
        "deepcopy_memo_holds_the_guards_and_lifts_the_budget",
        """
        import copy
        memo = {}
        copy.deepcopy(hasattr, memo)
        for value in memo.values():
            if type(value) is list:
                for item in value:
                    if hasattr(item, "grace") and hasattr(item, "operations_left"):
                        item.grace(operations=10**15, seconds=10**6)
        n = 0
        for i in range(1_000_000):
            n += 1
        return "PW" + "NED"
        """,
        guard("`copy.deepcopy(x, memo)` is not allowed"),
    ),
    case(
        "deepcopy_asks_a_getattr_for_its_hook_and_hands_it_the_memo",
        """
        import copy, collections, dataclasses
        asked = []
        class Evil:
            def __getattr__(self, name):
                asked.append(name)
                if name == "__deepcopy__":
                    return lambda memo: [value for value in memo.values()]
                raise AttributeError(name)
        copied = copy.deepcopy([echo, collections.deque([1]), Evil()])
        return [isinstance(copied[2], Evil), asked]
        """,
        Value([True, []]),
    ),
    case(
        "asdict_copies_a_leaf_with_the_real_deepcopy",
        """
        import copy, collections, dataclasses
        asked = []
        class Evil:
            def __getattr__(self, name):
                asked.append(name)
                if name == "__deepcopy__":
                    return lambda memo: [value for value in memo.values()]
                raise AttributeError(name)
        @dataclasses.dataclass
        class P:
            leaf: object
        out = dataclasses.asdict(P(collections.deque([echo, Evil()])))
        return [isinstance(out["leaf"], collections.deque), isinstance(out["leaf"][1], Evil), asked]
        """,
        Value([True, True, []]),
    ),
    case(
        "deepcopy_memo_argument_is_refused",
        """
        import copy
        copy.deepcopy([1], {})
        """,
        guard("`copy.deepcopy(x, memo)` is not allowed"),
    ),
    case(
        "deepcopy_of_a_host_function_is_the_function",
        """
        import copy
        return [copy.deepcopy(echo) is echo, copy.deepcopy([echo])[0] is echo]
        """,
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
        Value(
            [
                True,
                True,
                True,
                True,
                True,
                True,
                True,
                True,
                True,
                True,
                [],
                True,
                True,
                True,
                True,
                True,
                "1.5",
                "1/3",
                True,
            ]
        ),
    ),
    case(
        "return_custom_hash_key",
        """
        class A:
            def __eq__(self, o):
                while True:
                    pass
            def __hash__(self):
                return 1
        {A(): 1}
        """,
        raised("TypeError", "the returned value has a key that is an 'A' object"),
        limits=BUDGET,
    ),
    case(
        "return_str_subclass",
        """
        class S(str):
            def __str__(self):
                while True:
                    pass
        S('x')
        """,
        Value("x"),
        limits=BUDGET,
    ),
    case(
        "return_int_subclass",
        """
        class I(int):
            def __index__(self):
                while True:
                    pass
        I(3)
        """,
        Value(3),
        limits=BUDGET,
    ),
    case(
        "return_list_subclass",
        """
        class L(list):
            def __iter__(self):
                while True:
                    yield 1
        L([1])
        """,
        Value([1]),
        limits=BUDGET,
    ),
    case(
        "return_dict_subclass_with_a_looping_items",
        """
        class D(dict):
            def items(self):
                while True:
                    pass
        D(a=1)
        """,
        Value({"a": 1}),
        limits=BUDGET,
    ),
    case(
        "return_float_subclass",
        """
        class F(float):
            def __repr__(self):
                while True:
                    pass
        F(1.0)
        """,
        Value(1.0),
        limits=BUDGET,
    ),
    case(
        "return_cycle",
        """
        x = []
        x.append(x)
        x
        """,
        raised("TypeError", "is nested more than 100 levels deep"),
        limits=BUDGET,
    ),
]


test_only_plain_data_crosses = runs(CASES, "Only plain data crosses the boundary, and proxies hide the host.")
test_case_names_are_unique = names_are_unique(CASES)


# -- copies in both directions, and host functions driven by hand ----------------------------------------------


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_mutating_host_data_in_the_sandbox_leaves_the_host_untouched(sb: Sandbox) -> None:
    """Results handed in and arguments handed out are copies: neither side can change the other's objects."""
    shared = {"items": [1, 2], "nested": {"n": 0}}
    kept: list[object] = []

    def get() -> object:
        return shared

    def keep(value: object) -> object:
        kept.append(value)
        return len(kept)

    code = """
    data = await get()
    data["items"].append(3)
    data["nested"]["n"] = 99
    data["new"] = True
    mine = {"xs": [1]}
    await keep(value=mine)
    mine["xs"].append(2)
    again = await get()
    return [again, mine]
    """
    result = await sb.run(textwrap.dedent(code), functions={"get": get, "keep": keep})
    assert result.error is None, result.error
    assert shared == {"items": [1, 2], "nested": {"n": 0}}
    assert kept == [{"xs": [1]}]
    assert result.value == [{"items": [1, 2], "nested": {"n": 0}}, {"xs": [1, 2]}]


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_host_mutating_its_data_after_returning_does_not_reach_the_sandbox(sb: Sandbox) -> None:
    """A host function's result is copied when returned; later host changes are invisible to the run."""
    shared = {"n": 1, "items": [1]}

    def get() -> object:
        return shared

    def touch() -> object:
        shared["n"] = 2
        shared["items"].append(2)  # type: ignore[attr-defined]
        return None

    result = await sb.run("a = await get()\nawait touch()\nreturn a", functions={"get": get, "touch": touch})
    assert result.error is None, result.error
    assert result.value == {"n": 1, "items": [1]}


THROW = """
class Mine(Exception):
    pass
async def f():
    return await slow()
co = f()
co.send(None)
try:
    co.throw(Mine())
except BaseException:
    pass
return 1
"""


async def test_host_function_never_sees_an_object_of_the_code(sandboxes: dict[str, Sandbox]) -> None:
    """Driving a host call by hand (`send`/`throw`) cannot put the code's objects inside a host function."""
    seen: list[BaseException] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except BaseException as exc:
            seen.append(exc)
            raise

    await run(sandboxes["inline"], THROW, functions={"slow": slow}, limits=QUICK)
    await asyncio.sleep(0)
    assert not [exc for exc in seen if getattr(type(exc), "__sandbox_class__", False)]


async def test_oversized_host_reply_is_a_result(sandboxes: dict[str, Sandbox]) -> None:
    """A host function returning more than one frame can carry fails the run; `run` itself does not raise."""

    def big() -> object:
        return ["#" * MiB] * 70  # 70 MiB of JSON from 1 MiB of memory

    result = await run(sandboxes["process"], "return len(await big())", functions={"big": big}, limits=QUICK)
    assert_outcome(result, raised("ValueError", "bytes of JSON, more than the 67,108,864 bytes one call can return"))
    await assert_still_works(sandboxes["process"])
