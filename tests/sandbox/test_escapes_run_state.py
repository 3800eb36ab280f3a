"""Red team, a run's state: the guards and builtins runs share, and the ones bound to one run.

Runs with the same `max_size` share one set of rule guards and builtins (`getattr`, `pow`, `sorted`, ...), put together
once with the globals of each compiled code (`sandbox._runtime.namespace`); a run's own budget, `print`, ticking
builtins and `async def` wrappers are bound to it. None of them leads to the state behind it: not by `__self__`,
`__closure__`, `__defaults__`, `__wrapped__` or `__globals__`, by name, by `getattr` with a name built at run time, or
through `str.format` fields; and nothing a run writes into its globals is seen by the next run of the same code.
"""

from __future__ import annotations

from redteam_kit import Value, case, guard, names_are_unique, policy, runs, works_in_cpython

_DUNDERS = ("__self__", "__closure__", "__defaults__", "__kwdefaults__", "__wrapped__", "__globals__", "__func__")
_SHARED = ("getattr", "hasattr", "setattr", "delattr", "pow", "format", "vars", "sorted", "list", "type")
_OWN = ("print", "map", "sum", "enumerate")
_MARK = """\
def mark():
    global seen
    try:
        return seen
    except NameError:
        seen = "from the first run"
        return 0
return mark()
"""

CASES = [
    *(
        case(
            f"shared_{builtin}_{dunder.strip('_')}_by_built_name",
            f"""
            name = "__" + {dunder.strip("_")!r} + "__"
            return str(getattr({builtin}, name)) + "PW" + "NED"
            """,
            guard(f"`.{dunder}` is not allowed"),
            control=dunder == "__self__" and builtin in ("print", "pow"),  # a builtin in CPython
        )
        for builtin in (*_SHARED, *_OWN)
        for dunder in _DUNDERS
    ),
    case(
        "run_guard_self_by_attribute",
        'return str(print.__self__) + "PW" + "NED"',
        policy("`.__self__` is not allowed"),
        control=True,
    ),
    case(
        "async_def_wrapper_closure_holds_the_runs_coroutines",
        """
        async def f():
            return 1
        cells = getattr(f, "__clo" + "sure__")
        return str(cells[0].cell_contents) + "PW" + "NED"
        """,
        guard("`.__closure__` is not allowed"),
    ),
    case(
        "async_def_wrapper_unwrapped",
        """
        async def f():
            return 1
        return str(getattr(f, "__wrap" + "ped__")) + "PW" + "NED"
        """,
        guard("`.__wrapped__` is not allowed"),
    ),
    case(
        "async_def_wrapper_globals",
        """
        async def f():
            return 1
        return str(getattr(f, "__glo" + "bals__")) + "PW" + "NED"
        """,
        guard("`.__globals__` is not allowed"),
    ),
    case(
        "shared_guard_self_through_a_format_field",
        'return "{0.__self__}".format(pow) + "PW" + "NED"',
        guard("`.__self__` is not allowed"),
        control=True,
    ),
    case(
        "shared_guard_closure_through_a_format_field",
        'return "{0.__closure__}".format(sorted) + "PW" + "NED"',
        guard("`.__closure__` is not allowed"),
    ),
    case(
        "shared_guard_self_through_operator_attrgetter",
        """
        import operator
        return str(operator.attrgetter("__self__")(setattr)) + "PW" + "NED"
        """,
        guard("`.__self__` is not allowed"),
        control=True,
    ),
    case(
        "run_globals_written_by_a_function_are_not_the_next_runs",
        _MARK,
        Value(0),
        then=(_MARK, 0),  # the same code: the same shared globals
    ),
    case(
        "builtins_rebound_in_a_run_are_not_the_next_runs",
        """
        def rebind():
            global sorted, print
            sorted = lambda items: "rebound"
            print = sorted
        rebind()
        return sorted([2, 1])
        """,
        Value("rebound"),
        then=("return sorted([2, 1])", [1, 2]),
    ),
]

test_run_state_is_out_of_reach = runs(
    CASES, "No guard or builtin leads to the state behind it, and nothing of one run's globals reaches the next."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)
