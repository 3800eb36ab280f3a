"""Red team, third review: awaitables the code could drive by hand to get the event loop's own Future.

Every awaitable and iterator type the code can reach, made every way it can make one, is tried with every way
of driving it by hand (`send`, `throw`, `next()`, `iter()`, a `for` loop, `list()`, `yield from`). None may
hand back what it waits on: each attempt is refused, and the run reports which refusal it met.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from review3_kit import Case, Refused, Value, case, check, params

if TYPE_CHECKING:
    from sandbox import Sandbox

_SETUP = """
import asyncio
async def f():
    await asyncio.sleep(0.5)
async def ag():
    await asyncio.sleep(0.5)
    yield 1
class Own:
    def __aiter__(self):
        return self
    async def __anext__(self):
        await asyncio.sleep(0.5)
        return 1
def attempt(drive):
    try:
        got = drive()
    except AttributeError as e:  # the sandbox's refusal is one too
        return "forbidden" if "is not allowed" in str(e) else "no such method"
    except TypeError:
        return "not iterable"
    return "DROVE " + str(got)[:40]
def first(x):
    for item in x:
        return item
def delegate(x):
    def gen():
        yield from x
    return next(gen())
results = []
"""
_DRIVERS = {
    "send": "lambda x: x.send(None)",
    "throw": "lambda x: x.throw(ValueError)",
    "next": "next",
    "iter": "lambda x: next(iter(x))",
    "for": "first",
    "list": "list",
    "yield_from": "delegate",
}
_SOURCES = {
    "a_coroutine": "f()",
    "a_stdlib_coroutine": "asyncio.Event().wait()",
    "asend": "ag().asend(None)",
    "athrow": "ag().athrow(ValueError)",
    "aclose": "ag().aclose()",
    "anext": "anext(ag())",
    "anext_with_a_default": "anext(ag(), None)",
    "anext_of_an_own_iterator_with_a_default": "anext(Own(), None)",
    "an_async_generator_expression_asend": "(x async for x in ag()).asend(None)",
    "a_task": "asyncio.create_task(f())",
    "asyncio_sleep": "asyncio.sleep(0.5)",
    "gather": "asyncio.gather(f())",
    "wait_for": "asyncio.wait_for(f(), 1)",
}
_EXPECTED = {"a_coroutine": ["forbidden", "forbidden", *["not iterable"] * 5]}
"""Refusals that are not the default: the awaitables the code gets have no `send`/`throw` and are not iterable."""


def _code(source: str) -> str:
    lines = [f"results.append(attempt(lambda: ({driver})({source})))" for driver in _DRIVERS.values()]
    return "\n".join(lines) + "\nreturn results"


def _expected(name: str) -> list[str]:
    return _EXPECTED.get(name, ["no such method", "no such method", *["not iterable"] * 5])


DRIVING: list[Case] = [
    case(f"driving_{name}_by_hand", (_SETUP, _code(source)), Value(_expected(name)))
    for name, source in _SOURCES.items()
] + [
    case(
        "driving_a_tool_call_by_hand",
        (_SETUP, _code("echo()")),
        Refused("runtime", "NotAwaitedError", "`echo(...)` must be awaited"),
    ),
    case(
        "a_plain_generator_is_driven_by_hand_as_in_python",
        """
        def echo_back():
            got = yield "ready"
            while True:
                got = yield got * 2
        g = echo_back()
        out = [next(g), g.send(2), g.send(5)]
        try:
            g.throw(ValueError)
        except ValueError:
            out.append("thrown")
        return out
        """,
        Value(["ready", 4, 10, "thrown"]),
    ),
    case(
        "wrapped_awaitables_still_work_with_await",
        """
        import asyncio
        async def ag():
            try:
                yield 1
                yield 2
            finally:
                print("closed")
        it = ag()
        out = [await anext(it), await it.asend(None), await anext(it, "done")]
        await it.aclose()
        g2 = ag()
        await anext(g2)
        try:
            await g2.athrow(ValueError)
        except ValueError:
            out.append("thrown")
        return out
        """,
        Value([1, 2, "done", "thrown"], stdout="closed\nclosed\n"),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(DRIVING))
async def test_awaitables_are_only_awaited(sb: Sandbox, case: Case) -> None:
    """No awaitable the code can make yields what it waits on when driven by hand."""
    await check(sb, case, functions={"echo": lambda *args: list(args)})
