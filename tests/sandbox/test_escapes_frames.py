"""Red team, frames and code objects: generators, coroutines, tracebacks and function internals.

Every handle on a frame (`gi_frame`, `cr_frame`, `ag_frame`, `tb_frame`, `f_back`, `f_globals`) or a code
object (`gi_code`, `__code__`), by attribute or by `getattr`, is refused: a frame's globals would hand out the real
builtins.
"""

from __future__ import annotations

from redteam_kit import BUDGET, Value, case, guard, names_are_unique, policy, raised, runs, works_in_cpython

CASES = [
    case(
        "generator_frame_walk",
        """
        def g():
            yield me.gi_frame.f_back
        me = g()
        frame = next(me)
        seen = []
        while frame is not None:
            seen.append(sorted(frame.f_globals)[:3])
            frame = frame.f_back
        return str(seen) + "PW" + "NED"
        """,
        policy("`.f_back` is not allowed"),
        control=True,
    ),
    case(
        "generator_frame_through_getattr",
        """
        def g():
            yield 1
        me = g()
        frame = getattr(me, "gi_" + "frame")
        return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
        """,
        guard("`.gi_frame` is not allowed"),
        control=True,
    ),
    case(
        "generator_frame_builtins",
        """
        def g():
            yield 1
        frame = getattr(g(), "gi_frame")
        return str(getattr(frame, "f_builtins")["len"]) + "PW" + "NED"
        """,
        guard("`.gi_frame` is not allowed"),
        control=True,
    ),
    case(
        "generator_code_object",
        """
        gen = (x for x in [])
        code = getattr(gen, "gi_" + "code")
        return str(getattr(code, "co_" + "names")) + "PW" + "NED"
        """,
        guard("`.gi_code` is not allowed"),
        control=True,
    ),
    case(
        "coroutine_cr_frame",
        """
        async def c():
            return 1
        co = c()
        frame = co.cr_frame
        co.close()
        return str(list(frame.f_globals)) + "PW" + "NED"
        """,
        policy("`.cr_frame` is not allowed"),
        control=True,
    ),
    case(
        "coroutine_cr_frame_through_getattr",
        """
        async def c():
            return 1
        co = c()
        try:
            frame = getattr(co, "cr_" + "frame")
            return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
        finally:
            co.close()
        """,
        guard("`.cr_frame` is not allowed"),
        control=True,
    ),
    case(
        "async_generator_ag_frame",
        """
        async def ag():
            yield 1
        frame = getattr(ag(), "ag_" + "frame")
        return str(frame) + "PW" + "NED"
        """,
        guard("`.ag_frame` is not allowed"),
        control=True,
    ),
    case(
        "traceback_tb_frame",
        """
        try:
            1 / 0
        except Exception as e:
            tb = e.__traceback__
        return str(list(tb.tb_frame.f_globals)) + "PW" + "NED"
        """,
        policy("`.__traceback__` is not allowed"),
        control=True,
    ),
    case(
        "traceback_through_getattr",
        """
        try:
            1 / 0
        except Exception as e:
            tb = getattr(e, "__trace" + "back__")
        frame = getattr(tb, "tb_" + "frame")
        return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
        """,
        guard("`.__traceback__` is not allowed"),
        control=True,
    ),
    case(
        "exception_context_walk",
        """
        try:
            try:
                1 / 0
            except Exception:
                raise ValueError("x")
        except Exception as e:
            ctx = getattr(e, "__con" + "text__")
        return str(getattr(ctx, "__trace" + "back__")) + "PW" + "NED"
        """,
        guard("`.__context__` is not allowed"),
        control=True,
    ),
    case(
        "generator_gi_yieldfrom",
        """
        def inner():
            yield 1
        def outer():
            yield from inner()
        g = outer()
        next(g)
        return str(getattr(g, "gi_yield" + "from")) + "PW" + "NED"
        """,
        guard("`.gi_yieldfrom` is not allowed"),
    ),
    case(
        "suspended_coroutine_cr_await",
        """
        import asyncio
        async def f():
            await asyncio.sleep(0.01)
        co = f()
        try:
            return str(getattr(co, "cr_" + "await")) + "PW" + "NED"
        finally:
            co.close()
        """,
        guard("`.cr_await` is not allowed"),
    ),
    case(
        "async_generator_ag_await",
        """
        async def ag():
            yield 1
        return str(getattr(ag(), "ag_" + "await")) + "PW" + "NED"
        """,
        guard("`.ag_await` is not allowed"),
    ),
    case(
        "exception_with_traceback_keeps_it_hidden",
        """
        try:
            1 / 0
        except ZeroDivisionError as e:
            same = e.with_traceback(None)
        return str(getattr(same, "__trace" + "back__")) + "PW" + "NED"
        """,
        guard("`.__traceback__` is not allowed"),
    ),
    case(
        "exception_group_split_hands_back_only_exceptions",
        """
        group = ExceptionGroup("g", [ValueError("a"), TypeError("b")])
        match, rest = group.split(ValueError)
        return [str(match.exceptions[0]), str(rest.exceptions[0]), str(group.derive([KeyError("c")]))]
        """,
        Value(["a", "b", "g (1 sub-exception)"]),
    ),
    case(
        "function_type_needs_a_code_object",
        """
        F = type(lambda: 0)
        return str(F(None, {})) + "PW" + "NED"
        """,
        raised("TypeError", "function() argument 'code' must be code, not None"),
    ),
    case(
        "generator_frame_by_getattr",
        """
        def g():
            yield 1
        getattr(g(), 'gi_frame')
        """,
        guard("`.gi_frame` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "generator_frame_by_attribute",
        """
        def g():
            yield 1
        g().gi_frame
        """,
        policy("`.gi_frame` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "exception_traceback",
        """
        try:
            1/0
        except Exception as e:
            e.__traceback__
        """,
        policy("`.__traceback__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "function_globals",
        """
        def f():
            pass
        f.__globals__
        """,
        policy("`.__globals__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "function_code_by_getattr",
        """
        def f():
            pass
        getattr(f, '__code__')
        """,
        guard("`.__code__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "function_type_needs_code_unbound",
        """
        def f():
            pass
        type(f)(None, {})
        """,
        raised("TypeError", "function() argument 'code' must be code, not None"),
        limits=BUDGET,
    ),
]


test_frames_and_code_objects_are_refused = runs(
    CASES, "No frame, code object or function internal is reachable, by attribute or by `getattr`."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)
