"""Red team: known escape and abuse techniques, classes A-G of the sandbox issue, each with its expected outcome.

Every case must fail with one of its acceptable error kinds (a few may also succeed harmlessly, marked with
`OK`), leak nothing of the host (no secret, no `PWNED` marker an escape would produce), hand host functions only
plain JSON data, keep its message short, and leave the sandbox working: the next `return 1` returns 1.

Payloads build the `PWNED` marker at run time (`"PW" + "NED"`), so a message quoting the source cannot trip the
leak check. Cases marked `control=True` are real attacks: `test_attack_works_in_plain_cpython` runs them in a
plain interpreter to prove the sandbox, not a typo, is what stops them.
"""

from __future__ import annotations

import asyncio
import collections
import decimal
import json
import math
import os
import random
import string
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from escape_kit import assert_still_works, is_plain_json, run

from sandbox import FunctionError, Limits, Namespace, RunResult, Sandbox

MiB = 1024 * 1024
OK = "ok"
"""Pseudo-kind: the run may succeed, as long as nothing leaks and the host survives."""
CONVERTED = frozenset({OK})
"""The value converts to plain JSON data (issue 12): the run succeeds, and the host receives only exact JSON types
(checked for every case); `test_values.py` asserts the exact values."""
FORBIDDEN = frozenset({"forbidden"})
BLOCKED = frozenset({"forbidden", "runtime"})
RUNTIME = frozenset({"runtime"})
TIMEOUT = frozenset({"timeout"})
RESOURCE = frozenset({"memory", "timeout", "runtime", "crashed"})
MEMORY = frozenset({"memory", "crashed"})
COMPILE = frozenset({"syntax", "forbidden"})

QUICK = Limits(timeout=3.0, operations=300_000, output=10_000, max_size=1_000_000)
"""Most cases: an operation budget ends loops in milliseconds; wall clock is the backstop."""
WALL = Limits(timeout=1.5, operations=10**12, max_size=1_000_000)
"""Cases only the wall clock can end (sleeps, C-level work, ticks that do not run out)."""
BIG = Limits(timeout=3.0, memory=128 * MiB)
"""Real bombs with the default size guard, in a worker process only."""
RAW_MEMORY = Limits(timeout=5.0, memory=64 * MiB, max_size=10**12, operations=10**12)
"""Memory bombs that only the worker's address-space limit can stop."""
CALLS = Limits(timeout=5.0, calls=1000, operations=10**9)


@dataclass(frozen=True)
class Case:
    """One attack: its code, the error kinds that count as stopping it, and where it may run."""

    name: str
    cls: str
    """The issue's class: A introspection, B format strings, C host objects, D modules, E control flow,
    F resources, G the OS."""
    code: str
    kinds: frozenset[str]
    limits: Limits = QUICK
    process_only: bool = False
    """Only a worker process can stop this (a single long C-level operation); inline is no boundary here."""
    type_name: str | None = None
    control: bool = False
    """The payload succeeds in plain CPython (checked by `test_attack_works_in_plain_cpython`)."""


def case(name: str, cls: str, code: str, kinds: frozenset[str], **kwargs: object) -> Case:
    """A case with its code dedented."""
    return Case(name, cls, textwrap.dedent(code).strip("\n") + "\n", kinds, **kwargs)  # type: ignore[arg-type]


# -- A. introspection ---------------------------------------------------------------------------------------

A = [
    case(
        "dunder_walk_to_subclasses",
        "A",
        "return ().__class__.__bases__[0].__subclasses__()[0].__name__",
        FORBIDDEN,
        control=True,
    ),
    case(
        "list_class_mro_walk",
        "A",
        "return [c.__name__ for c in [].__class__.__mro__[1].__subclasses__()][:3]",
        FORBIDDEN,
        control=True,
    ),
    case(
        "getattr_with_concatenated_dunder",
        "A",
        """
         cls = getattr((), "__cl" + "ass__")
         base = getattr(cls, "__ba" + "se__")
         return len(getattr(base, "__subcl" + "asses__")())
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "getattr_with_name_built_from_parts",
        "A",
        """
         name = "".join(["_", "_", "redu", "ce_ex", "_", "_"])
         return str(getattr(1, name)) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "getattr_default_hides_nothing",
        "A",
        'return str(getattr(1, "__redu" + "ce_ex__", None)) + "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case(
        "type_mro_method",
        "A",
        """
         top = type(()).mro()[-1]
         return len(getattr(top, "__subcl" + "asses__")())
         """,
        FORBIDDEN,
        control=True,
    ),
    case("mro_through_getattr", "A", 'return str(getattr(type(()), "mro")()) + "PW" + "NED"', FORBIDDEN, control=True),
    case(
        "vars_of_object_reaches_subclasses",
        "A",
        'return len(vars(type)["__subclasses__"](object))',
        BLOCKED,
        control=True,
    ),
    case("type_subclasses_unbound", "A", "return len(type.__subclasses__(object))", FORBIDDEN, control=True),
    case("lambda_globals", "A", 'return str((lambda: 0).__globals__["__builtins__"])', FORBIDDEN, control=True),
    case(
        "function_globals_through_getattr",
        "A",
        """
         def f():
             pass
         g = getattr(f, "__glob" + "als__")
         b = g["__builtins__"]
         imp = b["__import__"] if isinstance(b, dict) else getattr(b, "__import__")
         return imp("os").getcwd()
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "builtin_self_is_the_builtins_module",
        "A",
        'return str(getattr(len, "__se" + "lf__").open) + "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case(
        "generator_frame_walk",
        "A",
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
        FORBIDDEN,
        control=True,
    ),
    case(
        "generator_frame_through_getattr",
        "A",
        """
         def g():
             yield 1
         me = g()
         frame = getattr(me, "gi_" + "frame")
         return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "generator_frame_builtins",
        "A",
        """
         def g():
             yield 1
         frame = getattr(g(), "gi_frame")
         return str(getattr(frame, "f_builtins")["len"]) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "generator_code_object",
        "A",
        """
         gen = (x for x in [])
         code = getattr(gen, "gi_" + "code")
         return str(getattr(code, "co_" + "names")) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "coroutine_cr_frame",
        "A",
        """
         async def c():
             return 1
         co = c()
         frame = co.cr_frame
         co.close()
         return str(list(frame.f_globals)) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "coroutine_cr_frame_through_getattr",
        "A",
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
        FORBIDDEN,
        control=True,
    ),
    case(
        "async_generator_ag_frame",
        "A",
        """
         async def ag():
             yield 1
         frame = getattr(ag(), "ag_" + "frame")
         return str(frame) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "traceback_tb_frame",
        "A",
        """
         try:
             1 / 0
         except Exception as e:
             tb = e.__traceback__
         return str(list(tb.tb_frame.f_globals)) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "traceback_through_getattr",
        "A",
        """
         try:
             1 / 0
         except Exception as e:
             tb = getattr(e, "__trace" + "back__")
         frame = getattr(tb, "tb_" + "frame")
         return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "exception_context_walk",
        "A",
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
        FORBIDDEN,
        control=True,
    ),
    case("nfkc_fullwidth_eval", "A", 'return \uff45\uff56\uff41\uff4c("1 + 1")', BLOCKED, control=True),
    case(
        "nfkc_math_bold_exec",
        "A",
        'x = \U0001d41e\U0001d431\U0001d41e\U0001d41c("y = 1")\nreturn "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "nfkc_fullwidth_low_line_dunder",
        "A",
        "return str(()._\uff3freduce_ex__) + 'PW' + 'NED'",
        FORBIDDEN,
        control=True,
    ),
    case("nfkc_fullwidth_import", "A", "import \uff4f\uff53\nreturn \uff4f\uff53.getcwd()", FORBIDDEN, control=True),
    case(
        "globals_builtins_import",
        "A",
        """
         b = globals()["__builtins__"]
         imp = b["__import__"] if isinstance(b, dict) else getattr(b, "__import__")
         return imp("os").getcwd()
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "globals_overwrites_the_tick_guard",
        "A",
        """
         globals()["_tick_"] = lambda: None
         while True:
             pass
         """,
        frozenset({"forbidden", "runtime", "timeout"}),
        limits=WALL,
    ),
    case(
        "globals_overwrites_the_write_guard",
        "A",
        """
         import string
         g = globals()
         for name in list(g):
             if name.startswith("_") and name.endswith("_"):
                 g[name] = lambda *a: a[0] if len(a) == 1 else getattr(*a)
         string.Template.delimiter = "@"
         return "PW" + "NED"
         """,
        BLOCKED,
    ),
    case(
        "locals_and_vars_without_arguments",
        "A",
        """
         found = {**vars(), **locals()}
         for name, value in found.items():
             if name.startswith("_"):
                 return name + "PW" + "NED"
         raise LookupError("nothing private in scope")
         """,
        BLOCKED,
    ),
    case(
        "dir_then_getattr_dunders",
        "A",
        """
         for name in dir(()):
             if name.endswith("class__"):
                 return str(getattr((), name)) + "PW" + "NED"
         raise LookupError("dir hid the dunders")
         """,
        BLOCKED,
        control=True,
    ),
    case("builtins_name", "A", 'return __builtins__["__import__"]("os").getcwd()', FORBIDDEN),
    case("dunder_import", "A", 'return __import__("os").getcwd()', FORBIDDEN, control=True),
    case(
        "guard_shadowing_parameter",
        "A",
        """
         def f(_getattr_=lambda obj, name: obj):
             return [].append
         return str(f()) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "guard_shadowing_lambda_parameter",
        "A",
        'return (lambda _getiter_=iter: "PW" + "NED")()',
        FORBIDDEN,
        control=True,
    ),
    case(
        "guard_shadowing_star_parameters",
        "A",
        """
         def f(*_write_, **_getitem_):
             return "PW" + "NED"
         return f()
         """,
        FORBIDDEN,
        control=True,
    ),
    case("guard_shadowing_assignment", "A", '_write_ = lambda obj: obj\nreturn "PW" + "NED"', FORBIDDEN, control=True),
    case(
        "guard_shadowing_for_target",
        "A",
        'for _tick_ in [None]:\n    pass\nreturn "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case("guard_shadowing_import_alias", "A", 'import json as _getattr_\nreturn "PW" + "NED"', FORBIDDEN, control=True),
    case(
        "guard_shadowing_except_name",
        "A",
        'try:\n    1 / 0\nexcept Exception as _getattr_:\n    pass\nreturn "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case(
        "guard_shadowing_walrus",
        "A",
        'if (_inplacevar_ := None) is None:\n    return "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case(
        "guard_shadowing_match_capture",
        "A",
        'match 1:\n    case _getattr_:\n        return "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case(
        "guard_shadowing_global_declaration",
        "A",
        """
         def f():
             global _tick_
             _tick_ = None
         f()
         return "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "match_keyword_pattern_reads_dunder",
        "A",
        'match 1:\n    case int(__class__=c):\n        return str(c) + "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case(
        "match_keyword_pattern_reads_frame",
        "A",
        """
         def g():
             yield 1
         match g():
             case object(gi_frame=f):
                 return str(f) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "match_positional_pattern_through_match_args",
        "A",
        """
         X = type("X", (), {"__match_args__": ("__class__",)})
         match X():
             case X(c):
                 return str(c) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "match_args_and_subclasshook_read_any_dunder",
        "A",
        """
         import dataclasses
         import json
         import typing
         Q = dataclasses.make_dataclass(
             "Q", [("g", int)], bases=(typing.SupportsInt,),
             namespace={"__subclasshook__": classmethod(lambda cls, other: True), "__match_args__": ("__globals__",)},
         )
         match json.dumps:
             case Q(g):
                 return str(sorted(g)[:3]) + "PW" + "NED"
         raise LookupError("no match")
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "metaclass_instancecheck_and_match_args_read_any_globals",
        "A",
        """
        import json
        M = type("M", (type,), {"__instancecheck__": lambda cls, obj: True})
        X = M("X", (), {"__match_args__": ("__globals__",)})
        match json.loads:
            case X(g):
                b = g["__builtins__"]
                imp = b["__import__"] if isinstance(b, dict) else getattr(b, "__import__")
                return imp("os").getcwd() + "PW" + "NED"
        raise LookupError("no match")
        """,
        BLOCKED,
        control=True,
    ),
    case(
        "three_argument_type_defines_a_finalizer",
        "A",
        'X = type("X", (), {"__del__": lambda self: print("PW" + "NED")})\nx = X()\nreturn 1',
        BLOCKED,
        control=True,
    ),
    case(
        "three_argument_type_with_dunder_methods",
        "A",
        """
         Evil = type("Evil", (), {"__getattribute__": lambda self, name: "PW" + "NED"})
         return Evil().anything
         """,
        BLOCKED,
        control=True,
    ),
]

# -- B. format strings ---------------------------------------------------------------------------------------

B = [
    case(
        "format_attribute_walk", "B", 'return "{0.__class__.__base__}".format(1) + "PW" + "NED"', BLOCKED, control=True
    ),
    case(
        "format_auto_numbered_walk",
        "B",
        'return "{.__class__.__base__}".format(()) + "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "format_map_to_function_globals",
        "B",
        """
         def f():
             pass
         return "{a.__globals__}".format_map({"a": f}) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "format_map_init_globals",
        "B",
        """
         class C:
             def __init__(self):
                 pass
         return "{a.__init__.__globals__}".format_map({"a": C()}) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "unbound_str_format",
        "B",
        'return str.format("{0.__class__.__base__}", 1) + "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "unbound_str_format_map",
        "B",
        'return str.format_map("{a.__class__.__base__}", {"a": 1}) + "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "format_string_built_at_runtime",
        "B",
        """
         fmt = "{0.__cl" + "ass__.__base__}"
         render = fmt.format
         return render(1) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "format_called_from_map",
        "B",
        'return list(map("{0.__class__.__base__}".format, [1]))[0] + "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "format_through_partial",
        "B",
        """
         import functools
         return functools.partial(str.format, "{0.__class__.__base__}")(1) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "format_index_then_attribute",
        "B",
        'return "{0[0].__class__.__base__}".format([1]) + "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "format_public_then_dunder",
        "B",
        'return "{x.real.__class__.__base__}".format(x=1) + "PW" + "NED"',
        BLOCKED,
        control=True,
    ),
    case(
        "format_frame_attributes",
        "B",
        """
         def g():
             yield 1
         return "{0.gi_frame.f_globals}".format(g()) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case("format_nested_spec_field_walk", "B", 'return "{0:{1.__class__}}".format(1, 2) + "PW" + "NED"', BLOCKED),
    case(
        "string_formatter_get_field",
        "B",
        """
         import string
         obj, _ = string.Formatter().get_field("0.__class__", (1,), {})
         return str(obj) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "string_formatter_vformat",
        "B",
        """
         import string
         return string.Formatter().vformat("{0.__class__}", (1,), {}) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "string_formatter_subclass",
        "B",
        """
         import string
         class F(string.Formatter):
             pass
         return F().format("{0.__class__}", 1) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case("fstring_dunder", "B", 'x = 1\nreturn f"{x.__class__.__base__}" + "PW" + "NED"', FORBIDDEN, control=True),
    case(
        "fstring_getattr_dunder",
        "B",
        'return f"{getattr(1, \'__redu\' + \'ce_ex__\')}" + "PW" + "NED"',
        FORBIDDEN,
        control=True,
    ),
    case("fstring_dunder_in_nested_spec", "B", 'return f"{1:{().__class__.__base__}}" + "PW" + "NED"', FORBIDDEN),
]

# -- C. host objects ---------------------------------------------------------------------------------------------

C = [
    case("host_returns_object_with_secret", "C", "obj = await leak_object()\nreturn obj.secret", BLOCKED),
    case("host_returns_nested_object", "C", 'd = await leak_nested()\nreturn d["ok"][1].secret', BLOCKED),
    case("host_returns_set", "C", "return sorted(await leak_set())", BLOCKED),
    case("host_returns_function", "C", "f = await leak_function()\nreturn f().secret", BLOCKED),
    case("host_returns_future_with_loop", "C", "fut = await leak_future()\nreturn str(fut.get_loop())", BLOCKED),
    case(
        "host_exception_attribute",
        "C",
        "try:\n    await raise_carrier()\nexcept Exception as e:\n    return e.secret",
        BLOCKED,
    ),
    case(
        "host_exception_object_argument",
        "C",
        "try:\n    await raise_object_arg()\nexcept Exception as e:\n    return e.args[0].secret",
        BLOCKED,
    ),
    case("host_exception_uncaught_carries_nothing", "C", "await raise_carrier()", RUNTIME),
    case(
        "host_exception_chained_cause",
        "C",
        'try:\n    await raise_chained()\nexcept Exception as e:\n    return getattr(e, "__cau" + "se__").secret',
        BLOCKED,
    ),
    case(
        "host_function_attributes",
        "C",
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
        BLOCKED,
    ),
    case("namespace_resolve_attribute", "C", 'f = tools.resolve("echo")\nreturn f(x=1)', BLOCKED),
    case(
        "namespace_private_attributes",
        "C",
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
        BLOCKED,
    ),
    case(
        "unawaited_host_call_coroutine_frame",
        "C",
        """
         c = echo(x=1)
         frame = getattr(c, "cr_" + "frame")
         return str(list(getattr(frame, "f_" + "globals"))) + "PW" + "NED"
         """,
        BLOCKED,
    ),
    case(
        "unawaited_host_call_driven_by_hand",
        "C",
        """
         c = echo(x=1)
         try:
             c.send(None)
         except StopIteration as stop:
             return str(stop.value) + "PW" + "NED"
         return "PW" + "NED"
         """,
        BLOCKED,
    ),
    case("lambda_passed_to_host", "C", "return await echo(x=lambda: 0)", BLOCKED),
    case("lambda_passed_positionally", "C", "return await echo(lambda: 0)", BLOCKED),
    case(
        "instance_passed_to_host",
        "C",
        "class Spy:\n    def __str__(self):\n        return 'spy'\nreturn await echo(x=Spy())",
        BLOCKED,
    ),
    case(
        "dict_subclass_passed_to_host",
        "C",
        """
         class Evil(dict):
             def items(self):
                 raise RuntimeError("model code ran in the host")
             def keys(self):
                 raise RuntimeError("model code ran in the host")
         return await echo(x=Evil(a=1))
         """,
        CONVERTED,
    ),
    case(
        "str_subclass_passed_to_host",
        "C",
        """
         class S(str):
             def __eq__(self, other):
                 return True
             def __hash__(self):
                 return 0
         return await echo(x=S("a"))
         """,
        CONVERTED,
    ),
    case("int_subclass_passed_to_host", "C", "class I(int):\n    pass\nreturn await echo(x=I(3))", CONVERTED),
    case("set_passed_to_host", "C", "return await echo(x={1, 2})", CONVERTED),
    case("generator_passed_to_host", "C", "return await echo(x=(i for i in range(3)))", BLOCKED),
    case("host_function_passed_to_host", "C", "return await echo(x=echo)", BLOCKED),
    case("module_passed_to_host", "C", "import math\nreturn await echo(x=math)", BLOCKED),
    case("nested_callable_passed_to_host", "C", 'return await echo(x={"a": [1, {"b": print}]})', BLOCKED),
    case("int_keys_passed_to_host", "C", "return await echo(x={1: 2})", CONVERTED),
    case("nan_passed_to_host", "C", 'return await echo(x=float("nan"))', BLOCKED),
    case(
        "counter_passed_to_host", "C", 'from collections import Counter\nreturn await echo(x=Counter("ab"))', CONVERTED
    ),
    case("return_object_with_secret", "C", "class S:\n    secret = 'x'\nreturn S()", RUNTIME),
    case("return_function", "C", "def f():\n    pass\nreturn f", RUNTIME),
    case("return_module", "C", "import math\nreturn math", RUNTIME),
    case("return_generator", "C", "return (i for i in range(3))", RUNTIME),
    case("return_set", "C", "return {1, 2}", CONVERTED),
    case("return_bytes", "C", 'return b"raw"', CONVERTED),
    case("return_nan", "C", 'return float("nan")', RUNTIME),
    case("return_int_keys", "C", "return {1: 2}", CONVERTED),
    case("return_dict_subclass", "C", "class D(dict):\n    pass\nreturn D(a=1)", CONVERTED),
    case("return_host_proxy", "C", "return echo", RUNTIME),
    case("return_unawaited_host_call", "C", "return echo(x=1)", RUNTIME),
    case("return_task", "C", "import asyncio\nreturn asyncio.create_task(asyncio.sleep(0))", RUNTIME),
    case(
        "task_get_loop",
        "C",
        """
         import asyncio
         t = asyncio.create_task(asyncio.sleep(0))
         loop = t.get_loop()
         await t
         return str(loop) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "task_private_loop",
        "C",
        """
         import asyncio
         t = asyncio.create_task(asyncio.sleep(0))
         loop = t._loop
         await t
         return str(loop) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "task_get_stack_frames",
        "C",
        """
         import asyncio
         async def work():
             await asyncio.sleep(0)
         t = asyncio.create_task(work())
         await asyncio.sleep(0)
         frames = t.get_stack()
         await t
         return str(getattr(frames[0], "f_" + "globals")) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "task_get_coro_frame",
        "C",
        """
         import asyncio
         t = asyncio.create_task(asyncio.sleep(0))
         coro = t.get_coro()
         await t
         return str(getattr(coro, "cr_" + "code")) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "get_event_loop",
        "C",
        "import asyncio\nreturn str(asyncio.get_event_loop()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "get_running_loop",
        "C",
        "import asyncio\nreturn str(asyncio.get_running_loop()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "new_event_loop",
        "C",
        "import asyncio\nloop = asyncio.new_event_loop()\nloop.close()\nreturn 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "current_task_loop",
        "C",
        "import asyncio\nreturn str(asyncio.current_task().get_loop()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "all_tasks_of_the_host",
        "C",
        "import asyncio\nreturn str(len(asyncio.all_tasks())) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "lock_private_get_loop",
        "C",
        "import asyncio\nlock = asyncio.Lock()\nreturn str(lock._get_loop()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "bare_future_loop",
        "C",
        "import asyncio\nreturn str(asyncio.Future().get_loop()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "gather_future_loop",
        "C",
        "import asyncio\nreturn str(asyncio.gather().get_loop()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "ensure_future_loop",
        "C",
        """
         import asyncio
         fut = asyncio.ensure_future(asyncio.sleep(0))
         loop = fut.get_loop()
         await fut
         return str(loop) + "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "loop_subprocess_exec",
        "C",
        """
         import asyncio
         loop = asyncio.get_running_loop()
         transport, _ = await loop.subprocess_exec(asyncio.SubprocessProtocol, "true")
         transport.close()
         return "PW" + "NED"
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "to_thread_escapes_the_budget",
        "C",
        "import asyncio\nreturn await asyncio.to_thread(str, 'PW' + 'NED')",
        BLOCKED,
        control=True,
    ),
    case(
        "asyncio_run_nested_loop",
        "C",
        "import asyncio\nasync def f():\n    return 'PW' + 'NED'\nreturn asyncio.run(f())",
        BLOCKED,
    ),
]

# -- D. the module graph -----------------------------------------------------------------------------------------

_DANGEROUS_MODULES = (
    "os sys subprocess socket ctypes importlib pickle marshal gc inspect threading _thread io builtins "
    "asyncio.subprocess asyncio.base_events asyncio.events types pathlib shutil tempfile multiprocessing "
    "signal codecs posix pty fcntl resource mmap select ssl urllib.request http.client runpy code traceback "
    "weakref copyreg sysconfig site platform sandbox RestrictedPython anyio codemode json.tool"
).split()

D = [
    *[
        case(
            f"import_{module.replace('.', '_')}",
            "D",
            f"import {module}\nreturn 'PW' + 'NED'",
            FORBIDDEN,
            control=module not in ("sandbox", "RestrictedPython", "anyio", "codemode", "json.tool"),
        )
        for module in _DANGEROUS_MODULES
    ],
    case("from_os_import_system", "D", "from os import system\nreturn system('true')", FORBIDDEN, control=True),
    case(
        "from_subprocess_import_run",
        "D",
        "from subprocess import run\nreturn run(['true']).returncode",
        FORBIDDEN,
        control=True,
    ),
    case(
        "from_asyncio_import_subprocess",
        "D",
        "from asyncio import subprocess\np = await subprocess.create_subprocess_exec('true')\n"
        "return str(await p.wait()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "from_asyncio_import_events",
        "D",
        "from asyncio import events\nreturn events.sys.modules['os'].getcwd() + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    *[
        case(
            f"from_asyncio_import_{module}",
            "D",
            f"from asyncio import {module}\nreturn str({module}) + 'PW' + 'NED'",
            BLOCKED,
            control=True,
        )
        for module in "tasks base_events futures streams unix_events coroutines runners selector_events threads".split()
    ],
    case(
        "time_sleep_blocks_the_loop",
        "D",
        "import time\ntime.sleep(100)",
        frozenset({"forbidden", "runtime", "timeout"}),
        limits=WALL,
    ),
    case(
        "operator_methodcaller_dunder",
        "D",
        "import operator\nreturn str(operator.methodcaller('__reduce_ex__', 2)(1)) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "operator_attrgetter_dotted_dunder",
        "D",
        "import operator\nreturn str(operator.attrgetter('real.__class__.__base__')(1)) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "from_json_import_codecs",
        "D",
        "from json import codecs\nreturn str(codecs.builtins.open)",
        BLOCKED,
        control=True,
    ),
    case(
        "from_re_import_enum",
        "D",
        "from re import enum\nreturn str(enum.sys.modules['os'].getcwd())",
        BLOCKED,
        control=True,
    ),
    case(
        "from_collections_import_private_sys",
        "D",
        "from collections import _sys\nreturn _sys.modules['os'].getcwd()",
        BLOCKED,
        control=True,
    ),
    case("re_enum_sys", "D", "import re\nreturn re.enum.sys.modules['os'].getcwd()", BLOCKED, control=True),
    case(
        "json_codecs_builtins",
        "D",
        "import json\nreturn str(json.codecs.builtins.open) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "json_decoder_re_enum_sys",
        "D",
        "import json\nreturn json.decoder.re.enum.sys.modules['os'].getcwd()",
        BLOCKED,
        control=True,
    ),
    case(
        "collections_abc_module_behind_collections",
        "D",
        "import collections\nreturn collections._collections_abc.sys.modules['os'].getcwd()",
        BLOCKED,
        control=True,
    ),
    case(
        "collections_private_sys",
        "D",
        "import collections\nreturn collections._sys.modules['os'].getcwd()",
        BLOCKED,
        control=True,
    ),
    case("random_private_os", "D", "import random\nreturn random._os.getcwd()", BLOCKED, control=True),
    case(
        "string_private_re",
        "D",
        "import string\nreturn string._re.enum.sys.modules['os'].getcwd()",
        BLOCKED,
        control=True,
    ),
    case(
        "textwrap_re", "D", "import textwrap\nreturn textwrap.re.enum.sys.modules['os'].getcwd()", BLOCKED, control=True
    ),
    case(
        "statistics_sys", "D", "import statistics\nreturn statistics.sys.modules['os'].getcwd()", BLOCKED, control=True
    ),
    case("fractions_sys", "D", "import fractions\nreturn fractions.sys.modules['os'].getcwd()", BLOCKED, control=True),
    case("datetime_sys", "D", "import datetime\nreturn datetime.sys.modules['os'].getcwd()", BLOCKED),
    case("uuid_os", "D", "import uuid\nreturn uuid.os.getcwd()", BLOCKED, control=True),
    case("typing_sys", "D", "import typing\nreturn typing.sys.modules['os'].getcwd()", BLOCKED, control=True),
    case(
        "dataclasses_inspect",
        "D",
        "import dataclasses\nreturn str(dataclasses.inspect.currentframe()) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "dataclasses_sys",
        "D",
        "import dataclasses\nreturn dataclasses.sys.modules['os'].getcwd()",
        BLOCKED,
        control=True,
    ),
    case(
        "functools_private_thread",
        "D",
        "import functools\nreturn str(functools.RLock) + str(functools.GenericAlias) + 'PW' + 'NED'",
        BLOCKED,
    ),
    case(
        "asyncio_subprocess_attribute",
        "D",
        "import asyncio\nreturn str(asyncio.subprocess.PIPE) + 'PW' + 'NED'",
        BLOCKED,
        control=True,
    ),
    case(
        "asyncio_create_subprocess_shell",
        "D",
        "import asyncio\np = await asyncio.create_subprocess_shell('true')\nreturn await p.wait()",
        BLOCKED,
        control=True,
    ),
    case(
        "asyncio_base_events_os", "D", "import asyncio\nreturn asyncio.base_events.os.getcwd()", BLOCKED, control=True
    ),
    case(
        "typing_get_type_hints_evaluates_strings",
        "D",
        """
         import typing
         def f(x: "type(().__class__.__name__ + 'PW' + 'NED', (), {})"):
             pass
         return str(typing.get_type_hints(f)["x"])
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "singledispatch_register_evaluates_annotations",
        "D",
        """
         import functools
         @functools.singledispatch
         def f(x):
             return 0
         def g(x: "type(().__class__.__name__ + 'PW' + 'NED', (), {})"):
             return 1
         f.register(g)
         return "registered"
         """,
        BLOCKED,
    ),
    case(
        "forward_ref_private_evaluate",
        "D",
        """
         import typing
         ref = typing.ForwardRef("type(().__class__.__name__ + 'PW' + 'NED', (), {})")
         return str(ref._evaluate({}, {}, frozenset()))
         """,
        BLOCKED,
        control=True,
    ),
    case(
        "operator_attrgetter_bypass",
        "D",
        "import operator\nreturn str(operator.attrgetter('__reduce_ex__')(1)) + 'PW' + 'NED'",
        FORBIDDEN,
        control=True,
    ),
    case(
        "functools_reduce_getattr",
        "D",
        """
         import functools
         return str(functools.reduce(getattr, ["__class__", "__base__"], ())) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "map_getattr_dunder",
        "D",
        "return str(list(map(getattr, [1], ['__reduce_ex__']))) + 'PW' + 'NED'",
        FORBIDDEN,
        control=True,
    ),
    case(
        "itertools_starmap_getattr",
        "D",
        """
         import itertools
         return str(list(itertools.starmap(getattr, [((), "__reduce_ex__")]))) + "PW" + "NED"
         """,
        FORBIDDEN,
        control=True,
    ),
    case(
        "sorted_key_getattr_dunder",
        "D",
        "import functools\nreturn str(sorted([1], key=functools.partial(getattr, name='__reduce_ex__')))",
        BLOCKED,
    ),
    case("exec_builtin", "D", 'exec("import os")\nreturn "PW" + "NED"', FORBIDDEN, control=True),
    case("eval_builtin", "D", 'return eval("1 + 1")', FORBIDDEN, control=True),
    case("compile_builtin", "D", 'return str(compile("1", "<x>", "eval")) + "PW" + "NED"', BLOCKED, control=True),
    case("breakpoint_builtin", "D", "breakpoint()\nreturn 'PW' + 'NED'", BLOCKED),
    case("input_builtin", "D", "return input() + 'PW' + 'NED'", BLOCKED),
    case("help_builtin", "D", "help(len)\nreturn 'PW' + 'NED'", BLOCKED),
]

# -- E. control flow -----------------------------------------------------------------------------------------

EXITS = frozenset({"runtime", "forbidden"})
E = [
    case("raise_system_exit", "E", "raise SystemExit(0)", EXITS),
    case(
        "raise_system_exit_in_a_task",
        "E",
        "import asyncio\nasync def f():\n    raise SystemExit(3)\nawait asyncio.gather(f())",
        EXITS,
    ),
    case("exit_builtin", "E", "exit(0)", EXITS),
    case("quit_builtin", "E", "quit()", EXITS),
    case("raise_keyboard_interrupt", "E", "raise KeyboardInterrupt", EXITS),
    case("base_exception_subclass", "E", "class E(BaseException):\n    pass\nraise E('out')", EXITS),
    case("raise_generator_exit", "E", "raise GeneratorExit", EXITS),
    case("raise_cancelled_error", "E", "import asyncio\nraise asyncio.CancelledError()", EXITS),
    case(
        "raise_cancelled_error_in_gather",
        "E",
        "import asyncio\nasync def f():\n    raise asyncio.CancelledError()\nawait asyncio.gather(f(), f())",
        EXITS,
    ),
    case("raise_stop_iteration", "E", "raise StopIteration", RUNTIME),
    case("raise_memory_error", "E", "raise MemoryError('mine')", frozenset({"runtime", "memory"})),
    case("raise_timeout_error_is_not_a_timeout", "E", "raise TimeoutError('mine')", RUNTIME, type_name="TimeoutError"),
    case("raise_recursion_error", "E", "raise RecursionError('mine')", RUNTIME, type_name="RecursionError"),
    case(
        "bare_except_swallows_the_budget",
        "E",
        "while True:\n    try:\n        while True:\n            pass\n    except:\n        pass",
        TIMEOUT,
    ),
    case(
        "except_base_exception_swallows_the_budget",
        "E",
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
        TIMEOUT,
    ),
    case(
        "bare_except_swallows_the_wall_clock",
        "E",
        "while True:\n    try:\n        while True:\n            pass\n    except:\n        pass",
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "finally_continue_swallows_the_budget",
        "E",
        "while True:\n    try:\n        while True:\n            pass\n    finally:\n        continue",
        frozenset({"timeout", "forbidden"}),
    ),
    case(
        "finally_break_swallows_the_budget",
        "E",
        "for i in range(3):\n    try:\n        while True:\n            pass\n    finally:\n        break\n"
        "return 'PW' + 'NED'",
        frozenset({"timeout", "forbidden"}),
    ),
    case(
        "finally_return_swallows_the_budget",
        "E",
        "def f():\n    try:\n        while True:\n            pass\n    finally:\n        return 'PW' + 'NED'\n"
        "return f()",
        frozenset({"timeout", "forbidden"}),
    ),
    case(
        "except_star_swallows_the_budget",
        "E",
        "while True:\n    try:\n        while True:\n            pass\n    except* BaseException:\n        pass",
        frozenset({"timeout", "forbidden"}),
    ),
    case(
        "except_exception_group_swallows_the_budget",
        "E",
        "while True:\n    try:\n        while True:\n            pass\n    except BaseExceptionGroup:\n        pass",
        TIMEOUT,
    ),
    case(
        "exit_returning_true_swallows_the_budget",
        "E",
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
        TIMEOUT,
    ),
    case(
        "aexit_returning_true_swallows_cancellation",
        "E",
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
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "except_base_exception_swallows_cancellation",
        "E",
        """
         import asyncio
         while True:
             try:
                 await asyncio.sleep(10)
             except BaseException:
                 pass
         """,
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "except_cancelled_error_swallows_cancellation",
        "E",
        """
         import asyncio
         while True:
             try:
                 await asyncio.sleep(10)
             except asyncio.CancelledError:
                 pass
         """,
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "finally_awaits_after_cancellation",
        "E",
        "import asyncio\ntry:\n    await asyncio.sleep(10)\nfinally:\n    await asyncio.sleep(10)",
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "swallowing_inside_a_gathered_task",
        "E",
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
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "generator_finally_loops_forever_on_close",
        "E",
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
        frozenset({"timeout", OK}),
    ),
    case(
        "del_method_loops_forever",
        "E",
        "class X:\n    def __del__(self):\n        while True:\n            pass\nx = X()\nreturn 1",
        frozenset({"forbidden", "timeout", OK}),
    ),
    case(
        "unawaited_coroutine_of_the_model", "E", "async def f():\n    pass\nf()\nreturn 1", frozenset({OK, "runtime"})
    ),
    case(
        "exception_str_loops_forever",
        "E",
        "class E(Exception):\n    def __str__(self):\n        while True:\n            pass\nraise E()",
        frozenset({"timeout", "runtime"}),
    ),
    case(
        "exception_str_raises_system_exit",
        "E",
        "class E(Exception):\n    def __str__(self):\n        raise SystemExit(1)\nraise E()",
        RUNTIME,
    ),
    case(
        "exception_str_is_huge",
        "E",
        "class E(Exception):\n    def __str__(self):\n        return '#' * 900_000\nraise E()",
        RUNTIME,
    ),
    case(
        "generator_ignores_generator_exit",
        "E",
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
        RUNTIME,
    ),
    case(
        "swallowing_the_call_limit",
        "E",
        "for i in range(2000):\n    try:\n        await echo(i=i)\n    except BaseException:\n        pass\n"
        "return 'PW' + 'NED'",
        frozenset({"call_limit"}),
        limits=CALLS,
    ),
    case(
        "swallowing_the_output_limit",
        "E",
        "while True:\n    try:\n        print('#' * 1000)\n    except BaseException:\n        pass",
        frozenset({"output_limit"}),
    ),
    case(
        "swallowing_the_size_guard",
        "E",
        "while True:\n    try:\n        x = '#' * 10**9\n    except BaseException:\n        pass",
        frozenset({"memory", "timeout"}),
    ),
    case(
        "swallowing_recursion_errors",
        "E",
        """
         def f(n):
             try:
                 return f(n + 1)
             except RecursionError:
                 return f(n + 1)
         f(0)
         """,
        frozenset({"runtime", "timeout"}),
    ),
]

# -- F. resources ------------------------------------------------------------------------------------------------

GUARD = QUICK
"""max_size is 1,000,000: each payload below would succeed in plain CPython in well under a second."""
F = [
    case("infinite_loop", "F", "while True:\n    pass", TIMEOUT),
    case("infinite_loop_against_the_wall_clock", "F", "while True:\n    x = 1", TIMEOUT, limits=WALL),
    case("infinite_iterator_loop", "F", "for i in iter(int, 1):\n    pass", TIMEOUT),
    case(
        "infinite_comprehension",
        "F",
        "import itertools\nreturn [x for x in itertools.count()]",
        frozenset({"timeout", "memory"}),
    ),
    case(
        "infinite_generator_expression_in_any",
        "F",
        "import itertools\nreturn any(x < 0 for x in itertools.count())",
        TIMEOUT,
    ),
    case("infinite_async_sleep_zero_loop", "F", "import asyncio\nwhile True:\n    await asyncio.sleep(0)", TIMEOUT),
    case("sleep_past_the_timeout", "F", "import asyncio\nawait asyncio.sleep(100)", TIMEOUT, limits=WALL),
    case(
        "gathered_sleeps",
        "F",
        "import asyncio\nawait asyncio.gather(*[asyncio.sleep(100) for i in range(50)])",
        TIMEOUT,
        limits=WALL,
    ),
    case(
        "wait_for_with_a_long_timeout",
        "F",
        "import asyncio\nawait asyncio.wait_for(asyncio.sleep(100), timeout=1000)",
        TIMEOUT,
        limits=WALL,
    ),
    case("host_function_that_never_returns", "F", "await hang()", TIMEOUT, limits=WALL),
    case("string_repetition_guard", "F", "x = '#' * 2_000_000\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("list_repetition_guard", "F", "x = [0] * 2_000_000\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case(
        "repetition_with_names_guard",
        "F",
        "n = 2_000_000\ns = '#'\nx = n * s\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case("shift_guard", "F", "x = 1 << 2_000_000\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("power_guard", "F", "x = 10 ** 700_000\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("pow_builtin_guard", "F", "x = pow(10, 700_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case(
        "repeated_squaring_guard",
        "F",
        "n = 10\nfor i in range(30):\n    n = n * n\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case(
        "augmented_squaring_guard",
        "F",
        "n = 10 ** 1000\nfor i in range(12):\n    n *= n\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case(
        "augmented_string_doubling_guard",
        "F",
        "s = '#'\nfor i in range(22):\n    s += s\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case(
        "list_doubling_guard",
        "F",
        "l = [0]\nfor i in range(22):\n    l = l + l\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case(
        "factorial_guard", "F", "import math\nx = math.factorial(150_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD
    ),
    case("percent_width_guard", "F", "x = '%2000000d' % 1\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("ljust_guard", "F", "x = '#'.ljust(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("center_guard", "F", "x = '#'.center(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("zfill_guard", "F", "x = '1'.zfill(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("fstring_width_guard", "F", "x = f'{1:>{2_000_000}}'\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("fstring_literal_width_guard", "F", "x = f'{1:>2000000}'\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case(
        "format_nested_width_guard",
        "F",
        "x = '{:>{}}'.format(1, 2_000_000)\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case("format_literal_width_guard", "F", "x = '{:>2000000}'.format(1)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("format_builtin_width_guard", "F", "x = format(1, '>2000000')\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case(
        "replace_amplification_guard",
        "F",
        "x = ('#' * 1000).replace('#', '#' * 2000)\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=GUARD,
    ),
    case("expandtabs_guard", "F", "x = '\\t'.expandtabs(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("join_guard", "F", "x = ' '.join(['#' * 1000] * 2000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("bytes_constructor_guard", "F", "x = bytes(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("bytearray_constructor_guard", "F", "x = bytearray(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("range_list_guard", "F", "x = list(range(2_000_000))\nreturn 'PW' + 'NED'", RESOURCE, limits=GUARD),
    case("big_power_bomb", "F", "x = 10**10**8\nreturn 'PW' + 'NED'", RESOURCE, limits=BIG, process_only=True),
    case("big_pow_bomb", "F", "x = pow(10, 10**8)\nreturn 'PW' + 'NED'", RESOURCE, limits=BIG, process_only=True),
    case(
        "big_factorial_bomb",
        "F",
        "import math\nx = math.factorial(10**7)\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=BIG,
        process_only=True,
    ),
    case(
        "big_string_repetition_bomb",
        "F",
        "x = 'x' * 10**10\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=BIG,
        process_only=True,
    ),
    case(
        "big_list_repetition_bomb",
        "F",
        "x = [0] * 10**10\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=BIG,
        process_only=True,
    ),
    case("big_shift_bomb", "F", "x = 1 << 10**10\nreturn 'PW' + 'NED'", RESOURCE, limits=BIG, process_only=True),
    case("big_ljust_bomb", "F", "x = 'x'.ljust(10**10)\nreturn 'PW' + 'NED'", RESOURCE, limits=BIG, process_only=True),
    case(
        "big_center_bomb", "F", "x = 'x'.center(10**10)\nreturn 'PW' + 'NED'", RESOURCE, limits=BIG, process_only=True
    ),
    case(
        "big_fstring_width_bomb",
        "F",
        "x = f'{1:>{10**10}}'\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=BIG,
        process_only=True,
    ),
    case(
        "big_format_width_bomb",
        "F",
        "x = '{:>{}}'.format(1, 10**10)\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=BIG,
        process_only=True,
    ),
    case(
        "redos_nested_quantifier",
        "F",
        "import re\nreturn re.match('(a+)+$', 'a' * 40 + 'b') is None",
        TIMEOUT,
        limits=WALL,
        process_only=True,
    ),
    case(
        "redos_alternation",
        "F",
        "import re\nreturn re.search('^(a|aa)+$', 'a' * 60 + 'b') is None",
        TIMEOUT,
        limits=WALL,
        process_only=True,
    ),
    case(
        "c_level_infinite_sum",
        "F",
        "import itertools\nreturn sum(itertools.count())",
        frozenset({"timeout", "crashed"}),
        limits=WALL,
        process_only=True,
    ),
    case(
        "c_level_infinite_deque_drain",
        "F",
        "import collections, itertools\ncollections.deque(itertools.count(), maxlen=0)",
        frozenset({"timeout", "crashed"}),
        limits=WALL,
        process_only=True,
    ),
    case(
        "c_level_infinite_list",
        "F",
        "import itertools\nreturn list(itertools.count())",
        frozenset({"memory", "crashed", "timeout"}),
        limits=RAW_MEMORY,
        process_only=True,
    ),
    case(
        "bytearray_over_the_memory_limit",
        "F",
        "x = bytearray(10**9)\nreturn 'PW' + 'NED'",
        MEMORY,
        limits=RAW_MEMORY,
        process_only=True,
    ),
    case(
        "growing_list_over_the_memory_limit",
        "F",
        "l = []\nwhile True:\n    l.append('#' * 10_000)",
        MEMORY,
        limits=RAW_MEMORY,
        process_only=True,
    ),
    case(
        "string_doubling_over_the_memory_limit",
        "F",
        "s = '#'\nwhile True:\n    s += s",
        MEMORY,
        limits=RAW_MEMORY,
        process_only=True,
    ),
    case(
        "list_extend_doubling_over_the_memory_limit",
        "F",
        "l = [0]\nwhile True:\n    l.extend(l)",
        MEMORY,
        limits=RAW_MEMORY,
        process_only=True,
    ),
    case("deep_recursion", "F", "def f(n):\n    return f(n + 1)\nf(0)", RUNTIME, type_name="RecursionError"),
    case("deep_recursion_through_lambda", "F", "f = lambda n: f(n + 1)\nf(0)", RUNTIME, type_name="RecursionError"),
    case(
        "deep_recursion_through_repr",
        "F",
        "class A:\n    def __repr__(self):\n        return repr(self)\nrepr(A())",
        RUNTIME,
        type_name="RecursionError",
    ),
    case(
        "deep_recursion_through_getattr_hook",
        "F",
        "class A:\n    def __getattr__(self, name):\n        return self.missing\nA().x",
        RUNTIME,
        type_name="RecursionError",
    ),
    case(
        "deep_recursion_through_yield_from",
        "F",
        "def g():\n    yield from g()\nnext(g())",
        RUNTIME,
        type_name="RecursionError",
    ),
    case(
        "deep_async_recursion",
        "F",
        "async def f(n):\n    return await f(n + 1)\nawait f(0)",
        RUNTIME,
        type_name="RecursionError",
    ),
    case(
        "deeply_nested_result",
        "F",
        "x = []\nfor i in range(10_000):\n    x = [x]\nreturn x",
        frozenset({"runtime", "result_limit"}),
    ),
    case(
        "deeply_nested_dict_result",
        "F",
        "x = {}\nfor i in range(10_000):\n    x = {'k': x}\nreturn x",
        frozenset({"runtime", "result_limit"}),
    ),
    case(
        "deeply_nested_argument", "F", "x = []\nfor i in range(10_000):\n    x = [x]\nreturn await echo(x=x)", BLOCKED
    ),
    case("deeply_nested_print", "F", "x = []\nfor i in range(100_000):\n    x = [x]\nprint(x)", RUNTIME),
    case(
        "deeply_nested_json_dumps",
        "F",
        "import json\nx = []\nfor i in range(100_000):\n    x = [x]\nreturn json.dumps(x)",
        RUNTIME,
    ),
    case(
        "result_too_large",
        "F",
        "return '#' * 900_000",
        frozenset({"result_limit"}),
        limits=Limits(timeout=3.0, result=100_000),
    ),
    case(
        "result_list_too_large",
        "F",
        "return list(range(200_000))",
        frozenset({"result_limit"}),
        limits=Limits(timeout=3.0, result=100_000),
    ),
    case(
        "host_call_flood",
        "F",
        "for i in range(2000):\n    await echo(i=i)\nreturn 'PW' + 'NED'",
        frozenset({"call_limit"}),
        limits=CALLS,
    ),
    case(
        "host_call_flood_under_gather",
        "F",
        "import asyncio\nawait asyncio.gather(*[echo(i=i) for i in range(2000)])\nreturn 'PW' + 'NED'",
        frozenset({"call_limit"}),
        limits=CALLS,
    ),
    case("source_over_the_limit", "F", "x = 1\n" * 2000, COMPILE, limits=Limits(timeout=3.0, source=1000)),
    case("unbalanced_parentheses", "F", "(" * 10_000, COMPILE),
    case("deeply_nested_brackets", "F", "x = " + "[" * 5000 + "]" * 5000, COMPILE),
    case("deeply_nested_calls", "F", "x = " + "f(" * 5000 + ")" * 5000, COMPILE),
    case("long_unary_chain", "F", "x = " + "-" * 100_000 + "1", COMPILE),
    case("long_binary_chain", "F", "x = 1" + " + 1" * 50_000, frozenset({"syntax", "forbidden", OK})),
    case("deeply_nested_lambdas", "F", "f = " + "lambda: " * 5000 + "0", COMPILE),
    case(
        "deeply_nested_blocks", "F", "".join(" " * i + "if True:\n" for i in range(150)) + " " * 150 + "pass\n", COMPILE
    ),
    case("huge_integer_literal", "F", "x = " + "9" * 100_000, COMPILE),
]

# -- G. the operating system ---------------------------------------------------------------------------------------

G = [
    case("open_etc_passwd", "G", "return open('/etc/passwd').read()", BLOCKED, control=True),
    case(
        "open_proc_self_environ", "G", "return open('/proc/self/environ', 'rb').read().decode()", BLOCKED, control=True
    ),
    case("open_for_writing", "G", "open('pwned.txt', 'w').write('x')\nreturn 'PW' + 'NED'", BLOCKED),
    case(
        "dunder_import_environ", "G", "return __import__('os').environ['SANDBOX_TEST_SECRET']", FORBIDDEN, control=True
    ),
    case("import_os_environ", "G", "import os\nreturn os.environ['SANDBOX_TEST_SECRET']", FORBIDDEN, control=True),
    case(
        "from_os_import_environ",
        "G",
        "from os import environ\nreturn environ['SANDBOX_TEST_SECRET']",
        FORBIDDEN,
        control=True,
    ),
    case("os_system", "G", "import os\nreturn os.system('true')", FORBIDDEN, control=True),
    case("os_popen", "G", "import os\nreturn os.popen('echo PW; echo NED').read()", FORBIDDEN, control=True),
    case(
        "subprocess_run", "G", "import subprocess\nreturn subprocess.run(['true']).returncode", FORBIDDEN, control=True
    ),
    case(
        "asyncio_create_subprocess_exec",
        "G",
        "import asyncio\np = await asyncio.create_subprocess_exec('true')\nreturn await p.wait()",
        BLOCKED,
        control=True,
    ),
    case("socket_create", "G", "import socket\nsocket.socket().close()\nreturn 'PW' + 'NED'", FORBIDDEN, control=True),
    case(
        "asyncio_open_connection",
        "G",
        "import asyncio\nawait asyncio.open_connection('127.0.0.1', 9)\nreturn 'PW' + 'NED'",
        BLOCKED,
    ),
    case("urllib_urlopen", "G", "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9')", FORBIDDEN),
    case(
        "pathlib_read_text",
        "G",
        "import pathlib\nreturn pathlib.Path('/etc/passwd').read_text()",
        FORBIDDEN,
        control=True,
    ),
    case("io_open", "G", "import io\nreturn io.open('/etc/passwd').read()", FORBIDDEN, control=True),
    case("codecs_open", "G", "import codecs\nreturn codecs.open('/etc/passwd').read()", FORBIDDEN, control=True),
    case("json_codecs_open", "G", "import json\nreturn json.codecs.open('/etc/passwd').read()", BLOCKED, control=True),
    case(
        "builtins_open_through_codecs",
        "G",
        "import json\nreturn json.codecs.builtins.open('/etc/passwd').read()",
        BLOCKED,
        control=True,
    ),
    case("ctypes_libc_system", "G", "import ctypes\nreturn ctypes.CDLL(None).system(b'true')", FORBIDDEN, control=True),
]

CASES = [*A, *B, *C, *D, *E, *F, *G]
PARAMS = [
    pytest.param(c, isolation, id=f"{c.cls}-{c.name}-{isolation}")
    for c in CASES
    for isolation in (("process",) if c.process_only else ("inline", "process"))
]


# -- host side ------------------------------------------------------------------------------------------------------


class Carrier:
    """A host object with a secret on it; it must never reach the model's code."""

    def __init__(self, secret: str) -> None:
        self.secret = secret


class CarrierError(Exception):
    """A host exception with a neutral message and a secret on an attribute."""

    def __init__(self, secret: str) -> None:
        super().__init__("the host failed")
        self.secret = secret
        self.carrier = Carrier(secret)


class HostKit:
    """Host functions for the attacks, recording every value the sandbox hands them."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: list[object] = []

    def functions(self) -> dict[str, object]:
        """The functions one run sees."""
        secret = self.secret

        async def echo(*args: object, **kwargs: object) -> object:
            self.received.extend(args)
            self.received.extend(kwargs.values())
            return {"args": list(args), "kwargs": kwargs}

        echo.secret = secret  # type: ignore[attr-defined]  # bait for attribute walks on the proxy

        def leak_object() -> object:
            return Carrier(secret)

        def leak_nested() -> object:
            return {"ok": [1, Carrier(secret)]}

        def leak_set() -> object:
            return {1, 2}

        def leak_function() -> object:
            return leak_object

        async def leak_future() -> object:
            return asyncio.get_running_loop().create_future()

        def raise_carrier() -> object:
            raise CarrierError(secret)

        def raise_object_arg() -> object:
            raise ValueError(Carrier(secret))

        def raise_chained() -> object:
            raise RuntimeError("outer failure") from CarrierError(secret)

        async def hang() -> object:
            await anyio.sleep_forever()

        def resolve(name: str) -> object:
            if name == "echo":
                return echo
            raise FunctionError(f"no function {name!r}", type_name="LookupError")

        return {
            "echo": echo,
            "leak_object": leak_object,
            "leak_nested": leak_nested,
            "leak_set": leak_set,
            "leak_function": leak_function,
            "leak_future": leak_future,
            "raise_carrier": raise_carrier,
            "raise_object_arg": raise_object_arg,
            "raise_chained": raise_chained,
            "hang": hang,
            "tools": Namespace(resolve),
        }


def texts_of(result: RunResult) -> list[str]:
    """Everything a run shows: value, output, error message and traceback."""
    texts = [json.dumps(result.value, default=repr), result.stdout]
    if result.error is not None:
        texts += [result.error.message, result.error.traceback]
    return texts


def assert_nothing_leaked(result: RunResult, secret: str) -> None:
    """No host secret and no escape marker in anything the run shows."""
    for text in texts_of(result):
        assert secret not in text
        assert "PWNED" not in text


# -- the attacks --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "isolation"), PARAMS)
async def test_attack_is_stopped_and_the_sandbox_survives(sb: Sandbox, case: Case, host_secret: str) -> None:
    """The attack fails with an expected kind, leaks nothing, passes no objects out, and the next run works."""
    kit = HostKit(host_secret)
    result = await run(sb, case.code, functions=kit.functions(), limits=case.limits)
    if result.error is None:
        assert OK in case.kinds, f"the attack ran: value={result.value!r} stdout={result.stdout[:300]!r}"
    else:
        assert result.error.kind in case.kinds, result.error
        if case.type_name is not None:
            assert result.error.type_name == case.type_name, result.error
        assert result.error.message
        assert len(result.error.message) <= 2000, result.error.message[:300]
    assert_nothing_leaked(result, host_secret)
    assert result.calls <= case.limits.calls
    assert all(is_plain_json(value) for value in kit.received), kit.received
    await assert_still_works(sb)


def test_every_class_has_several_cases() -> None:
    """Each class A-G of the issue has at least three attacks."""
    counts = collections.Counter(c.cls for c in CASES)
    assert sorted(counts) == list("ABCDEFG")
    assert min(counts.values()) >= 3, counts


CONTROL_RUNNER = """
import asyncio, sys, textwrap
source = sys.stdin.read()
namespace = {"__name__": "__main__"}
exec("async def __main__():\\n" + textwrap.indent(source, "    ") + "\\n    pass\\n", namespace)
asyncio.run(namespace["__main__"]())
"""


@pytest.mark.parametrize("case", [c for c in CASES if c.control], ids=[c.name for c in CASES if c.control])
async def test_attack_works_in_plain_cpython(case: Case, tmp_path: Path, host_secret: str) -> None:
    """Run in a plain interpreter, the payload succeeds: the sandbox is what stops it."""
    with anyio.fail_after(30):
        done = await anyio.run_process(
            [sys.executable, "-c", CONTROL_RUNNER], input=case.code.encode(), check=False, cwd=tmp_path
        )
    assert done.returncode == 0, done.stderr.decode()[-2000:]


# -- C: mutation of shared state, in both directions -------------------------------------------------------------


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


# -- C: state left behind for the next run -------------------------------------------------------------------------


@dataclass(frozen=True)
class Leftover:
    """A first run that tries to leave state behind, and a second run that must not see it."""

    name: str
    first: str
    second: str
    expected: object


LEFTOVERS = [
    Leftover(
        "global_variable", "LEAK = 'left'", "try:\n    return LEAK\nexcept NameError:\n    return 'clean'", "clean"
    ),
    Leftover("module_constant", "import math\nmath.pi = 3", "import math\nreturn math.pi", math.pi),
    Leftover("module_new_attribute", "import json\njson.leak = 1", "import json\nreturn hasattr(json, 'leak')", False),
    Leftover(
        "module_function",
        "import json\njson.dumps = lambda *a, **k: 'pwned'",
        "import json\nreturn json.dumps([1])",
        "[1]",
    ),
    Leftover(
        "module_attribute_through_setattr",
        "import json\nsetattr(json, 'dumps', len)",
        "import json\nreturn json.dumps([1])",
        "[1]",
    ),
    Leftover(
        "module_dict_through_vars",
        "import json\nvars(json)['dumps'] = len",
        "import json\nreturn json.dumps([1])",
        "[1]",
    ),
    Leftover(
        "stdlib_class_attribute",
        "import string\nstring.Template.delimiter = '@'",
        "import string\nreturn string.Template('$x').substitute(x=1)",
        "1",
    ),
    Leftover(
        "stdlib_class_method",
        "import collections\ncollections.Counter.most_common = lambda self, n=None: 'pwned'",
        "from collections import Counter\nreturn Counter('aab').most_common(1)",
        [["a", 2]],
    ),
    Leftover(
        "json_encoder_separator",
        "import json\njson.JSONEncoder.item_separator = '|'",
        "import json\nreturn json.dumps([1, 2])",
        "[1, 2]",
    ),
    Leftover(
        "random_class_method",
        "import random\nrandom.Random.random = lambda self: 0.5",
        "import random\nreturn random.Random(1).random()",
        0.13436424411240122,
    ),
    Leftover(
        "random_seed",
        "import random\nrandom.seed(1)",
        "import random\nreturn random.random() != 0.13436424411240122",
        True,
    ),
    Leftover(
        "fraction_method",
        "import fractions\nfractions.Fraction.limit_denominator = lambda self, m=0: 'pwned'",
        "from fractions import Fraction\nreturn str(Fraction(1, 3).limit_denominator(10))",
        "1/3",
    ),
    Leftover(
        "decimal_context",
        "import decimal\ndecimal.getcontext().prec = 3",
        "import decimal\nreturn str(decimal.Decimal(1) / decimal.Decimal(3))",
        "0.3333333333333333333333333333",
    ),
    Leftover(
        "decimal_default_context",
        "import decimal\ndecimal.DefaultContext.prec = 5",
        "import decimal\nreturn getattr(decimal, 'DefaultContext', None) is None or decimal.DefaultContext.prec == 28",
        True,
    ),
    Leftover(
        "textwrap_class_default",
        "import textwrap\ntextwrap.TextWrapper.width = 5",
        "import textwrap\nreturn textwrap.TextWrapper().width",
        70,
    ),
    Leftover(
        "builtins_through_frame",
        "def g():\n    yield 1\ngetattr(getattr(g(), 'gi_frame'), 'f_builtins')['len'] = None",
        "return len([1, 2])",
        2,
    ),
]


def assert_host_stdlib_untouched() -> None:
    """The host process's own modules are as Python ships them."""
    assert math.pi == 3.141592653589793
    assert not hasattr(json, "leak")
    assert json.dumps([1, 2]) == "[1, 2]"
    assert string.Template.delimiter == "$"
    assert collections.Counter("aab").most_common(1) == [("a", 2)]
    assert random.Random(1).random() == 0.13436424411240122
    assert decimal.getcontext().prec == 28
    assert decimal.DefaultContext.prec == 28
    assert textwrap.TextWrapper().width == 70


@pytest.mark.parametrize("isolation", ["inline", "process"])
@pytest.mark.parametrize("leftover", LEFTOVERS, ids=[left.name for left in LEFTOVERS])
async def test_a_run_leaves_nothing_behind_for_the_next(sb: Sandbox, leftover: Leftover) -> None:
    """Whatever the first run changes, later runs (on any worker) and the host see a fresh world."""
    await run(sb, leftover.first, limits=QUICK)
    for _ in range(6):  # enough runs to land on every warm worker of a small pool
        result = await run(sb, leftover.second, limits=QUICK)
        assert result.error is None, result.error
        assert result.value == leftover.expected
    assert_host_stdlib_untouched()


# -- G: the worker process itself --------------------------------------------------------------------------------


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rpartition(")")[2].split()[1])
            children[parent].append(int(entry.name))
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
async def test_worker_processes_have_a_scrubbed_environment_an_empty_directory_and_limits(
    sandboxes: dict[str, Sandbox], host_secret: str
) -> None:
    """Workers hold no host secret in their environment, run in an empty directory with no stdin, under rlimits."""
    result = await sandboxes["process"].run("return 1")
    assert result.value == 1
    check_workers(host_secret)


def check_workers(host_secret: str) -> None:
    """Inspect every descendant process of the test through /proc."""
    workers = [pid for pid in _descendants(os.getpid()) if Path(f"/proc/{pid}/cmdline").exists()]
    assert workers
    for pid in workers:
        proc = Path(f"/proc/{pid}")
        assert host_secret.encode() not in (proc / "environ").read_bytes()
        assert list(Path(os.readlink(proc / "cwd")).iterdir()) == []
        stdin = proc / "fd" / "0"
        assert not stdin.exists() or os.readlink(stdin) == "/dev/null"
        limits = (proc / "limits").read_text().splitlines()
        address_space = next(line for line in limits if line.startswith("Max address space"))
        assert address_space.split()[3] != "unlimited", address_space
