"""Red team, async: the event loop, tasks, awaitables driven by hand, and timers.

The asyncio facade hands out no loop, no Future and no real Task; no awaitable yields what it waits on when driven
by hand (`send`, `throw`, `next`, iteration); delays reach the loop as plain floats; tasks and async generators that
swallow their cancellation end with the run.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from redteam_kit import (
    BOTH,
    BUDGET,
    QUICK,
    Case,
    HostKit,
    Outcome,
    Refused,
    Value,
    case,
    check,
    guard,
    limit,
    names_are_unique,
    params,
    policy,
    raised,
    run,
    runs,
    works_in_cpython,
)

from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from sandbox import Isolation

_DRIVE = """
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
"""What every `driven_by_hand` case defines: a coroutine, an async generator, an own async iterator, and `attempt`,
which names how a drive failed (the sandbox's refusal, a missing method, nothing to iterate) or what it got."""
_DRIVES = (
    "(lambda x: x.send(None))",
    "(lambda x: x.throw(ValueError))",
    "(next)",
    "(lambda x: next(iter(x)))",
    "(first)",
    "(list)",
    "(delegate)",
)
"""The seven ways to drive an awaitable by hand: `send`, `throw`, `next`, `iter`, a `for` loop, `list`, `yield from`."""


UNDRIVABLE = Value(["no such method", "no such method", *["not iterable"] * 5])
"""What `driven_by_hand` returns for a facade's awaitable: it has no `send` or `throw`, and nothing to iterate."""


def driven_by_hand(name: str, awaitable: str, expected: Outcome, **kwargs: Any) -> Case:
    """A case that drives `awaitable` (an expression) each of the seven ways and returns how each attempt ended."""
    drives = "".join(f"results.append(attempt(lambda: {drive}({awaitable})))\n" for drive in _DRIVES)
    return case(name, (_DRIVE, drives + "return results"), expected, **kwargs)


_LATE = """
import asyncio
class Late:
    def __radd__(self, other):
        return self
    def __sub__(self, other):
        return 1000.0
    def __lt__(self, other):
        return False
    def __gt__(self, other):
        return True
    def __float__(self):
        return 1000.0
"""
"""A delay of the code's own class that compares and converts like a large number; timers take real numbers only."""

CASES = [
    case(
        "return_task",
        """
        import asyncio
        return asyncio.create_task(asyncio.sleep(0))
        """,
        raised(
            "TypeError",
            "the returned value is a 'TaskHandle' object: return plain data (dict, list, str, int, float, bool, None)",
        ),
    ),
    case(
        "task_get_loop",
        """
        import asyncio
        t = asyncio.create_task(asyncio.sleep(0))
        loop = getattr(t, "get_" + "loop")()
        await t
        return str(loop) + "PW" + "NED"
        """,
        guard("`.get_loop` is not allowed: frames, code and the class hierarchy are hidden"),
        control=True,
    ),
    case(
        "task_private_loop",
        """
        import asyncio
        t = asyncio.create_task(asyncio.sleep(0))
        loop = t._loop
        await t
        return str(loop) + "PW" + "NED"
        """,
        guard("`._loop` is not allowed"),
        control=True,
    ),
    case(
        "task_group_private_loop",
        """
        import asyncio
        async with asyncio.TaskGroup() as tg:
            loop = getattr(tg, "_" + "loop")
        return str(loop) + "PW" + "NED"
        """,
        guard("`._loop` is not allowed"),
        control=True,
    ),
    case(
        "task_group_made_again_by_its_type",
        """
        import asyncio
        class Facade:
            pass
        tg = type(asyncio.TaskGroup())(Facade())
        return "PW" + "NED"
        """,
        raised("TypeError", "a TaskGroup is made with `asyncio.TaskGroup()`"),
    ),
    case(
        "task_get_stack_frames",
        """
        import asyncio
        async def work():
            await asyncio.sleep(0)
        t = asyncio.create_task(work())
        await asyncio.sleep(0)
        frames = getattr(t, "get_" + "stack")()
        await t
        return str(getattr(frames[0], "f_" + "globals")) + "PW" + "NED"
        """,
        guard("`.get_stack` is not allowed: frames, code and the class hierarchy are hidden"),
        control=True,
    ),
    case(
        "task_get_coro_frame",
        """
        import asyncio
        t = asyncio.create_task(asyncio.sleep(0))
        coro = getattr(t, "get_" + "coro")()
        await t
        return str(getattr(coro, "cr_" + "code")) + "PW" + "NED"
        """,
        guard("`.get_coro` is not allowed: frames, code and the class hierarchy are hidden"),
        control=True,
    ),
    case(
        "get_event_loop",
        """
        import asyncio
        return str(asyncio.get_event_loop()) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'get_event_loop' in the sandbox"),
        control=True,
    ),
    case(
        "get_running_loop",
        """
        import asyncio
        return str(asyncio.get_running_loop()) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'get_running_loop' in the sandbox"),
        control=True,
    ),
    case(
        "new_event_loop",
        """
        import asyncio
        loop = asyncio.new_event_loop()
        loop.close()
        return 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'new_event_loop' in the sandbox"),
        control=True,
    ),
    case(
        "current_task_loop",
        """
        import asyncio
        return str(getattr(asyncio.current_task(), "get_" + "loop")()) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'current_task' in the sandbox"),
        control=True,
    ),
    case(
        "all_tasks_of_the_host",
        """
        import asyncio
        return str(len(asyncio.all_tasks())) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'all_tasks' in the sandbox"),
        control=True,
    ),
    case(
        "lock_private_get_loop",
        """
        import asyncio
        lock = asyncio.Lock()
        return str(lock._get_loop()) + 'PW' + 'NED'
        """,
        guard("`._get_loop` is not allowed"),
        control=True,
    ),
    case(
        "bare_future_loop",
        """
        import asyncio
        return str(getattr(asyncio.Future(), "get_" + "loop")()) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'Future' in the sandbox"),
        control=True,
    ),
    case(
        "gather_future_loop",
        """
        import asyncio
        return str(getattr(asyncio.gather(), "get_" + "loop")()) + 'PW' + 'NED'
        """,
        guard("`.get_loop` is not allowed: frames, code and the class hierarchy are hidden"),
        control=True,
    ),
    case(
        "ensure_future_loop",
        """
        import asyncio
        fut = asyncio.ensure_future(asyncio.sleep(0))
        loop = getattr(fut, "get_" + "loop")()
        await fut
        return str(loop) + "PW" + "NED"
        """,
        guard("`.get_loop` is not allowed: frames, code and the class hierarchy are hidden"),
        control=True,
    ),
    case(
        "loop_subprocess_exec",
        """
        import asyncio
        loop = asyncio.get_running_loop()
        transport, _ = await loop.subprocess_exec(asyncio.SubprocessProtocol, "true")
        transport.close()
        return "PW" + "NED"
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'get_running_loop' in the sandbox"),
        control=True,
    ),
    case(
        "to_thread_escapes_the_budget",
        """
        import asyncio
        return await asyncio.to_thread(str, 'PW' + 'NED')
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'to_thread' in the sandbox"),
        control=True,
    ),
    case(
        "asyncio_run_nested_loop",
        """
        import asyncio
        async def f():
            return 'PW' + 'NED'
        def nested():  # at the top level, `asyncio.run(f())` is `await f()`: no second loop to reach
            return asyncio.run(f())
        return nested()
        """,
        raised("RuntimeError", "`asyncio.run()` is not needed here: top-level `await` works, so write `await main()`"),
    ),
    case(
        "pending_call_gathered_twice",
        """
        import asyncio
        c = echo(x=1)
        return await asyncio.gather(c, c)
        """,
        Value([{"args": [], "kwargs": {"x": 1}}, {"args": [], "kwargs": {"x": 1}}]),
    ),
    case(
        "lazy_sleep_awaited_twice",
        """
        import asyncio
        s = asyncio.sleep(0, 5)
        return [await s, await s]
        """,
        Value([5, 5]),
    ),
    case(
        "task_handle_awaited_twice",
        """
        import asyncio
        t = asyncio.create_task(asyncio.sleep(0, 3))
        return [await t, await t]
        """,
        Value([3, 3]),
    ),
    case(
        "deepcopy_of_a_task_handle",
        """
        import asyncio, copy
        t = asyncio.create_task(asyncio.sleep(0))
        memo = {}
        try:
            copy.deepcopy(t, memo)
        except Exception:
            pass
        await t
        return len(memo)
        """,
        Value(0),
    ),
    case(
        "host_call_cancelled_by_wait_for",
        """
        import asyncio
        await asyncio.wait_for(echo(x=1), 0)
        """,
        raised("TimeoutError", "TimeoutError"),
    ),
    case(
        "uncalled_proxy_as_a_task",
        """
        import asyncio
        asyncio.create_task(echo)
        """,
        raised("TypeError", "expected an awaitable (a coroutine or a tool call), got 'function'"),
    ),
    case(
        "task_handle_add_done_callback",
        """
        import asyncio
        t = asyncio.create_task(asyncio.sleep(0))
        t.add_done_callback(print)
        await t
        """,
        raised("AttributeError", "'TaskHandle' object has no attribute 'add_done_callback'"),
    ),
    case(
        "timeout_context_private_task",
        """
        import asyncio
        async with asyncio.timeout(5) as t:
            return str(t._task) + "PW" + "NED"
        """,
        guard("`._task` is not allowed"),
    ),
    case(
        "queue_private_loop",
        """
        import asyncio
        return str(asyncio.Queue()._loop) + "PW" + "NED"
        """,
        guard("`._loop` is not allowed"),
    ),
    case(
        "semaphore_private_waiters",
        """
        import asyncio
        return str(asyncio.Semaphore(0)._waiters) + "PW" + "NED"
        """,
        guard("`._waiters` is not allowed"),
    ),
    *(
        case(
            f"asyncio_{name}",
            f"""
            import asyncio
            return str(asyncio.{name}) + 'PW' + 'NED'
            """,
            raised("AttributeError", f"module 'asyncio' has no attribute '{name}' in the sandbox"),
        )
        for name in (
            "shield",
            "get_event_loop_policy",
            "run_coroutine_threadsafe",
            "start_server",
            "Future",
        )
    ),
    case(
        "lazy_class_rebuilt_from_type",
        """
        import asyncio
        L = type(asyncio.sleep(0))
        return await L(lambda: asyncio.sleep(0, "fine"))
        """,
        Value("fine"),
    ),
    case(
        "attribute_error_obj_is_what_the_code_passed",
        """
        import asyncio
        try:
            asyncio.Task(5).done()
        except AttributeError as e:
            return e.obj
        """,
        Value(5),
    ),
    case(
        "asyncio_lock_subclass_reads_the_loop",
        """
        import asyncio
        class L(asyncio.Lock):
            pass
        return str(L()._get_loop()) + "PW" + "NED"
        """,
        guard("subclassing `asyncio.Lock` is not allowed in the sandbox"),
    ),
    case(
        "timeout_subclass_reads_the_task",
        """
        import asyncio
        class T(type(asyncio.timeout(1))):
            pass
        async with T(None) as t:
            task = t._task
        return str(getattr(task, "get_" + "loop")()) + "PW" + "NED"
        """,
        guard("subclassing `asyncio.Timeout` is not allowed in the sandbox; keep one as an attribute of your class"),
    ),
    case(
        "coroutine_driven_by_hand_yields_a_future",
        """
        import asyncio
        async def f():
            await asyncio.sleep(1)
        co = f()
        future = co.send(None)
        co.close()
        return str(getattr(future, "get_" + "loop")()) + "PW" + "NED"
        """,
        guard("`.send()` is not allowed"),
    ),
    case(
        "as_completed_item_driven_by_hand_yields_a_future",
        """
        import asyncio
        async def s():
            await asyncio.sleep(0.1)
        co = next(iter(asyncio.as_completed([s()])))
        future = co.send(None)
        co.close()
        return str(getattr(future, "get_" + "loop")()) + "PW" + "NED"
        """,
        raised("AttributeError", "'Lazy' object has no attribute 'send'"),
    ),
    case(
        "gather_of_a_fake_future_hands_out_the_context",
        """
        import asyncio
        got = []
        class FakeLoop:
            def get_debug(self):
                return False
            def call_soon(self, callback, *args, context=None):
                got.append(context)
        class Fake:
            _asyncio_future_blocking = False
            def __init__(self):
                self.callbacks = []
            def get_loop(self):
                return FakeLoop()
            def add_done_callback(self, callback, context=None):
                self.callbacks.append(callback)
            def cancelled(self):
                return False
            def exception(self):
                return None
            def result(self):
                return 1
        fake = Fake()
        asyncio.gather(asyncio.Task(fake))
        for callback in fake.callbacks:
            callback(fake)
        seen = [f"{k}={v}" for ctx in got if ctx is not None for k, v in ctx.items()]
        return str(seen) + "PW" + "NED"
        """,
        raised("TypeError", "`asyncio.Task(...)` is not a way to start a task"),
    ),
    driven_by_hand(
        "driving_a_coroutine_by_hand",
        "f()",
        Value(
            ["forbidden", "forbidden", "not iterable", "not iterable", "not iterable", "not iterable", "not iterable"]
        ),
    ),
    driven_by_hand("driving_a_stdlib_coroutine_by_hand", "asyncio.Event().wait()", UNDRIVABLE),
    driven_by_hand("driving_asend_by_hand", "ag().asend(None)", UNDRIVABLE),
    driven_by_hand("driving_athrow_by_hand", "ag().athrow(ValueError)", UNDRIVABLE),
    driven_by_hand("driving_aclose_by_hand", "ag().aclose()", UNDRIVABLE),
    driven_by_hand("driving_anext_by_hand", "anext(ag())", UNDRIVABLE),
    driven_by_hand("driving_anext_with_a_default_by_hand", "anext(ag(), None)", UNDRIVABLE),
    driven_by_hand("driving_anext_of_an_own_iterator_with_a_default_by_hand", "anext(Own(), None)", UNDRIVABLE),
    driven_by_hand(
        "driving_an_async_generator_expression_asend_by_hand", "(x async for x in ag()).asend(None)", UNDRIVABLE
    ),
    driven_by_hand("driving_a_task_by_hand", "asyncio.create_task(f())", UNDRIVABLE),
    driven_by_hand("driving_asyncio_sleep_by_hand", "asyncio.sleep(0.5)", UNDRIVABLE),
    driven_by_hand("driving_gather_by_hand", "asyncio.gather(f())", UNDRIVABLE),
    driven_by_hand("driving_wait_for_by_hand", "asyncio.wait_for(f(), 1)", UNDRIVABLE),
    driven_by_hand(
        "driving_a_tool_call_by_hand",
        "echo()",
        raised(
            "NotAwaitedError",
            "a call was never awaited, so it never ran: `echo(...)` must be awaited: write `await echo(...)`",
        ),
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
    case(
        "sleep_with_a_delay_of_the_codes_class",
        (_LATE, "await asyncio.sleep(Late())"),
        raised("TypeError", "a delay must be a number of seconds (an int or a float), not 'Late'"),
    ),
    case(
        "timeout_with_a_delay_of_the_codes_class",
        (
            _LATE,
            """
            async with asyncio.timeout(Late()):
                pass
            """,
        ),
        raised("TypeError", "a timeout must be a number of seconds (an int or a float), not 'Late'"),
    ),
    case(
        "reschedule_with_a_delay_of_the_codes_class",
        (
            _LATE,
            """
            async with asyncio.timeout(None) as t:
                t.reschedule(Late())
            """,
        ),
        raised("TypeError", "a deadline must be a number of seconds (an int or a float), not 'Late'"),
    ),
    case(
        "wait_for_with_a_delay_of_the_codes_class",
        (_LATE, "await asyncio.wait_for(asyncio.sleep(0), Late())"),
        raised("TypeError", "a timeout must be a number of seconds (an int or a float), not 'Late'"),
    ),
    case(
        "wait_with_a_delay_of_the_codes_class",
        (_LATE, "await asyncio.wait([asyncio.create_task(asyncio.sleep(0))], timeout=Late())"),
        raised("TypeError", "a timeout must be a number of seconds (an int or a float), not 'Late'"),
    ),
    case(
        "as_completed_with_a_delay_of_the_codes_class",
        (_LATE, "asyncio.as_completed([asyncio.sleep(0)], timeout=Late())"),
        raised("TypeError", "a timeout must be a number of seconds (an int or a float), not 'Late'"),
    ),
    case(
        "sleep_for_nan_seconds",
        """
        import asyncio
        await asyncio.sleep(float('nan'))
        """,
        raised("ValueError", "a delay must be a number of seconds, not NaN"),
    ),
    case(
        "a_delay_of_an_int_subclass_is_its_value",
        """
        import asyncio
        class Zero(int):
            def __float__(self):
                return 1000.0
            def __radd__(self, other):
                return 1000.0
        await asyncio.sleep(Zero(0))
        async with asyncio.timeout(Zero(5)):
            await asyncio.sleep(0)
        return "slept"
        """,
        Value("slept"),
    ),
    case(
        "queue_and_semaphore_sizes_are_read_once",
        """
        import asyncio
        class Size:
            def __init__(self, first):
                self.first, self.reads = first, 0
            def __index__(self):
                self.reads += 1
                return self.first if self.reads == 1 else 0
        size, value = Size(2), Size(1)
        q = asyncio.Queue(size)
        await q.put(1)
        await q.put(2)
        s = asyncio.Semaphore(value)
        async with s:
            pass
        return [q.full(), q.maxsize, size.reads, value.reads]
        """,
        Value([True, 2, 1, 1]),
    ),
    case(
        "coroutine_send_by_hand",
        """
        async def f():
            pass
        c = f()
        c.send(None)
        """,
        guard("`.send()` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "coroutine_await_dunder",
        """
        async def f():
            pass
        f().__await__()
        """,
        policy("`.__await__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "asyncio_get_event_loop",
        """
        import asyncio
        asyncio.get_event_loop
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'get_event_loop' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "asyncio_get_running_loop",
        """
        import asyncio
        asyncio.get_running_loop
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'get_running_loop' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "asyncio_future",
        """
        import asyncio
        asyncio.Future
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'Future' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "task_get_coro",
        """
        import asyncio
        async def f():
            return 1
        t = asyncio.create_task(f())
        t.get_coro()
        """,
        policy("`.get_coro` is not allowed: frames, code and the class hierarchy are hidden"),
        limits=BUDGET,
    ),
    case(
        "gather_get_loop",
        """
        import asyncio
        async def f():
            return 1
        asyncio.gather(f()).get_loop()
        """,
        policy("`.get_loop` is not allowed: frames, code and the class hierarchy are hidden"),
        limits=BUDGET,
    ),
    case(
        "await_plain_iterator",
        """
        class A:
            def __iter__(self):
                yield 1
        await A()
        """,
        raised("TypeError", "object A can't be used in 'await' expression"),
        limits=BUDGET,
    ),
    case(
        "async_generator_finally_loops",
        """
        async def g():
            try:
                yield 1
            finally:
                while True:
                    pass
        x = g()
        await anext(x)
        """,
        Value(1),
        limits=BUDGET,
    ),
    case(
        "sleep_forever",
        """
        import asyncio
        await asyncio.sleep(10**9)
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=Limits(timeout=0.5, operations=1_000_000),
    ),
    case(
        "task_left_running",
        """
        import asyncio
        async def f():
            while True:
                await asyncio.sleep(0)
        asyncio.create_task(f())
        1
        """,
        Value(1),
        limits=BUDGET,
        then=("2", 2),
    ),
]


test_the_event_loop_stays_out_of_reach = runs(
    CASES, "No loop, Future or Task of the host is reachable, and nothing of a run outlives it."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)


# -- tasks and async generators that swallow their cancellation end with the run -----------------------------------

_STUBBORN = """
import asyncio
async def stubborn():
    try:
        yield 1
    finally:
        try:
            await asyncio.sleep(30)
        except BaseException:
            await asyncio.sleep(30)
"""

LEFTOVERS: list[Case] = [
    case(
        "async_generator_finally_swallows_the_close_timeout",
        (_STUBBORN, "g = stubborn()\nawait anext(g)\nreturn 1"),
        Value(1),
    ),
    case(
        "forty_async_generators_swallow_the_close_timeout",
        (_STUBBORN, "gens = [stubborn() for _ in range(40)]\nfor g in gens:\n    await anext(g)\nreturn 40"),
        Value(40),
    ),
    case(
        "the_main_task_swallows_its_cancellation_at_the_timeout",
        """
        import asyncio
        try:
            await asyncio.sleep(30)
        except BaseException:
            await asyncio.sleep(30)
        """,
        Refused("timeout", None, "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=Limits(timeout=0.5, operations=300_000, max_size=1_000_000),
    ),
    case(
        "a_task_swallows_its_cancellation_at_the_end_of_the_run",
        """
        import asyncio
        async def stubborn():
            for _ in range(3):
                try:
                    await asyncio.sleep(30)
                except BaseException:
                    pass
        t = asyncio.create_task(stubborn())
        await asyncio.sleep(0)
        return 1
        """,
        Value(1),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "isolation"), params(LEFTOVERS))
async def test_nothing_of_the_run_outlives_it(sb: Sandbox, case: Case, isolation: str, host_secret: str) -> None:
    """Tasks and async generators that swallow their cancellation end with the run; no task of it is left."""
    before = len(asyncio.all_tasks())
    await check(sb, case, isolation, host_secret)
    if isolation == "inline":
        assert len(asyncio.all_tasks()) == before


# -- effects a single result does not show -------------------------------------------------------------------

LATE_CALL = """
async def later():
    try:
        yield 1
    finally:
        await asyncio.sleep(0.2)
        await echo(x="late")
import asyncio
g = later()
await anext(g)
return 1
"""


@pytest.mark.parametrize("isolation", BOTH)
async def test_no_host_call_after_the_run_ends(isolation: Isolation, host_secret: str) -> None:
    """Once `run` returns, the code calls nothing: not its own host functions, not the next run's.

    Inline, the loop's async-generator finalizer runs `later()`'s finally after the result is back, and `echo` is
    called. With processes, the late call crosses the pipe during the next run on the same worker and is served by
    that run's functions (another conversation's tools, in a shared pool).
    """
    first, second = HostKit(host_secret), HostKit(host_secret)
    async with Sandbox(isolation=isolation, max_runs=1, limits=QUICK) as sb:  # one worker: the next run lands on it
        result = await run(sb, LATE_CALL, functions=first.functions())
        assert result.error is None, result.error
        await anyio.sleep(0.4)
        after = await run(sb, "import asyncio\nawait asyncio.sleep(0.3)\nreturn 2", functions=second.functions())
    assert after.value == 2
    assert first.received == []
    assert second.received == []


async def test_host_context_variables_stay_hidden(sandboxes: dict[str, Sandbox], host_secret: str) -> None:
    """Context variables the host set (a request id, a user) never reach the code."""
    kit = HostKit(host_secret)
    leaky = next(c for c in CASES if c.name == "gather_of_a_fake_future_hands_out_the_context")
    variable: contextvars.ContextVar[str] = contextvars.ContextVar("host_request_user")
    token = variable.set(host_secret)
    try:
        result = await run(sandboxes["inline"], leaky.code, functions=kit.functions(), limits=QUICK)
    finally:
        variable.reset(token)
    assert host_secret not in json.dumps(result.value)
