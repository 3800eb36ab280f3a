"""Red team, control flow: exits, stop signals, and code that swallows the limits.

`SystemExit` and `exit()` end only the run, as they end a script (status 0 or None: a success); `KeyboardInterrupt`,
`BaseException` subclasses and forged stop signals end only the run;
`except BaseException`, `finally`, `__exit__` returning true and cancellation swallowed in a loop cannot outlive the
budget, the wall clock, the call limit or the output limit; an exception's `__str__` cannot hang or flood the report.
"""

from __future__ import annotations

from redteam_kit import BUDGET, CALLS, QUICK, WALL, Value, case, limit, names_are_unique, policy, raised, runs

from sandbox import Limits

CASES = [
    case(
        "raise_system_exit",
        "print('done early')\nraise SystemExit(0)\nprint('never')",
        Value(None, stdout="done early\n"),
    ),
    case(
        "raise_system_exit_with_a_status",
        "raise SystemExit(3)",
        raised("SystemExit", "the code exited with status 3"),
    ),
    case(
        "raise_system_exit_in_a_task",
        """
        import asyncio
        async def f():
            raise SystemExit(3)
        await asyncio.gather(f())
        """,
        raised("SystemExit", "the code exited with status 3"),
    ),
    case(
        "exit_builtin",
        "exit(0)",
        Value(None),
    ),
    case(
        "quit_builtin",
        "quit('stopped here')",
        raised("SystemExit", "stopped here"),
    ),
    case(
        "raise_keyboard_interrupt",
        "raise KeyboardInterrupt",
        raised(None, "KeyboardInterrupt ended the run"),
    ),
    case(
        "base_exception_subclass",
        """
        class E(BaseException):
            pass
        raise E('out')
        """,
        raised("E", "out"),
    ),
    case(
        "raise_generator_exit",
        "raise GeneratorExit",
        raised("GeneratorExit", "GeneratorExit"),
    ),
    case(
        "raise_cancelled_error",
        """
        import asyncio
        raise asyncio.CancelledError()
        """,
        raised("CancelledError", "CancelledError"),
    ),
    case(
        "raise_cancelled_error_in_gather",
        """
        import asyncio
        async def f():
            raise asyncio.CancelledError()
        await asyncio.gather(f(), f())
        """,
        raised("CancelledError", "CancelledError"),
    ),
    case(
        "raise_stop_iteration",
        "raise StopIteration",
        raised("RuntimeError", "coroutine raised StopIteration"),
    ),
    case(
        "raise_memory_error",
        "raise MemoryError('mine')",
        limit("memory", "mine", "MemoryError"),
    ),
    case(
        "raise_timeout_error_is_not_a_timeout",
        "raise TimeoutError('mine')",
        raised("TimeoutError", "mine"),
    ),
    case(
        "raise_recursion_error",
        "raise RecursionError('mine')",
        raised("RecursionError", "mine"),
    ),
    case(
        "bare_except_swallows_the_budget",
        """
        while True:
            try:
                while True:
                    pass
            except:
                pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "except_base_exception_swallows_the_budget",
        """
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "bare_except_swallows_the_wall_clock",
        """
        while True:
            try:
                while True:
                    pass
            except:
                pass
        """,
        limit("timeout", "the code ran past its 0.5 s time limit"),
        limits=WALL,
    ),
    case(
        "finally_continue_swallows_the_budget",
        """
        while True:
            try:
                while True:
                    pass
            finally:
                continue
        """,
        policy("`continue` inside `finally` is not allowed"),
    ),
    case(
        "finally_break_swallows_the_budget",
        """
        for i in range(3):
            try:
                while True:
                    pass
            finally:
                break
        return 'PW' + 'NED'
        """,
        policy("`break` inside `finally` is not allowed"),
    ),
    case(
        "finally_return_swallows_the_budget",
        """
        def f():
            try:
                while True:
                    pass
            finally:
                return 'PW' + 'NED'
        return f()
        """,
        policy("`return` inside `finally` is not allowed"),
    ),
    case(
        "except_star_swallows_the_budget",
        """
        while True:
            try:
                while True:
                    pass
            except* BaseException:
                pass
        """,
        policy("`except*` is not allowed"),
    ),
    case(
        "except_exception_group_swallows_the_budget",
        """
        while True:
            try:
                while True:
                    pass
            except BaseExceptionGroup:
                pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "exit_returning_true_swallows_the_budget",
        """
        class Swallow:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return True
        while True:
            with Swallow():
                while True:
                    pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "aexit_returning_true_swallows_cancellation",
        """
        import asyncio
        class Swallow:
            async def __aenter__(self):
                return self
            async def __aexit__(self, *exc):
                return True
        while True:
            async with Swallow():
                await asyncio.sleep(10)
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "except_base_exception_swallows_cancellation",
        """
        import asyncio
        while True:
            try:
                await asyncio.sleep(10)
            except BaseException:
                pass
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "except_cancelled_error_swallows_cancellation",
        """
        import asyncio
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                pass
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "finally_awaits_after_cancellation",
        """
        import asyncio
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(10)
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "swallowing_inside_a_gathered_task",
        """
        import asyncio
        async def stubborn():
            while True:
                try:
                    await asyncio.sleep(10)
                except BaseException:
                    pass
        await asyncio.gather(stubborn(), stubborn())
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "generator_finally_loops_forever_on_close",
        """
        def g():
            try:
                yield 1
            finally:
                while True:
                    pass
        gen = g()
        next(gen)
        return 1
        """,
        limit("timeout", "whole operation budget"),  # closed as the run returns: its loop used the budget
    ),
    case(
        "del_method_loops_forever",
        """
        class X:
            def __del__(self):
                while True:
                    pass
        x = X()
        return 1
        """,
        policy("`__del__` is a reserved name"),
    ),
    case(
        "unawaited_coroutine_of_the_model",
        """
        async def f():
            pass
        f()
        return 1
        """,
        Value(1),
    ),
    case(
        "exception_str_loops_forever",
        """
        class E(Exception):
            def __str__(self):
                while True:
                    pass
        raise E()
        """,
        raised("E", "<the exception's message could not be shown>"),
    ),
    case(
        "exception_str_raises_system_exit",
        """
        class E(Exception):
            def __str__(self):
                raise SystemExit(1)
        raise E()
        """,
        raised("E", "<the exception's message could not be shown>"),
    ),
    case(
        "exception_str_is_huge",
        """
        class E(Exception):
            def __str__(self):
                return '#' * 900_000
        raise E()
        """,
        raised(
            "E",
            "#" * 1767 + " [... 898,233 characters cut ...]",  # the message is cut, and says so
        ),
    ),
    case(
        "generator_ignores_generator_exit",
        """
        def g():
            while True:
                try:
                    yield 1
                except GeneratorExit:
                    pass
        gen = g()
        next(gen)
        gen.close()
        """,
        raised("RuntimeError", "generator ignored GeneratorExit"),
    ),
    case(
        "swallowing_the_call_limit",
        """
        for i in range(2000):
            try:
                await echo(i=i)
            except BaseException:
                pass
        return 'PW' + 'NED'
        """,
        limit("call_limit", "the code made more than 1,000 tool calls"),
        limits=CALLS,
    ),
    case(
        "swallowing_the_output_limit",
        """
        while True:
            try:
                print('#' * 1000)
            except BaseException:
                pass
        """,
        limit("output_limit", "the code printed more than 10,000 characters"),
    ),
    case(
        "swallowing_the_size_guard",
        """
        while True:
            try:
                x = '#' * 10**9
            except BaseException:
                pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=Limits(timeout=10.0, operations=30_000, max_size=1_000_000),  # each refusal is slow: a small budget
    ),
    case(
        "swallowing_recursion_errors",
        """
        def f(n):
            try:
                return f(n + 1)
            except RecursionError:
                return f(n + 1)
        f(0)
        """,
        limit("timeout", "the code ran past its 0.5 s time limit"),
        limits=Limits(timeout=0.5, operations=300_000, max_size=1_000_000),
    ),
    case(
        "base_exception_group_of_exits",
        'raise BaseExceptionGroup("g", [SystemExit(3), KeyboardInterrupt()])',
        raised("BaseExceptionGroup", "g (2 sub-exceptions)"),
    ),
    case(
        "base_exception_group_of_exits_in_a_task",
        """
        import asyncio
        async def f():
            raise BaseExceptionGroup("g", [SystemExit(3)])
        await asyncio.gather(f())
        """,
        raised("BaseExceptionGroup", "g (1 sub-exception)"),
    ),
    case(
        "gathered_exit_returned_as_a_value",
        """
        import asyncio
        async def f():
            raise SystemExit(3)
        got = await asyncio.gather(f(), return_exceptions=True)
        return [str(g) for g in got]
        """,
        Value(["the code exited with status 3"]),
    ),
    case(
        "stop_signal_from_exit_reraised_with_a_known_kind",
        """
        import asyncio
        async def leave():
            exit(3)
        Stop = type((await asyncio.gather(leave(), return_exceptions=True))[0])
        raise Stop("timeout", "a stop of the code's own making")
        """,
        raised("StopRun", "a stop of the code's own making"),
    ),
    case(
        "exit_caught_and_the_run_goes_on",
        """
        try:
            exit()
        except BaseException:
            pass
        return 1
        """,
        Value(1),
    ),
    case(
        "exception_str_recurses",
        """
        class E(Exception):
            def __str__(self):
                return str(self)
        raise E()
        """,
        raised("E", "<the exception's message could not be shown>"),
    ),
    case(
        "long_exception_context_chain",
        """
        e = None
        for i in range(5000):
            try:
                raise ValueError(i) from e
            except ValueError as new:
                e = new
        raise e
        """,
        raised("ValueError", "4999"),
    ),
    case(
        "sort_key_mutates_the_list",
        """
        xs = list(range(100))
        xs.sort(key=lambda x: xs.clear() or x)
        return len(xs)
        """,
        Value(100),
    ),
    case(
        "heap_comparison_mutates_the_heap",
        """
        import heapq
        h = []
        class K:
            def __init__(self, v):
                self.v = v
            def __lt__(self, other):
                h.clear()
                return self.v < other.v
        for i in range(50):
            heapq.heappush(h, K(i))
        return len(h)
        """,
        raised("RuntimeError", "list changed size during iteration"),
    ),
    case(
        "dict_key_equality_mutates_the_dict",
        """
        d = {}
        class K:
            def __hash__(self):
                return 1
            def __eq__(self, other):
                d.clear()
                return False
        for i in range(50):
            d[K()] = i
        return len(d)
        """,
        Value(1),
    ),
    case(
        "forged_stop_signal_with_an_unknown_kind",
        """
        import asyncio
        async def leave():
            exit(3)
        Stop = type((await asyncio.gather(leave(), return_exceptions=True))[0])
        raise Stop("bogus-kind", "anything")
        """,
        raised("StopRun", "anything"),
    ),
    case(
        "forged_clean_exit_signal",
        """
        import asyncio
        async def leave():
            exit(3)
        Stop = type((await asyncio.gather(leave(), return_exceptions=True))[0])
        raise Stop("exit", "")
        """,
        raised("StopRun", "StopRun"),
    ),
    case(
        "exception_class_name_floods_the_message",
        'raise type("E" * 100_000, (Exception,), {})("x")',
        raised("E" * 67 + " [... 99,933 characters cut ...]", "x"),
    ),
    case(
        "long_source_line_floods_the_traceback",
        "def f(n):\n    return f(n + 1) if n < 30 else 1 / 0  # " + "x" * 60_000 + "\nf(0)",
        raised("ZeroDivisionError", "division by zero"),
    ),
    case(
        "forged_stop_signal",
        """
        import asyncio
        async def leave():
            exit(3)
        Stop = type((await asyncio.gather(leave(), return_exceptions=True))[0])
        x = Stop('ok', 'forged')
        raise x
        """,
        raised("StopRun", "forged"),
        limits=BUDGET,
    ),
    case(
        "system_exit",
        "raise SystemExit(0)",
        Value(None),
        limits=BUDGET,
    ),
    case(
        "keyboard_interrupt",
        "raise KeyboardInterrupt",
        raised(None, "KeyboardInterrupt ended the run"),
        limits=BUDGET,
    ),
    case(
        "endless_loop_under_a_budget",
        """
        while True:
            pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=BUDGET,
    ),
    case(
        "bare_except_base_exception_swallows_the_budget",
        """
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=BUDGET,
    ),
    case(
        "generator_finally_loops_after_the_run",
        """
        def g():
            try:
                yield 1
            finally:
                while True:
                    pass
        x = g()
        next(x)
        """,
        limit("timeout", "whole operation budget"),
        limits=BUDGET,
    ),
    case(
        "exception_str_loops",
        """
        class E(Exception):
            def __str__(self):
                while True:
                    pass
        raise E()
        """,
        raised("E", "<the exception's message could not be shown>"),
        limits=BUDGET,
    ),
    # A `for` loop takes its ticks through its iterable (`itertools.compress` over the budget's ticks, in C):
    # every form of it stays budgeted, a swallowed stop comes back at the next item, and so does a recursion error.
    case(
        "for_loop_swallowing_its_stop_keeps_stopping",
        """
        import itertools
        n = 0
        while True:
            try:
                for i in itertools.count():
                    n += 1
            except BaseException:
                n += 1
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=BUDGET,
    ),
    case(
        "for_loop_with_a_tuple_target_is_ticked",
        """
        import itertools
        for a, (b, *c) in zip(itertools.count(), itertools.repeat((1, 2, 3))):
            pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=BUDGET,
    ),
    case(
        "generator_expression_with_a_tuple_target_is_ticked",
        """
        import itertools
        return sum(a for a, b in zip(itertools.count(), itertools.count()))
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=BUDGET,
    ),
    case(
        "async_for_over_an_endless_async_iterator_is_ticked",
        """
        class Forever:
            def __aiter__(self):
                return self

            async def __anext__(self):
                return 1

        async for x in Forever():
            pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=QUICK,
    ),
    case(
        "for_loop_ticks_at_the_recursion_limit",
        """
        def f(n):
            try:
                return f(n + 1)
            except RecursionError:
                for i in range(10**9):
                    pass
        f(0)
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=BUDGET,
    ),
    case(
        "generator_finally_for_loop_after_the_run",
        """
        import itertools
        def g():
            try:
                yield 1
            finally:
                for i in itertools.count():
                    pass
        x = g()
        next(x)
        """,
        limit("timeout", "whole operation budget"),
        limits=BUDGET,
    ),
]


test_control_flow_cannot_outlive_the_limits = runs(CASES, "Exits end only the run, and no swallowing outlives a limit.")
test_case_names_are_unique = names_are_unique(CASES)
