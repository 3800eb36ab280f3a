"""Red team: what a standard class or function hands the code's own methods and hooks.

`copy.copy` asked the new object for `__setstate__` through the code's `__getattr__` and gave it the original's
real `__dict__` (an asyncio primitive's event loop); a subclass of `asyncio.Queue` overrode the private hook the
queue calls with its waiting Futures; facades handed out a process-wide set and `textwrap`'s shared table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from redteam_kit import Value, case, guard, limit, names_are_unique, policy, raised, run, runs, works_in_cpython

from sandbox._runtime.stdlib.modules import ALLOWED_MODULES

if TYPE_CHECKING:
    from sandbox import Sandbox

CASES = [
    case(
        "copy_copy_hands_the_state_to_a_getattr_setstate",
        """
        import asyncio, copy
        got = []
        class E(asyncio.Event):
            def __getattr__(self, name):
                if name == "__setstate__":
                    return lambda state: got.append(state)
                raise AttributeError(name)
        e = E()
        async def waiter():
            await e.wait()
        t = asyncio.create_task(waiter())
        await asyncio.sleep(0)
        copy.copy(e)
        e.set()
        await t
        return str(type(got[0]["_loop"])) + "PW" + "NED"
        """,
        guard("subclassing `asyncio.Event` is not allowed in the sandbox; keep one as an attribute of your class"),
        control=True,
    ),
    case(
        "queue_private_hook_override_gets_the_waiting_futures",
        """
        import asyncio
        got = []
        class Q(asyncio.Queue):
            def _wakeup_next(self, waiters):
                while waiters:
                    w = waiters.popleft()
                    got.append(w)
                    if not w.done():
                        w.set_result(None)
                        break
        q = Q()
        async def getter():
            return await q.get()
        t = asyncio.create_task(getter())
        await asyncio.sleep(0)
        q.put_nowait(1)
        await t
        return str(getattr(got[0], "get_" + "loop")()) + "PW" + "NED"
        """,
        guard("subclassing `asyncio.Queue` is not allowed in the sandbox"),
        control=True,
    ),
    case(
        "private_hook_override_of_a_standard_base",
        """
        import textwrap
        class W(textwrap.TextWrapper):
            def _split(self, text):
                return [text]
        return W().wrap("a b")
        """,
        guard("a class cannot override `_split` of `TextWrapper` in the sandbox (the standard class calls it"),
    ),
    case(
        "private_hook_override_through_three_argument_type",
        """
        import textwrap
        def munge(self, text):
            return text
        W = type("W", (textwrap.TextWrapper,), {"_munge_whitespace": munge})
        return W().wrap("a b")
        """,
        guard("a class cannot override `_munge_whitespace` of `TextWrapper`"),
    ),
    case(
        "own_helpers_and_public_overrides_beside_a_standard_base",
        """
        import textwrap
        class W(textwrap.TextWrapper):
            def shout(self, text):
                return text.upper()
            def wrap(self, text):
                return super().wrap(self.shout(text))
        return W(width=2).wrap("ab cd")
        """,
        Value(["AB", "CD"]),
    ),
    case(
        "getattr_hook_is_never_asked_for_a_dunder",
        """
        import copy
        asked = []
        class P:
            def __init__(self):
                self.data = {"x": 1}
            def __getattr__(self, name):
                asked.append(name)
                raise AttributeError(name)
        p = P()
        q = copy.copy(p)
        r = copy.deepcopy(p)
        found = getattr(p, "y", "none")
        return [asked, q.data is p.data, r.data == p.data and r.data is not p.data, found]
        """,
        Value([["y"], True, True, "none"]),
    ),
    case(
        "getattr_hook_still_answers_plain_names",
        """
        class Row:
            def __init__(self, values):
                self.values = values
            def __getattr__(self, name):
                try:
                    return self.values[name]
                except KeyError:
                    raise AttributeError(name) from None
        row = Row({"city": "Paris", "_id": 7})
        return [row.city, getattr(row, "_id"), hasattr(row, "zip")]
        """,
        Value(["Paris", 7, False]),
    ),
    case(
        "copy_copy_of_plain_values_as_in_cpython",
        """
        import copy, collections
        d = {"a": [1]}
        c = copy.copy(d)
        dq = copy.copy(collections.deque([1, 2]))
        od = copy.copy(collections.OrderedDict(a=1))
        return [c == d, c is not d, c["a"] is d["a"], list(dq), dict(od), copy.copy((1, 2)), copy.copy({3})]
        """,
        Value([True, True, True, [1, 2], {"a": 1}, [1, 2], [3]]),
        control=True,
    ),
    case(
        "hashlib_algorithms_guaranteed_is_not_the_processes_set",
        """
        import hashlib
        hashlib.algorithms_guaranteed.add("PW" + "NED")
        """,
        raised("AttributeError", "'frozenset' object has no attribute 'add'"),
    ),
    case(
        "textwrap_hands_a_str_subclass_plain_text",
        """
        import textwrap
        seen = []
        class S(str):
            def translate(self, table):
                seen.append(table)
                return self
            def expandtabs(self, tabsize=8):
                return self
        out = [textwrap.fill(S("hello world")), textwrap.TextWrapper(width=2).wrap(S("ab cd")),
               textwrap.shorten(S("a  b"), 10), textwrap.dedent(S("  x"))]
        return [out, len(seen)]
        """,
        Value([["hello world", ["ab", "cd"], "a b", "x"], 0]),
    ),
    *(
        case(
            f"one_call_over_a_huge_range_{name}",
            f"import functools, itertools, math, operator\nreturn {call}",
            limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        )
        for name, call in (
            ("operator_countof", "operator.countOf(range(10**18), -1)"),
            ("operator_indexof", "operator.indexOf(range(10**18), -1)"),
            ("functools_reduce_with_a_lambda", "functools.reduce(lambda a, b: a, range(10**18))"),
            ("math_prod_from_zero", "math.prod(range(10**18), start=0)"),
        )
    ),
    case(
        "one_call_helpers_keep_their_values",
        """
        import functools, itertools, math, operator
        a, b = itertools.tee([1, 2], 2)
        return [operator.countOf([1, 2, 1], 1), operator.indexOf("abc", "c"),
                functools.reduce(lambda x, y: x + y, [1, 2, 3], 10), math.prod([2, 3], start=2), list(a) + list(b)]
        """,
        Value([2, 2, 16, 12, [1, 2, 1, 2]]),
        control=True,
    ),
    case(
        "itertools_tee_of_a_huge_n",
        "import itertools\nreturn len(itertools.tee([], 10**7))",
        limit("memory", "a tuple of length of about 10,000,000", "MemoryError"),
    ),
    case(
        "future_get_loop_by_name",
        """
        import asyncio
        return asyncio.get_loop()
        """,
        policy("`.get_loop` is not allowed: frames, code and the class hierarchy are hidden"),
    ),
]

test_standard_code_hands_the_code_nothing_of_the_host = runs(
    CASES, "What standard classes and functions hand the code's hooks is never the host's own state."
)
test_attacks_work_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_every_module_offered_imports_with_no_mutable_member(sb: Sandbox) -> None:
    """Each facade is built without a list, dict, set or other mutable member (a facade refuses one when made)."""
    modules = sorted(ALLOWED_MODULES)
    code = "\n".join(f"import {name}" for name in modules) + f"\nreturn {len(modules)}"
    result = await run(sb, code)
    assert (result.error, result.value) == (None, len(modules))
