"""Red team, introspection: the class hierarchy, dunder attributes, class hooks and attribute tricks.

Walks from any object to `object.__subclasses__()`, `__mro__`, `__globals__` and friends, by attribute, by `getattr`
with a name built at run time, through `operator`/`functools` helpers, `match` patterns, and class hooks a class body or
three-argument `type()` would install. Each is refused by the compile-time policy or a runtime guard, by name.
"""

from __future__ import annotations

from redteam_kit import BUDGET, Value, case, guard, names_are_unique, policy, raised, runs, works_in_cpython

CASES = [
    case(
        "dunder_walk_to_subclasses",
        "return ().__class__.__bases__[0].__subclasses__()[0].__name__",
        policy("`.__subclasses__` is not allowed"),
        control=True,
    ),
    case(
        "list_class_mro_walk",
        "return [c.__name__ for c in [].__class__.__mro__[1].__subclasses__()][:3]",
        policy("`.__subclasses__` is not allowed"),
        control=True,
    ),
    case(
        "getattr_with_concatenated_dunder",
        """
        cls = getattr((), "__cl" + "ass__")
        base = getattr(cls, "__ba" + "se__")
        return len(getattr(base, "__subcl" + "asses__")())
        """,
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "getattr_with_name_built_from_parts",
        """
        name = "".join(["_", "_", "redu", "ce_ex", "_", "_"])
        return str(getattr(1, name)) + "PW" + "NED"
        """,
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "getattr_default_hides_nothing",
        'return str(getattr(1, "__redu" + "ce_ex__", None)) + "PW" + "NED"',
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "type_mro_method",
        """
        top = type(()).mro()[-1]
        return len(getattr(top, "__subcl" + "asses__")())
        """,
        policy("`.mro` is not allowed"),
        control=True,
    ),
    case(
        "mro_through_getattr",
        'return str(getattr(type(()), "mro")()) + "PW" + "NED"',
        guard("`.mro` is not allowed"),
        control=True,
    ),
    case(
        "vars_of_object_reaches_subclasses",
        'return len(vars(type)["__subclasses__"](object))',
        guard("`vars(x)` works on instances of the code's own classes only"),
        control=True,
    ),
    case(
        "type_subclasses_unbound",
        "return len(type.__subclasses__(object))",
        policy("`.__subclasses__` is not allowed"),
        control=True,
    ),
    case(
        "lambda_globals",
        'return str((lambda: 0).__globals__["__builtins__"])',
        policy("`.__globals__` is not allowed"),
        control=True,
    ),
    case(
        "function_globals_through_getattr",
        """
        def f():
            pass
        g = getattr(f, "__glob" + "als__")
        b = g["__builtins__"]
        imp = b["__import__"] if isinstance(b, dict) else getattr(b, "__import__")
        return imp("os").getcwd()
        """,
        guard("`.__globals__` is not allowed"),
        control=True,
    ),
    case(
        "builtin_self_is_the_builtins_module",
        'return str(getattr(len, "__se" + "lf__").open) + "PW" + "NED"',
        guard("`.__self__` is not allowed"),
        control=True,
    ),
    case("dir_lists_no_dunder", 'return [name for name in dir(()) if name.startswith("__")]', Value([])),
    case(
        "dir_then_getattr_dunders",
        """
        names = [name for name in dir(()) if name == "__reduce_ex__"] or ["__reduce_ex__"]  # dir() hides it
        return str(getattr((), names[0])(2)) + "PW" + "NED"
        """,
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "match_keyword_pattern_reads_dunder",
        """
        match 1:
            case int(__class__=c):
                return str(c) + "PW" + "NED"
        """,
        policy("`__class__=` is not allowed"),
        control=True,
    ),
    case(
        "match_keyword_pattern_reads_frame",
        """
        def g():
            yield 1
        match g():
            case object(gi_frame=f):
                return str(f) + "PW" + "NED"
        """,
        policy("`gi_frame=` is not allowed"),
        control=True,
    ),
    case(
        "match_positional_pattern_through_match_args",
        """
        X = type("X", (), {"__match_args__": ("__class__",)})
        match X():
            case X(c):
                return str(c) + "PW" + "NED"
        """,
        guard("a class cannot define `__match_args__` in the sandbox"),
        control=True,
    ),
    case(
        "match_args_and_subclasshook_read_any_dunder",
        """
        import collections.abc
        import json
        Q = type(
            "Q", (collections.abc.Hashable,),
            {"__subclasshook__": classmethod(lambda cls, other: True), "__match_args__": ("__globals__",)},
        )
        match json.dumps:
            case Q(g):
                return str(sorted(g)[:3]) + "PW" + "NED"
        raise LookupError("no match")
        """,
        guard("a class cannot define `__subclasshook__` in the sandbox"),
        control=True,
    ),
    case(
        "metaclass_instancecheck_and_match_args_read_any_globals",
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
        guard("a class cannot define `__instancecheck__` in the sandbox"),
        control=True,
    ),
    case(
        "three_argument_type_defines_a_finalizer",
        """
        X = type("X", (), {"__del__": lambda self: print("PW" + "NED")})
        x = X()
        return 1
        """,
        guard("a class cannot define `__del__` in the sandbox"),
        control=True,
    ),
    case(
        "three_argument_type_with_dunder_methods",
        """
        Evil = type("Evil", (), {"__getattribute__": lambda self, name: "PW" + "NED"})
        return Evil().anything
        """,
        guard("a class cannot define `__getattribute__` in the sandbox"),
        control=True,
    ),
    case(
        "operator_methodcaller_dunder",
        """
        import operator
        return str(operator.methodcaller('__reduce_ex__', 2)(1)) + 'PW' + 'NED'
        """,
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "operator_attrgetter_dotted_dunder",
        """
        import operator
        return str(operator.attrgetter('real.__class__.__base__')(1)) + 'PW' + 'NED'
        """,
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "operator_attrgetter_bypass",
        """
        import operator
        return str(operator.attrgetter('__reduce_ex__')(1)) + 'PW' + 'NED'
        """,
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "functools_reduce_getattr",
        """
        import functools
        return str(functools.reduce(getattr, ["__class__", "__base__"], ())) + "PW" + "NED"
        """,
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "map_getattr_dunder",
        "return str(list(map(getattr, [1], ['__reduce_ex__']))) + 'PW' + 'NED'",
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "itertools_starmap_getattr",
        """
        import itertools
        return str(list(itertools.starmap(getattr, [((), "__reduce_ex__")]))) + "PW" + "NED"
        """,
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "sorted_key_getattr_dunder",
        """
        import functools
        return str(sorted([1], key=functools.partial(getattr, name='__reduce_ex__')))
        """,
        guard("`.__reduce_ex__` is not allowed"),
    ),
    *(
        case(
            f"class_body_defines_{name}",
            f"""
            class X:
                def __{name}__(self, *args):
                    return 'PW' + 'NED'
            return 'PW' + 'NED'
            """,
            policy(f"`__{name}__` is a reserved name"),
        )
        for name in (
            "set_name",
            "init_subclass",
            "class_getitem",
            "getattribute",
            "setattr",
            "delattr",
            "reduce_ex",
            "reduce",
            "deepcopy",
            "copy",
            "await",
            "instancecheck",
            "subclasshook",
            "getstate",
            "setstate",
            "dir",
            "get",
            "set",
        )
    ),
    case(
        "class_body_assigns_match_args",
        """
        class X:
            __match_args__ = ('real',)
        return 1
        """,
        policy("`__match_args__` is a reserved name"),
    ),
    case(
        "class_body_assigns_slots",
        """
        class X:
            __slots__ = ()
        return 1
        """,
        policy("`__slots__` is a reserved name"),
    ),
    case(
        "three_argument_type_defines_set_name",
        """
        X = type("X", (), {"__set_name__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__set_name__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_class_getitem",
        """
        X = type("X", (), {"__class_getitem__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__class_getitem__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_setattr",
        """
        X = type("X", (), {"__setattr__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__setattr__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_reduce_ex",
        """
        X = type("X", (), {"__reduce_ex__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__reduce_ex__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_deepcopy",
        """
        X = type("X", (), {"__deepcopy__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__deepcopy__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_await",
        """
        X = type("X", (), {"__await__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__await__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_get",
        """
        X = type("X", (), {"__get__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__get__` in the sandbox"),
    ),
    case(
        "three_argument_type_defines_getstate",
        """
        X = type("X", (), {"__getstate__": lambda self, *args: "PW" + "NED"})
        return 1
        """,
        guard("a class cannot define `__getstate__` in the sandbox"),
    ),
    case(
        "three_argument_type_annotations_are_not_readable",
        """
        B = type("B", (), {"__annotations__": {"x": int}})
        return str(getattr(B, "__annota" + "tions__")) + "PW" + "NED"
        """,
        guard("`.__annotations__` is not allowed"),
    ),
    case(
        "three_argument_type_with_dunder_slot_names",
        """
        B = type("B", (), {"__slots__": ("__globals__", "__code__")})
        b = B()
        return 1
        """,
        Value(1),
    ),
    case(
        "three_argument_type_with_a_host_module_name",
        """
        B = type("B", (), {"__module__": "os"})
        return str(B())[:7]
        """,
        Value("<os.B o"),
    ),
    case(
        "operator_attrgetter_private",
        """
        import asyncio, operator
        return str(operator.attrgetter("_loop")(asyncio.Lock())) + "PW" + "NED"
        """,
        guard("`._loop` is not allowed"),
    ),
    case(
        "operator_methodcaller_private",
        """
        import asyncio, operator
        return str(operator.methodcaller("_get_loop")(asyncio.Lock())) + "PW" + "NED"
        """,
        guard("`._get_loop` is not allowed"),
    ),
    case(
        "class_of_class_is_the_safe_type",
        "().__class__.__class__",
        raised(
            "TypeError",
            "the returned value is a '_TypeMeta' object: a class is not data: return its name (`C.__name__`) or an",
        ),
        limits=BUDGET,
    ),
    case(
        "mro_through_getattr_of_the_class",
        "getattr(().__class__, 'mro')",
        guard("`.mro` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "subclasses_through_getattr",
        "getattr(object, '__subclasses__')",
        guard("`.__subclasses__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "str_subclass_as_attribute_name",
        """
        class S(str):
            pass
        getattr(object, S('__subclasses__'))
        """,
        raised("TypeError", "attribute name must be a string, not 'S'"),
        limits=BUDGET,
    ),
    case(
        "attrgetter_dotted_bases",
        """
        import operator
        operator.attrgetter('__class__.__bases__')(1)
        """,
        guard("`.__bases__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "methodcaller_subclasses",
        """
        import operator
        operator.methodcaller('__subclasses__')(object)
        """,
        guard("`.__subclasses__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "copy_reduce_hook_name",
        """
        class A:
            def __reduce_ex__(self, p):
                return 1
        """,
        policy("`__reduce_ex__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "deepcopy_hook_name",
        """
        class A:
            def __deepcopy__(self, memo):
                return 1
        """,
        policy("`__deepcopy__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "del_finalizer",
        """
        class A:
            def __del__(self):
                print('x')
        """,
        policy("`__del__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "init_subclass_hook",
        """
        class A:
            def __init_subclass__(cls):
                pass
        """,
        policy("`__init_subclass__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "set_name_hook",
        """
        class D:
            def __set_name__(self, o, n):
                pass
        """,
        policy("`__set_name__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "class_getitem_hook",
        """
        class A:
            def __class_getitem__(cls, x):
                return 1
        """,
        policy("`__class_getitem__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "await_hook",
        """
        class A:
            def __await__(self):
                yield 1
        """,
        policy("`__await__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "match_args_hook",
        """
        class A:
            __match_args__ = ('__class__',)
        """,
        policy("`__match_args__` is a reserved name"),
        limits=BUDGET,
    ),
    case(
        "match_keyword_dunder",
        """
        match 1:
            case int(__class__=c):
                c
        """,
        policy("`__class__=` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "type_dict",
        "type.__dict__",
        policy("`.__dict__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "reduce_ex_attribute",
        "(1).__reduce_ex__(2)",
        policy("`.__reduce_ex__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "reduce_ex_getattr",
        "getattr(1, '__reduce_ex__')",
        guard("`.__reduce_ex__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "classmethod_func",
        """
        class A:
            @classmethod
            def m(cls):
                pass
        A.m.__func__
        """,
        policy("`.__func__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "staticmethod_wrapped",
        "staticmethod(print).__wrapped__",
        policy("`.__wrapped__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "own_getattr_does_not_open_globals",
        """
        class A:
            def __getattr__(self, n):
                return n
        A().__globals__
        """,
        policy("`.__globals__` is not allowed"),
        limits=BUDGET,
    ),
    # -- `vars(obj)`: a copy, for the code's own instances only; `__dict__` stays refused
    case(
        "vars_is_a_copy",
        """
        class A:
            pass
        a = A()
        a.x = 1
        vars(a)['x'] = 2
        return a.x
        """,
        Value(1),
    ),
    case(
        "vars_of_a_class",
        """
        class A:
            pass
        return vars(A)
        """,
        guard("`vars(x)` works on instances of the code's own classes only"),
    ),
    case(
        "vars_of_a_function",
        """
        def f():
            pass
        return vars(f)
        """,
        Value({}),
    ),
    case(
        "vars_of_a_host_proxy",
        "return vars(echo)",
        guard("`vars(x)` works on instances of the code's own classes only"),
    ),
    case(
        "vars_of_a_stdlib_instance",
        "import textwrap\nreturn vars(textwrap.TextWrapper())",
        guard("`vars(x)` works on instances of the code's own classes only"),
    ),
    case(
        "vars_of_a_subclass_of_a_stdlib_class",
        """
        import textwrap
        class W(textwrap.TextWrapper):
            pass
        return sorted(vars(W()))[:3]
        """,
        Value(["break_long_words", "break_on_hyphens", "drop_whitespace"]),
    ),
    case(
        "vars_of_an_own_exception",
        """
        class E(Exception):
            def __init__(self, code):
                super().__init__(code)
                self.code = code
        return vars(E(3))
        """,
        Value({"code": 3}),
    ),
    case(
        "dict_update_on_self_stays_refused",
        """
        class A:
            def __init__(self, **kw):
                self.__dict__.update(kw)
        return A(x=1).x
        """,
        policy("`.__dict__` is not allowed"),
    ),
    case(
        "vars_of_a_subclass_of_an_asyncio_lock",
        """
        import asyncio
        class L(asyncio.Lock):
            pass
        return vars(L())
        """,
        guard("subclassing `asyncio.Lock` is not allowed in the sandbox"),
    ),
    case(
        "vars_keeps_the_codes_own_private_names",
        """
        class A:
            def __init__(self):
                self._n = 1
                self.m = 2
        return vars(A())
        """,
        Value({"_n": 1, "m": 2}),
    ),
]


test_introspection_is_refused_by_name = runs(
    CASES,
    "No path from an object reaches the class hierarchy, globals or a class hook; each refusal names the attribute.",
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)
