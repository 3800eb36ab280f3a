"""Red team, format strings and `str` tricks.

`str.format`, `format_map`, f-strings, nested specs and `string` helpers can walk attributes (`{0.__class__}`); each
field's attribute is read through the same guard as `getattr`, subclasses of `str` get no unguarded `format`, and
huge widths are size-checked.
"""

from __future__ import annotations

from redteam_kit import BUDGET, Value, case, guard, limit, names_are_unique, policy, raised, runs, works_in_cpython

CASES = [
    case(
        "format_attribute_walk",
        'return "{0.__class__.__base__}".format(1) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_auto_numbered_walk",
        'return "{.__class__.__base__}".format(()) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_map_to_function_globals",
        """
        def f():
            pass
        return "{a.__globals__}".format_map({"a": f}) + "PW" + "NED"
        """,
        guard("`.__globals__` is not allowed"),
        control=True,
    ),
    case(
        "format_map_init_globals",
        """
        class C:
            def __init__(self):
                pass
        return "{a.__init__.__globals__}".format_map({"a": C()}) + "PW" + "NED"
        """,
        guard("`.__globals__` is not allowed"),
        control=True,
    ),
    case(
        "unbound_str_format",
        'return str.format("{0.__class__.__base__}", 1) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "unbound_str_format_map",
        'return str.format_map("{a.__class__.__base__}", {"a": 1}) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_string_built_at_runtime",
        """
        fmt = "{0.__cl" + "ass__.__base__}"
        render = fmt.format
        return render(1) + "PW" + "NED"
        """,
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_called_from_map",
        'return list(map("{0.__class__.__base__}".format, [1]))[0] + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_through_partial",
        """
        import functools
        return functools.partial(str.format, "{0.__class__.__base__}")(1) + "PW" + "NED"
        """,
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_index_then_attribute",
        'return "{0[0].__class__.__base__}".format([1]) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_public_then_dunder",
        'return "{x.real.__class__.__base__}".format(x=1) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "format_frame_attributes",
        """
        def g():
            yield 1
        return "{0.gi_frame.f_globals}".format(g()) + "PW" + "NED"
        """,
        guard("`.gi_frame` is not allowed"),
        control=True,
    ),
    case(
        "format_nested_spec_field_walk",
        'return "{0:{1.__class__.__base__}}".format(1, 2) + "PW" + "NED"',
        guard("`.__base__` is not allowed"),
    ),
    case(
        "string_formatter_get_field",
        """
        import string
        obj, _ = string.Formatter().get_field("0.__class__", (1,), {})
        return str(obj) + "PW" + "NED"
        """,
        raised("AttributeError", "module 'string' has no attribute 'Formatter' in the sandbox"),
        control=True,
    ),
    case(
        "string_formatter_vformat",
        """
        import string
        return string.Formatter().vformat("{0.__class__}", (1,), {}) + "PW" + "NED"
        """,
        raised("AttributeError", "module 'string' has no attribute 'Formatter' in the sandbox"),
        control=True,
    ),
    case(
        "string_formatter_subclass",
        """
        import string
        class F(string.Formatter):
            pass
        return F().format("{0.__class__}", 1) + "PW" + "NED"
        """,
        raised("AttributeError", "module 'string' has no attribute 'Formatter' in the sandbox"),
        control=True,
    ),
    case(
        "fstring_dunder",
        """
        x = 1
        return f"{x.__class__.__base__}" + "PW" + "NED"
        """,
        policy("`.__base__` is not allowed"),
        control=True,
    ),
    case(
        "fstring_getattr_dunder",
        'return f"{getattr(1, \'__redu\' + \'ce_ex__\')}" + "PW" + "NED"',
        guard("`.__reduce_ex__` is not allowed"),
        control=True,
    ),
    case(
        "fstring_dunder_in_nested_spec",
        'return f"{1:{().__class__.__base__}}" + "PW" + "NED"',
        policy("`.__base__` is not allowed"),
    ),
    case(
        "template_braces_do_not_walk_attributes",
        """
        import string
        return string.Template("${a.__class__}").safe_substitute(a=1)
        """,
        Value("${a.__class__}"),
    ),
    case(
        "own_format_method_walks_attributes",
        """
        class F:
            def __format__(self, spec):
                return "{0.__class__.__base__}".format(self)
        return f"{F()}" + "PW" + "NED"
        """,
        guard("`.__base__` is not allowed"),
    ),
    case(
        "format_field_coroutine_await",
        """
        async def f():
            return 1
        co = f()
        try:
            return "{0.cr_await}".format(co) + "PW" + "NED"
        finally:
            co.close()
        """,
        guard("`.cr_await` is not allowed"),
    ),
    case(
        "format_field_private_loop",
        """
        import asyncio
        return "{0._loop}".format(asyncio.Lock()) + "PW" + "NED"
        """,
        guard("`._loop` is not allowed"),
    ),
    case(
        "format_item_key_shaped_like_a_dunder",
        'return "{0[__class__]}".format({"__class__": "plain item"})',
        Value("plain item"),
    ),
    case(
        "format_map_with_missing_hook",
        """
        class M(dict):
            def __missing__(self, key):
                return key
        return '{a}{b}'.format_map(M())
        """,
        Value("ab"),
    ),
    case(
        "strftime_huge_width",
        """
        import datetime
        return len(datetime.date(2020, 1, 1).strftime("%999999999Y"))
        """,
        Value(0),
    ),
    case(
        "format_builtin_on_a_str_subclass",
        """
        class S(str):
            pass
        x = format(S('#'), '>2000000')
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "fstring_spec_on_a_str_subclass",
        """
        class S(str):
            pass
        x = f"{S('#'):>2000000}"
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "str_subclass_format_walks_attributes",
        """
        import json
        class S(str):
            pass
        return S("{0.__globals__[codecs].sys.modules[os].getcwd}").format(json.dumps) + "PW" + "NED"
        """,
        guard("`.__globals__` is not allowed"),
    ),
    case(
        "userstring_format_walks_attributes",
        """
        import collections, json
        walk = "{0.__globals__[codecs].sys.modules[os].getcwd}"
        return collections.UserString(walk).format(json.dumps) + "PW" + "NED"
        """,
        raised("AttributeError", "module 'collections' has no attribute 'UserString' in the sandbox"),
    ),
    case(
        "userstring_format_map_walks_attributes",
        """
        import collections
        return collections.UserString("{a.__class__}").format_map({"a": 1}) + "PW" + "NED"
        """,
        raised("AttributeError", "module 'collections' has no attribute 'UserString' in the sandbox"),
    ),
    case(
        "format_walks_to_mro",
        "'{0.__class__.__mro__}'.format(1)",
        guard("`.__mro__` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "format_map_to_globals",
        "'{x.__globals__}'.format_map({'x': (lambda: 0)})",
        guard("`.__globals__` is not allowed"),
        limits=BUDGET,
    ),
    # -- auto-numbered fields with attributes (`{.x}`, `{[0]}`) go through the same guard
    case(
        "format_field_private_attribute_of_a_facade",
        "import json\nreturn '{._x}'.format(json)",
        guard("`._x` is not allowed"),
    ),
    case(
        "format_auto_numbered_frame_walk",
        """
        def g():
            yield 1
        return '{.gi_frame}'.format(g())
        """,
        guard("`.gi_frame` is not allowed"),
    ),
    case(
        "format_auto_numbered_index_then_dunder",
        "return '{[0].__globals__}'.format([lambda: 0])",
        guard("`.__globals__` is not allowed"),
    ),
]


test_format_fields_are_guarded = runs(
    CASES, "Format fields read attributes through the guard, and widths through the size check."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)
