"""Red team, builtins and globals tampering: the guards' own names, `eval`/`exec`, and the run's globals.

The guards live in the run's globals under reserved names (`_getattr_`, `_tick_`, `_write_`): every way to bind one
(parameters, assignments, imports, `global`, walrus, `match` captures) is refused at compile time, including through
NFKC-normalised look-alike identifiers. `eval`, `exec`, `compile`, `globals`, `vars` and the interactive builtins are
not offered, and the run's globals dict cannot be reached to overwrite a guard.
"""

from __future__ import annotations

from redteam_kit import BUDGET, WALL, case, guard, limit, names_are_unique, policy, raised, runs, works_in_cpython

CASES = [
    case(
        "nfkc_fullwidth_eval",
        'return \uff45\uff56\uff41\uff4c("1 + 1")',
        policy("Eval calls are not allowed."),
        control=True,
    ),
    case(
        "nfkc_math_bold_exec",
        'x = \U0001d41e\U0001d431\U0001d41e\U0001d41c("y = 1")\nreturn "PW" + "NED"\n',
        policy("Exec calls are not allowed."),
        control=True,
    ),
    case(
        "nfkc_fullwidth_low_line_dunder",
        "return str(()._\uff3freduce_ex__) + 'PW' + 'NED'",
        policy("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "nfkc_fullwidth_import",
        "import \uff4f\uff53\nreturn \uff4f\uff53.getcwd()\n",
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "globals_builtins_import",
        """
        def f():
            pass
        b = getattr(f, "__glob" + "als__")["__builtins__"]
        imp = b["__import__"] if isinstance(b, dict) else getattr(b, "__import__")
        return imp("os").getcwd()
        """,
        guard("`.__globals__` is not allowed"),
        control=True,
    ),
    case(
        "globals_overwrites_the_tick_guard",
        """
        def f():
            pass
        getattr(f, "__glob" + "als__")["_tick_"] = lambda: None
        while True:
            pass
        """,
        guard("`.__globals__` is not allowed"),
        limits=WALL,
    ),
    case(
        "globals_overwrites_the_write_guard",
        """
        import string
        def f():
            pass
        g = getattr(f, "__glob" + "als__")
        for name in list(g):
            if name.startswith("_") and name.endswith("_"):
                g[name] = lambda *a: a[0] if len(a) == 1 else getattr(*a)
        string.Template.delimiter = "@"
        return "PW" + "NED"
        """,
        guard("`.__globals__` is not allowed"),
    ),
    case(
        "globals_is_not_a_builtin",
        'globals()["_tick_"] = None',
        raised("NameError", "name 'globals' is not defined"),
    ),
    case("locals_is_not_a_builtin", "return sorted(locals())", raised("NameError", "name 'locals' is not defined")),
    case(
        "locals_and_vars_without_arguments",
        """
        found = {**vars(), **locals()}
        for name, value in found.items():
            if name.startswith("_"):
                return name + "PW" + "NED"
        raise LookupError("nothing private in scope")
        """,
        raised("TypeError", "vars() without an argument is not available in the sandbox; call vars(obj)"),
    ),
    case(
        "builtins_name",
        'return __builtins__["__import__"]("os").getcwd()',
        policy("`__builtins__` is a reserved name"),
    ),
    case(
        "dunder_import",
        'return __import__("os").getcwd()',
        policy("`__import__` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_parameter",
        """
        def f(_getattr_=lambda obj, name: obj):
            return [].append
        return str(f()) + "PW" + "NED"
        """,
        policy("`_getattr_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_lambda_parameter",
        'return (lambda _getiter_=iter: "PW" + "NED")()',
        policy("`_getiter_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_star_parameters",
        """
        def f(*_write_, **_getitem_):
            return "PW" + "NED"
        return f()
        """,
        policy("`_write_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_assignment",
        """
        _write_ = lambda obj: obj
        return "PW" + "NED"
        """,
        policy("`_write_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_for_target",
        """
        for _tick_ in [None]:
            pass
        return "PW" + "NED"
        """,
        policy("`_tick_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_import_alias",
        """
        import json as _getattr_
        return "PW" + "NED"
        """,
        policy("`_getattr_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_except_name",
        """
        try:
            1 / 0
        except Exception as _getattr_:
            pass
        return "PW" + "NED"
        """,
        policy("`_getattr_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_walrus",
        """
        if (_inplacevar_ := None) is None:
            return "PW" + "NED"
        """,
        policy("`_inplacevar_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_match_capture",
        """
        match 1:
            case _getattr_:
                return "PW" + "NED"
        """,
        policy("`_getattr_` is a reserved name"),
        control=True,
    ),
    case(
        "guard_shadowing_global_declaration",
        """
        def f():
            global _tick_
            _tick_ = None
        f()
        return "PW" + "NED"
        """,
        policy("`_tick_` is a reserved name"),
        control=True,
    ),
    case(
        "exec_builtin",
        """
        exec("import os")
        return "PW" + "NED"
        """,
        policy("Exec calls are not allowed."),
        control=True,
    ),
    case(
        "eval_builtin",
        'return eval("1 + 1")',
        policy("Eval calls are not allowed."),
        control=True,
    ),
    case(
        "compile_builtin",
        'return str(compile("1", "<x>", "eval")) + "PW" + "NED"',
        raised("NameError", "name 'compile' is not defined"),
        control=True,
    ),
    case(
        "breakpoint_builtin",
        """
        breakpoint()
        return 'PW' + 'NED'
        """,
        raised("NameError", "name 'breakpoint' is not defined"),
    ),
    case(
        "input_builtin",
        "return input() + 'PW' + 'NED'",
        raised("NameError", "name 'input' is not defined"),
    ),
    case(
        "help_builtin",
        """
        help(len)
        return 'PW' + 'NED'
        """,
        raised("NameError", "name 'help' is not defined"),
    ),
    case(
        "walrus_guard_name",
        "(_getattr_ := 1)",
        policy("`_getattr_` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "lambda_default_tick",
        "(lambda _tick_=1: 0)()",
        policy("`_tick_` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "vars_missing",
        "vars(print)",
        guard("`vars(x)` works on instances of the code's own classes only"),
        limits=BUDGET,
    ),
    # The size guards never ask the code's own `type` or `int`, and names shaped like a guard's are reserved.
    case(
        "fast_path_shadowed_type_and_int",
        """
        type = lambda value: int
        int = str
        s = "x"
        n = 2_000_000
        return s * n
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "fast_path_type_and_int_as_parameters",
        """
        def repeat(s, n, type=lambda value: int, int=str):
            return s % n + s * n

        return repeat("%2000000d", 2_000_000)
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "fast_path_type_guard_name_assignment",
        """
        _type_ = lambda value: int
        return "x" * 2_000_000
        """,
        policy("`_type_` is a reserved name"),
    ),
    case(
        "fast_path_int_guard_name_parameter",
        """
        def f(s, _int_=str):
            return s * s
        return f("x")
        """,
        policy("`_int_` is a reserved name"),
    ),
]


test_builtins_and_guards_cannot_be_replaced = runs(
    CASES, "The guard names cannot be rebound, and no code-evaluating or scope-reading builtin exists."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)
