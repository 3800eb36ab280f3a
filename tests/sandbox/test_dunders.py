"""Red team for the dunders code may read: `__name__`, `__qualname__`, `__doc__`, `__module__` and `__class__`.

Each is readable on any object because it opens nothing: the first four only ever yield a str or None, and
`__class__` yields exactly what the sandbox's `type(x)` yields. The cases here show that no path from them reaches
the class hierarchy, globals, frames or code, that none can be set, that they show nothing of the host, and that
every dunder still refused says what to write instead. (That the everyday idioms give what CPython gives is in
`test_language.py`.)
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest
from redteam_kit import HostKit, case, guard, policy, run, runs

if TYPE_CHECKING:
    from sandbox import Sandbox

ISOLATIONS = ["inline", "process"]
MODULES = sorted(
    """asyncio base64 bisect calendar collections copy dataclasses datetime decimal difflib enum fractions functools
    hashlib heapq html itertools json math operator random re statistics string textwrap time typing unicodedata
    urllib uuid""".split()
)


REFUSED = [
    case(
        "class_then_subclasses",
        "return len(().__class__.__subclasses__())",
        policy("`.__subclasses__` is not allowed"),
    ),
    case(
        "class_then_mro",
        "return len((1).__class__.__mro__)",
        policy("`.__mro__` is not allowed"),
    ),
    case(
        "class_then_bases",
        "return str((1).__class__.__bases__)",
        policy("`.__bases__` is not allowed"),
    ),
    case(
        "class_then_base_dynamically",
        'return str(getattr(getattr(1, "__class__"), "__base__"))',
        guard("`.__base__` is not allowed"),
    ),
    case(
        "class_then_dict",
        "return str((1).__class__.__dict__)",
        policy("`.__dict__` is not allowed"),
    ),
    case(
        "class_then_mro_method",
        "return str((1).__class__.mro())",
        policy("`.mro` is not allowed"),
    ),
    case(
        "class_of_class_then_subclasses",
        "return str(().__class__.__class__.__subclasses__(object))",
        policy("`.__subclasses__` is not allowed"),
    ),
    case(
        "class_of_exception_then_globals",
        """
        try:
            1 / 0
        except Exception as e:
            e.__class__.__init__.__globals__
        """,
        policy("`.__globals__` is not allowed"),
    ),
    case(
        "base_init_then_globals",
        'return str(getattr(Exception.__init__, "__glob" + "als__"))',
        guard("`.__globals__` is not allowed"),
    ),
    case(
        "function_globals_dynamically",
        """
        def f():
            pass
        return str(getattr(f, "__glob" + "als__"))
        """,
        guard("`.__globals__` is not allowed"),
    ),
    case(
        "function_code",
        """
        def f():
            pass
        return str(f.__code__)
        """,
        policy("`.__code__` is not allowed"),
    ),
    case(
        "function_closure_of_a_wrapped_async_def",
        """
        async def f():
            pass
        return str(getattr(f, "__clo" + "sure__"))
        """,
        guard("`.__closure__` is not allowed"),
    ),
    case(
        "wrapped_of_an_async_def",
        """
        async def f():
            pass
        return str(getattr(f, "__wrap" + "ped__"))
        """,
        guard("`.__wrapped__` is not allowed"),
    ),
    case(
        "traceback_then_frame",
        """
        try:
            1 / 0
        except Exception as e:
            return str(e.__traceback__.tb_frame)
        """,
        policy("`.tb_frame` is not allowed"),
    ),
    case(
        "generator_frame",
        """
        g = (i for i in [1])
        return str(g.gi_frame)
        """,
        policy("`.gi_frame` is not allowed"),
    ),
    case(
        "set_name",
        """
        def f():
            pass
        f.__name__ = 'g'
        """,
        policy("`.__name__` can be read but not set or deleted in the sandbox"),
    ),
    case(
        "set_name_with_setattr",
        """
        def f():
            pass
        setattr(f, '__name__', 'g')
        """,
        guard("setting `__name__` is not allowed: dunder attributes are private in the sandbox"),
    ),
    case(
        "set_qualname_of_a_class",
        """
        class A:
            pass
        A.__qualname__ = 'os.A'
        """,
        policy("`.__qualname__` can be read but not set or deleted in the sandbox"),
    ),
    case(
        "set_module_with_setattr",
        """
        class A:
            pass
        setattr(A, '__module__', 'os')
        """,
        guard("setting `__module__` is not allowed: dunder attributes are private in the sandbox"),
    ),
    case(
        "delete_doc",
        """
        class A:
            'doc'

        del A.__doc__
        """,
        policy("`.__doc__` can be read but not set or deleted in the sandbox"),
    ),
    case(
        "set_class",
        """
        class A:
            pass
        class B:
            pass
        a = A()
        a.__class__ = B
        """,
        policy("`.__class__` can be read but not set or deleted in the sandbox"),
    ),
    case(
        "set_class_with_setattr",
        """
        class A:
            pass
        setattr(A(), '__class__', int)
        """,
        guard("setting `__class__` is not allowed: dunder attributes are private in the sandbox"),
    ),
    case(
        "set_class_with_object_setattr",
        """
        class A:
            pass
        object.__setattr__(A(), '__class__', int)
        """,
        policy("`.__setattr__` is not allowed"),
    ),
    case(
        "augmented_name",
        """
        def f():
            pass
        f.__name__ += 'x'
        """,
        policy("`.__name__` can be read but not set or deleted in the sandbox"),
    ),
    case(
        "format_walk_past_class",
        'return "{0.__class__.__subclasses__}".format(1)',
        guard("`.__subclasses__` is not allowed"),
    ),
    case(
        "format_map_walk_past_class",
        'return "{a.__class__.__mro__}".format_map({"a": 1})',
        guard("`.__mro__` is not allowed"),
    ),
    case(
        "fstring_walk_past_class",
        'return f"{(1).__class__.__base__}"',
        policy("`.__base__` is not allowed"),
    ),
    case(
        "attrgetter_past_class",
        """
        import operator
        return str(operator.attrgetter('__class__.__mro__')(1))
        """,
        guard("`.__mro__` is not allowed"),
    ),
    case(
        "getattr_default_does_not_hide_a_refusal",
        'return getattr(1, "__dict__", None)',
        guard("`.__dict__` is not allowed"),
    ),
    case(
        "init_subclass_in_a_class_body",
        """
        class A:
            def __init_subclass__(cls):
                pass
        """,
        policy("`__init_subclass__` is a reserved name"),
    ),
    case(
        "init_subclass_through_type",
        "type('A', (), {'__init_subclass__': classmethod(lambda cls: None)})",
        guard("a class cannot define `__init_subclass__` in the sandbox"),
    ),
    case(
        "class_cell_name",
        """
        class A:
            def f(self):
                return __class__
        return str(A().f())
        """,
        policy("`__class__` is a reserved name"),
    ),
    case(
        "match_class_pattern_reads_class",
        """
        match 1:
            case int(__class__=c):
                return str(c)
        """,
        policy("`__class__=` is not allowed"),
    ),
    case(
        "base_init_on_an_object_the_code_did_not_define",
        """
        e = ValueError('a')
        Exception.__init__(e, 'b')
        """,
        guard("`Exception.__init__(obj, ...)` works only on an instance of the code's own subclass"),
    ),
    case(
        "base_init_on_a_plain_dict",
        """
        d = {}
        dict.__init__(d, a=1)
        return d
        """,
        guard("`dict.__init__(obj, ...)` works only on an instance of the code's own subclass"),
    ),
    case(
        "base_init_on_a_module_facade",
        """
        import decimal
        decimal.Context.__init__(decimal.getcontext(), prec=1)
        """,
        guard("`Context.__init__(obj, ...)` works only on an instance of the code's own subclass"),
    ),
    case(
        "facade_class_then_its_getattr_hook",
        """
        import math
        return str(math.__class__.__getattr__)
        """,
        guard("`.__getattr__` is not allowed"),
    ),
    case(
        "facade_class_then_dict",
        """
        import math
        return str(type(math).__dict__)
        """,
        policy("`.__dict__` is not allowed"),
    ),
    case(
        "host_proxy_class_then_dict",
        "return str(echo.__class__.__dict__)",
        policy("`.__dict__` is not allowed"),
    ),
    case(
        "host_proxy_private_state",
        "return str(echo._calls)",
        guard("`._calls` is not allowed"),
    ),
    case(
        "vars_of_a_value_the_code_did_not_define",
        "return vars(1)",
        guard("`vars(x)` works on instances of the code's own classes only"),
    ),
    case(
        "name_of_main_cannot_be_set",
        '__name__ = "os"',
        policy("`__name__` is a reserved name"),
    ),
]


test_no_path_leads_further_than_the_readable_dunders = runs(
    REFUSED, "Each attempt is refused exactly, shows no host secret, and the sandbox keeps working."
)


SWEEP = "\n".join(f"import {module}" for module in MODULES) + textwrap.dedent(
    """

    modules = [{modules}]
    objects = [print, len, type, list, dict, str, int, object, super, Exception, ValueError, getattr, sorted, range]
    objects += [echo, tools, tools.echo, boom, 1, "s", [1], {{"a": 1}}, None, True, 1.5, b"x", (1,), {{1}}]
    try:
        await boom()
    except Exception as e:
        objects += [e, type(e)]
    pending = echo(1)
    objects.append(pending)
    for module in modules:
        objects.append(module)
        for name in dir(module):
            member = getattr(module, name)
            objects.append(member)
            if isinstance(member, type):
                objects.extend(getattr(member, attr) for attr in dir(member) if not callable(getattr(member, attr)))
    not_str, wrong_class, secret = [], [], []
    for obj in objects:
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            value = getattr(obj, attr, None)
            if value is not None and type(value) is not str:
                not_str.append(f"{{obj!r}}.{{attr}}")
            elif value is not None and "HOST-SECRET" in value:
                secret.append(f"{{obj!r}}.{{attr}}")
        if obj.__class__ is not type(obj) or getattr(obj, "__class__") is not type(obj):
            wrong_class.append(repr(obj))
    await pending
    return {{"swept": len(objects) > 500, "not_str": not_str, "wrong_class": wrong_class, "secret": secret}}
    """
).format(modules=", ".join(MODULES))


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_readable_dunders_of_every_reachable_object_are_str_or_none_and_class_is_type(
    sb: Sandbox, host_secret: str
) -> None:
    """Over every builtin, module member, host proxy and host error the code can reach, the four names and docs are
    str or None and free of host text, and `__class__` (also through `getattr`) is exactly `type(x)`."""
    result = await run(sb, SWEEP, functions=HostKit(host_secret).functions())
    assert result.error is None, result.error
    assert result.value == {"swept": True, "not_str": [], "wrong_class": [], "secret": []}


@pytest.mark.parametrize("isolation", ["inline"])
async def test_host_objects_show_the_sandbox_names_not_the_host_functions(sb: Sandbox, host_secret: str) -> None:
    """A host function's proxy is named as the code called it; its docstring is the sandbox's, not the host's."""
    code = """
    return [echo.__name__, tools.lookup.__name__, echo.__doc__ == type(echo).__doc__, type(echo).__name__,
            type(tools).__name__, boom.__module__ == type(boom).__module__]
    """
    result = await run(sb, textwrap.dedent(code), functions=HostKit(host_secret).functions())
    assert result.error is None, result.error
    assert result.value == ["echo", "lookup", True, "function", "namespace", True]


@pytest.mark.parametrize("isolation", ["inline"])
async def test_module_facades_are_named_as_their_module(sb: Sandbox) -> None:
    """`json.__name__` is `"json"`, as in CPython, though the facade is no real module."""
    result = await run(sb, "import json\nimport collections.abc\nreturn [json.__name__, collections.abc.__name__]")
    assert (result.error, result.value) == (None, ["json", "collections.abc"])


REFUSAL_MESSAGES = {
    "return {}.__len__()": "call len(x) instead",
    "return [].__iter__()": "call iter(x) instead",
    "class A:\n    pass\nreturn A().__dict__": (
        "use `vars(x)` for a copy of an object's attributes and `setattr(x, name, value)` to set one"
    ),
    "return int.__mro__": "use `isinstance(x, C)` or `issubclass(C, B)`",
    "return int.__subclasses__()": "use `isinstance(x, C)` or `issubclass(C, B)`",
    "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__": (
        "use `type(e).__name__` and `str(e)` to describe an error"
    ),
    "return len.__self__": "only `__name__`, `__qualname__`, `__doc__`, `__module__` and `__class__` can be read",
}


@pytest.mark.parametrize("isolation", ["inline"])
@pytest.mark.parametrize("code", list(REFUSAL_MESSAGES), ids=range(len(REFUSAL_MESSAGES)))
async def test_a_refused_dunder_says_what_to_write_instead(sb: Sandbox, code: str) -> None:
    """The refusal names the dunder, says it is private, and gives the everyday spelling that works."""
    result = await run(sb, code)
    assert result.error is not None
    attribute = code.split(".__")[-1].split("_")[0]
    line = code.count("\n") + 1
    assert result.error.message.removeprefix("ForbiddenError: ") == (  # refused at run time, or at compile time
        f"`.__{attribute}__` is not allowed: dunder attributes are private in the sandbox; "
        f"{REFUSAL_MESSAGES[code]} (line {line})"
    )


@pytest.mark.parametrize("isolation", ["inline"])
async def test_setting_a_readable_dunder_says_it_can_only_be_read(sb: Sandbox) -> None:
    """Assigning `__name__` is refused at compile time with a message that says why."""
    result = await run(sb, "def f():\n    pass\nf.__name__ = 'g'")
    assert result.error is not None
    assert result.error.message == (
        "`.__name__` can be read but not set or deleted in the sandbox; keep your own attribute (line 3)"
    )
