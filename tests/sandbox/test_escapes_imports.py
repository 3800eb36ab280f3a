"""Red team, imports and the module graph: facades only, and stdlib code that writes code.

Only allow-listed modules import, as facades holding chosen names, so nothing behind them (`re.enum.sys`,
`json.codecs.builtins`, `random._os`) is reachable; private names cannot be imported; stdlib helpers that would
evaluate strings (`typing.get_type_hints`, `ForwardRef`) are absent, and those that write classes or source
(`@dataclass`, `Enum(...)`, `functools.update_wrapper`, `re`) take only plain, checked names.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest
from redteam_kit import (
    BUDGET,
    WALL,
    Case,
    HostKit,
    Value,
    assert_outcome,
    case,
    guard,
    limit,
    names_are_unique,
    policy,
    raised,
    run,
    runs,
    works_in_cpython,
)

if TYPE_CHECKING:
    from sandbox import Sandbox

_LYING_PATTERN = """
import re, string
S = type("S", (str,), {"__getitem__": lambda self, i: "X" if type(i) is int else str.__getitem__(self, i)})
"""
"""A `str` subclass whose characters, read one by one, lie: `re`'s parser would read the lie (and never end)."""

ZERO_DIVISION = (
    'Traceback (most recent call last):\n  File "<code>", line 3, in <module>\nZeroDivisionError: division by zero\n'
)
"""`traceback.format_exc()` of `1 / 0` on line 3: the code's own frame, no host path."""


def refused_import(module: str, *, control: bool = True) -> Case:
    """`import module` is refused by the import guard; with `control`, it works in plain CPython."""
    return case(
        f"import_{module}",
        f"import {module}\nreturn 'PW' + 'NED'",
        guard(f"`import {module}` is not allowed"),
        control=control,
    )


CASES = [
    case(
        "import_os",
        """
        import os
        return 'PW' + 'NED'
        """,
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "import_sys",
        """
        import sys
        return sys.modules["os"].getcwd() + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'sys' has no attribute 'modules' in the sandbox"),
        control=True,
    ),
    *(
        refused_import(module)
        for module in "subprocess socket ctypes importlib pickle marshal gc inspect threading".split()
    ),
    case(
        "import__thread",
        """
        import _thread
        return 'PW' + 'NED'
        """,
        policy("`_thread` cannot be imported"),
        control=True,
    ),
    case(
        "import_io",
        """
        import io
        return 'PW' + 'NED'
        """,
        guard("`import io` is not allowed"),
        control=True,
    ),
    case(
        "import_builtins",
        """
        import builtins
        return 'PW' + 'NED'
        """,
        guard("`import builtins` is not allowed"),
        control=True,
    ),
    *(
        case(
            f"import_asyncio_{name}",
            f"""
            import asyncio.{name}
            return 'PW' + 'NED'
            """,
            guard(f"`import asyncio.{name}` is not allowed"),
            control=True,
        )
        for name in ("subprocess", "base_events", "events")
    ),
    *(refused_import(module) for module in "types pathlib shutil tempfile multiprocessing signal codecs".split()),
    *(refused_import(module) for module in "posix pty fcntl resource mmap select ssl".split()),
    case(
        "import_urllib_request",
        """
        import urllib.request
        return 'PW' + 'NED'
        """,
        guard("`import urllib.request` is not allowed"),
        control=True,
    ),
    case(
        "import_http_client",
        """
        import http.client
        return 'PW' + 'NED'
        """,
        guard("`import http.client` is not allowed"),
        control=True,
    ),
    case(
        "import_runpy",
        """
        import runpy
        return 'PW' + 'NED'
        """,
        guard("`import runpy` is not allowed"),
        control=True,
    ),
    case(
        "import_code",
        """
        import code
        return 'PW' + 'NED'
        """,
        guard("`import code` is not allowed"),
        control=True,
    ),
    case(
        "import_traceback",
        """
        import traceback
        return str(traceback.extract_stack()) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'traceback' has no attribute 'extract_stack' in the sandbox"),
        control=True,
    ),
    *(refused_import(module) for module in "weakref copyreg sysconfig site platform".split()),
    *(refused_import(module, control=False) for module in "sandbox RestrictedPython anyio codemode".split()),
    case(
        "import_json_tool",
        """
        import json.tool
        return 'PW' + 'NED'
        """,
        guard("`import json.tool` is not allowed"),
    ),
    case(
        "from_os_import_system",
        """
        from os import system
        return system('true')
        """,
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "from_subprocess_import_run",
        """
        from subprocess import run
        return run(['true']).returncode
        """,
        guard("`import subprocess` is not allowed"),
        control=True,
    ),
    case(
        "from_asyncio_import_subprocess",
        """
        from asyncio import subprocess
        p = await subprocess.create_subprocess_exec('true')
        return str(await p.wait()) + 'PW' + 'NED'
        """,
        raised("ImportError", "cannot import name 'subprocess' from '<unknown module name>' (unknown location)"),
        control=True,
    ),
    case(
        "from_asyncio_import_events",
        """
        from asyncio import events
        return events.sys.modules['os'].getcwd() + 'PW' + 'NED'
        """,
        raised("ImportError", "cannot import name 'events' from '<unknown module name>' (unknown location)"),
        control=True,
    ),
    *(
        case(
            f"from_asyncio_import_{name}",
            f"""
            from asyncio import {name}
            return str({name}) + 'PW' + 'NED'
            """,
            raised("ImportError", f"cannot import name '{name}' from '<unknown module name>' (unknown location)"),
            control=True,
        )
        for name in (
            "tasks",
            "base_events",
            "futures",
            "streams",
            "unix_events",
            "coroutines",
            "runners",
            "selector_events",
            "threads",
        )
    ),
    case(
        "time_sleep_blocks_the_loop",
        """
        import time
        time.sleep(100)
        """,
        raised("RuntimeError", "`time.sleep()` would block every task"),
        limits=WALL,
    ),
    case(
        "from_json_import_codecs",
        """
        from json import codecs
        return str(codecs.builtins.open)
        """,
        raised("ImportError", "cannot import name 'codecs' from '<unknown module name>' (unknown location)"),
        control=True,
    ),
    case(
        "from_re_import_enum",
        """
        from re import enum
        return str(enum.sys.modules['os'].getcwd())
        """,
        raised("ImportError", "cannot import name 'enum' from '<unknown module name>' (unknown location)"),
        control=True,
    ),
    case(
        "from_collections_import_private_sys",
        """
        from collections import _sys
        return _sys.modules['os'].getcwd()
        """,
        policy("`_sys` cannot be imported"),
        control=True,
    ),
    case(
        "re_enum_sys",
        """
        import re
        return re.enum.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 're' has no attribute 'enum' in the sandbox"),
        control=True,
    ),
    case(
        "json_codecs_builtins",
        """
        import json
        return str(json.codecs.builtins.open) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'json' has no attribute 'codecs' in the sandbox"),
        control=True,
    ),
    case(
        "json_decoder_re_enum_sys",
        """
        import json
        return json.decoder.re.enum.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'json' has no attribute 'decoder' in the sandbox"),
        control=True,
    ),
    case(
        "collections_abc_module_behind_collections",
        """
        import collections
        return collections._collections_abc.sys.modules['os'].getcwd()
        """,
        guard("`._collections_abc` is not allowed"),
        control=True,
    ),
    case(
        "collections_private_sys",
        """
        import collections
        return collections._sys.modules['os'].getcwd()
        """,
        guard("`._sys` is not allowed"),
        control=True,
    ),
    case(
        "random_private_os",
        """
        import random
        return random._os.getcwd()
        """,
        guard("`._os` is not allowed"),
        control=True,
    ),
    case(
        "string_private_re",
        """
        import string
        return string._re.enum.sys.modules['os'].getcwd()
        """,
        guard("`._re` is not allowed"),
        control=True,
    ),
    case(
        "textwrap_re",
        """
        import textwrap
        return textwrap.re.enum.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'textwrap' has no attribute 're' in the sandbox"),
        control=True,
    ),
    case(
        "statistics_sys",
        """
        import statistics
        return statistics.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'statistics' has no attribute 'sys' in the sandbox"),
        control=True,
    ),
    case(
        "fractions_sys",
        """
        import fractions
        return fractions.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'fractions' has no attribute 'sys' in the sandbox"),
        control=True,
    ),
    case(
        "datetime_sys",
        """
        import datetime
        return datetime.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'datetime' has no attribute 'sys' in the sandbox"),
    ),
    case(
        "uuid_os",
        """
        import uuid
        return uuid.os.getcwd()
        """,
        raised("AttributeError", "module 'uuid' has no attribute 'os' in the sandbox"),
        control=True,
    ),
    case(
        "typing_sys",
        """
        import typing
        return typing.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'typing' has no attribute 'sys' in the sandbox"),
        control=True,
    ),
    case(
        "dataclasses_inspect",
        """
        import dataclasses
        return str(dataclasses.inspect.currentframe()) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'dataclasses' has no attribute 'inspect' in the sandbox"),
        control=True,
    ),
    case(
        "dataclasses_sys",
        """
        import dataclasses
        return dataclasses.sys.modules['os'].getcwd()
        """,
        raised("AttributeError", "module 'dataclasses' has no attribute 'sys' in the sandbox"),
        control=True,
    ),
    case(
        "functools_private_thread",
        """
        import functools
        return str(functools.RLock) + str(functools.GenericAlias) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'functools' has no attribute 'RLock' in the sandbox"),
    ),
    case(
        "asyncio_subprocess_attribute",
        """
        import asyncio
        return str(asyncio.subprocess.PIPE) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'subprocess' in the sandbox"),
        control=True,
    ),
    case(
        "asyncio_create_subprocess_shell",
        """
        import asyncio
        p = await asyncio.create_subprocess_shell('true')
        return await p.wait()
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'create_subprocess_shell' in the sandbox"),
        control=True,
    ),
    case(
        "asyncio_base_events_os",
        """
        import asyncio
        return asyncio.base_events.os.getcwd()
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'base_events' in the sandbox"),
        control=True,
    ),
    case(
        "typing_get_type_hints_evaluates_strings",
        """
        import typing
        def f(x: "type(().__class__.__name__ + 'PW' + 'NED', (), {})"):
            pass
        return str(typing.get_type_hints(f)["x"])
        """,
        raised("AttributeError", "module 'typing' has no attribute 'get_type_hints' in the sandbox"),
        control=True,
    ),
    case(
        "singledispatch_register_evaluates_annotations",
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
        raised("AttributeError", "module 'functools' has no attribute 'singledispatch' in the sandbox"),
    ),
    case(
        "forward_ref_private_evaluate",
        """
        import typing
        ref = typing.ForwardRef("type(().__class__.__name__ + 'PW' + 'NED', (), {})")
        return str(ref._evaluate({}, {}, frozenset()))
        """,
        raised("AttributeError", "module 'typing' has no attribute 'ForwardRef' in the sandbox"),
        control=True,
    ),
    case(
        "import_contextlib",
        """
        import contextlib
        return 'PW' + 'NED'
        """,
        guard("`import contextlib` is not allowed"),
    ),
    case(
        "import_abc",
        """
        import abc
        X = abc.ABCMeta("X", (), {"__del__": lambda self: print('PW' + 'NED')})
        """,
        raised("AttributeError", "module 'abc' has no attribute 'ABCMeta' in the sandbox"),
    ),
    case(
        "import_contextvars",
        """
        import contextvars
        return 'PW' + 'NED'
        """,
        guard("`import contextvars` is not allowed"),
    ),
    case(
        "import_logging",
        """
        import logging
        return str(logging.root.handlers) + 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'logging' has no attribute 'root' in the sandbox"),
    ),
    *(refused_import(module, control=False) for module in "sqlite3 glob zipfile".split()),
    case(
        "import_concurrent_futures",
        """
        import concurrent.futures
        return 'PW' + 'NED'
        """,
        guard("`import concurrent.futures` is not allowed"),
    ),
    case(
        "import_unittest_mock",
        """
        import unittest.mock
        return 'PW' + 'NED'
        """,
        guard("`import unittest.mock` is not allowed"),
    ),
    case(
        "import_zoneinfo",
        """
        import zoneinfo
        return 'PW' + 'NED'
        """,
        guard("`import zoneinfo` is not allowed"),
    ),
    case(
        "import_xml_etree_ElementTree",
        """
        import xml.etree.ElementTree
        return 'PW' + 'NED'
        """,
        guard("`import xml.etree.ElementTree` is not allowed"),
    ),
    case(
        "starmap_setattr_on_a_module",
        """
        import itertools, json
        list(itertools.starmap(setattr, [(json, "dumps", len)]))
        return "PW" + "NED"
        """,
        guard("cannot set `.dumps` on module 'json': only objects the code created can be changed"),
    ),
    case(
        "dataclass_asdict_of_a_host_function",
        """
        import dataclasses, json
        return dataclasses.asdict(json.dumps)
        """,
        raised("TypeError", "asdict() should be called on dataclass instances"),
    ),
    case(
        "namedtuple_field_named_like_a_dunder",
        """
        import collections
        P = collections.namedtuple("P", ["__class__"])
        return "PW" + "NED"
        """,
        raised("ValueError", "Field names cannot start with an underscore: '__class__'"),
    ),
    case(
        "dataclass_field_named_like_a_dunder",
        """
        import dataclasses
        @dataclasses.dataclass
        class P:
            __globals__: int = 0
        return 'PW' + 'NED'
        """,
        policy("`__globals__` is a reserved name"),
    ),
    case(
        "typing_named_tuple_string_annotation_is_not_evaluated",
        """
        import typing
        P = typing.NamedTuple("P", [("a", "print('PW' + 'NED')")])
        return P(1).a
        """,
        Value(1),
    ),
    case(
        "typing_typed_dict_string_annotation_is_not_evaluated",
        """
        import typing
        T = typing.TypedDict("T", {"a": "print('PW' + 'NED')"})
        return T(a=1)
        """,
        Value({"a": 1}),
    ),
    case(
        "typing_type_var_bound_is_not_evaluated",
        """
        import typing
        T = typing.TypeVar("T", bound="print('PW' + 'NED')")
        return str(T)
        """,
        Value("~T"),
    ),
    case(
        "typing_forward_reference_is_not_evaluated",
        """
        import typing
        return str(typing.List["print('PW' + 'NED')"])[:11]
        """,
        Value("typing.List"),
    ),
    case(
        "super_init_reinitialises_a_shared_uuid",
        """
        import uuid
        super(uuid.UUID, uuid.NAMESPACE_DNS).__init__(int=0)
        return str(uuid.NAMESPACE_DNS)
        """,
        guard("`super(...)` works in the sandbox only inside the code's own classes"),
    ),
    case(
        "super_setitem_on_a_module_facade",
        """
        import json
        super(type(json), json).__setitem__("dumps", len)
        return "PW" + "NED"
        """,
        guard("`super(...)` works in the sandbox only inside the code's own classes"),
    ),
    case(
        "item_write_on_a_module_facade",
        """
        import json
        json["dumps"] = len
        return "PW" + "NED"
        """,
        raised("TypeError", "'Module' object does not support item assignment"),
    ),
    case(
        "cached_property_lock_is_inert",
        """
        import functools
        cp = functools.cached_property(len)
        cp.lock.acquire()
        cp.lock.release()
        return 1
        """,
        Value(1),
    ),
    case(
        "update_wrapper_updates_an_own_mapping_with_module_globals",
        """
        import functools, statistics
        class Sink:
            def __init__(self):
                self.box = {}
            def __getattr__(self, name):
                return self.box
        s = Sink()
        functools.update_wrapper(s, statistics.mean, assigned=(), updated=("__globals__",))
        return s.box["sys"].modules["os"].environ.get("SANDBOX_TEST_SECRET", "PW" + "NED")
        """,
        guard("`functools.update_wrapper`/`wraps` work only on the code's own functions, with no options"),
    ),
    case(
        "update_wrapper_replaces_the_run_globals",
        """
        import functools, statistics
        def f():
            pass
        functools.update_wrapper(f, statistics.mean, assigned=(), updated=("__globals__",))
        return sys.modules["os"].environ.get("SANDBOX_TEST_SECRET", "PW" + "NED")
        """,
        guard("`functools.update_wrapper`/`wraps` work only on the code's own functions, with no options"),
    ),
    case(
        "dataclass_field_name_is_code",
        """
        import dataclasses
        name = "a,{}[__import__('os').environ.get('SANDBOX_TEST_SECRET', 'PW' + 'NED')],self.a"
        X = type("X", (), {"__annotations__": {name: int}, "__module__": "nowhere"})
        Y = dataclasses.dataclass(init=False, repr=False, eq=True)(X)
        y = Y()
        y.a = 1
        try:
            y == y
        except KeyError as e:
            return e.args[0]
        """,
        guard("a dataclass field name must be a plain identifier not starting with `__`, not"),
    ),
    case(
        "enum_functional_api_installs_a_forbidden_dunder",
        """
        import enum
        E = enum.Enum("E", [("__match_args__", ("name",)), ("A", 1)])
        match E.A:
            case E(name):
                return name + "PW" + "NED"
        """,
        guard("an Enum member name must not start with `_` in the sandbox"),
    ),
    case(
        "dataclass_field_name_is_a_str_subclass_with_its_own_format",
        """
        import dataclasses

        class S(str):
            def isidentifier(self):
                return True
            def startswith(self, prefix, *args):
                return False
            def __format__(self, spec):
                return "a," + '{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]'
            def __repr__(self):
                return "'a'"

        X = type("X", (), {"__annotations__": {S("a"): int}, "__module__": "nowhere"})

        Y = dataclasses.dataclass(init=False, repr=False, eq=True)(X)
        y = Y()
        y.a = 1
        try:
            return y == y
        except KeyError as e:
            return e.args[0]
        """,
        Value(True),
    ),
    case(
        "dataclass_annotations_whose_items_disagree_with_their_keys",
        """
        import dataclasses
        class D(dict):
            def __iter__(self):
                return iter(["a"])
            def keys(self):
                return ["a"]
            def items(self):
                return [("a," + '{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]', int)]
        X = type("X", (), {"__annotations__": D(a=int), "__module__": "nowhere"})
        Y = dataclasses.dataclass(init=False, repr=False, eq=True)(X)
        y = Y()
        y.a = 1
        try:
            return y == y
        except KeyError as e:
            return e.args[0]
        """,
        Value(True),
    ),
    case(
        "dataclass_field_name_with_code_in_a_plain_str",
        """
        import dataclasses
        code = '{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]'
        X = type("X", (), {"__annotations__": {"a," + code: int}})
        dataclasses.dataclass(X)
        return 1
        """,
        guard(
            "a dataclass field name must be a plain identifier not starting with `__`, not 'a,{}[str([c.__name__ for c"
        ),
    ),
    case(
        "dataclass_field_named_like_a_dunder_through_type",
        """
        import dataclasses
        K = type("K", (), {"__annotations__": {"__match_args__": tuple}})
        dataclasses.dataclass(K)
        return 1
        """,
        guard("a dataclass field name must be a plain identifier not starting with `__`, not '__match_args__'"),
    ),
    case(
        "dataclass_field_named_like_a_frame_attribute",
        """
        import dataclasses
        K = type("K", (), {"__annotations__": {"gi_frame": int}})
        dataclasses.dataclass(K)
        return 1
        """,
        guard("a dataclass field name must be a plain identifier not starting with `__`, not 'gi_frame'"),
    ),
    case(
        "dataclass_options_must_be_known",
        """
        import dataclasses
        @dataclasses.dataclass(bogus=True)
        class P:
            x: int
        """,
        raised("TypeError", "`@dataclass` takes no option 'bogus'"),
    ),
    case(
        "dataclass_init_unbound_on_a_stdlib_class_writes_its_attribute",
        """
        import dataclasses, textwrap
        @dataclasses.dataclass
        class W:
            wordsep_re: object = None
        W.__init__(textwrap.TextWrapper, "changed")
        return 1
        """,
        guard("`W.__init__(obj, ...)` works only on an instance of the code's own class"),
    ),
    case(
        "frozen_dataclass_init_unbound_on_a_shared_uuid",
        """
        import dataclasses, uuid
        @dataclasses.dataclass(frozen=True)
        class U:
            int: int
        U.__init__(uuid.NAMESPACE_DNS, 5)
        return str(uuid.NAMESPACE_DNS)
        """,
        guard("`U.__init__(obj, ...)` works only on an instance of the code's own class"),
    ),
    case(
        "dataclass_eq_unbound_on_host_objects",
        """
        import dataclasses, textwrap
        @dataclasses.dataclass
        class W:
            width: int = 0
        return W.__eq__(textwrap.TextWrapper(), textwrap.TextWrapper())
        """,
        guard("`W.__eq__(obj, ...)` works only on an instance of the code's own class"),
    ),
    case(
        "dataclass_methods_still_work_on_instances_and_subclasses",
        """
        import dataclasses
        @dataclasses.dataclass(order=True, frozen=True)
        class P:
            x: int
            y: int = 0
            _hidden: int = 0
        class Q(P):
            pass
        p, q = P(1, 2), Q(1, 2)
        try:
            p.x = 5
        except dataclasses.FrozenInstanceError:
            frozen = True
        return [repr(p), p == P(1, 2), p < P(2), hash(p) == hash(P(1, 2)), frozen, repr(q)]
        """,
        Value(["P(x=1, y=2, _hidden=0)", True, True, True, True, "Q(x=1, y=2, _hidden=0)"]),
    ),
    case(
        "enum_member_name_is_a_str_subclass_whose_startswith_lies",
        """
        import enum
        class S(str):
            def isidentifier(self):
                return True
            def startswith(self, prefix, *args):
                return False
            def __format__(self, spec):
                return "a," + '{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]'
            def __repr__(self):
                return "'a'"
        def hook(*args):
            return "PW" + "NED"
        E = enum.Enum("E", [(S("__repr__"), hook), ("A", 1)])
        return repr(E.A)
        """,
        guard("an Enum member name must not start with `_` in the sandbox"),
    ),
    case(
        "enum_names_as_a_mapping_whose_items_disagree_with_its_keys",
        """
        import enum
        class D(dict):
            def keys(self):
                return ["A"]
            def __iter__(self):
                return iter(["A"])
            def items(self):
                return [("__repr__", lambda self: "PW" + "NED")]
        E = enum.Enum("E", D(A=1))
        return repr(E.A) if hasattr(E, "A") else repr(list(E))
        """,
        Value("<E.A: 1>"),
    ),
    case(
        "enum_names_in_a_string_of_a_lying_subclass",
        """
        import enum
        class S(str):
            def isidentifier(self):
                return True
            def startswith(self, prefix, *args):
                return False
            def __format__(self, spec):
                return "a," + '{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]'
            def __repr__(self):
                return "'a'"
        E = enum.Enum("E", S("A B"))
        return [m.name for m in E]
        """,
        Value(["A", "B"]),
    ),
    case(
        "three_argument_type_key_is_a_str_subclass_whose_startswith_lies",
        """
        class S(str):
            def isidentifier(self):
                return True
            def startswith(self, prefix, *args):
                return False
            def __format__(self, spec):
                return "a," + '{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]'
            def __repr__(self):
                return "'a'"
        X = type("X", (), {S("__init_subclass__"): classmethod(lambda cls: print("hook"))})
        class Y(X):
            pass
        return 1
        """,
        guard("a class cannot define `__init_subclass__` in the sandbox"),
    ),
    case(
        "string_formatter_missing",
        """
        import string
        string.Formatter
        """,
        raised("AttributeError", "module 'string' has no attribute 'Formatter' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "make_dataclass_missing",
        """
        import dataclasses
        dataclasses.make_dataclass
        """,
        raised("AttributeError", "module 'dataclasses' has no attribute 'make_dataclass' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "import_os_as_the_last_statement",
        "import os",
        guard("`import os` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "import_types_as_the_last_statement",
        "import types",
        guard("`import types` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "json_decoder_submodule",
        """
        import json
        json.decoder
        """,
        raised("AttributeError", "module 'json' has no attribute 'decoder' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "re_private_compile",
        """
        import re
        re._compile
        """,
        guard("`._compile` is not allowed"),
        limits=BUDGET,
    ),
    case(
        "typing_get_type_hints_missing",
        """
        import typing
        typing.get_type_hints
        """,
        raised("AttributeError", "module 'typing' has no attribute 'get_type_hints' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "typing_forward_ref_missing",
        """
        import typing
        typing.ForwardRef
        """,
        raised("AttributeError", "module 'typing' has no attribute 'ForwardRef' in the sandbox"),
        limits=BUDGET,
    ),
    case(
        "time_sleep",
        """
        import time
        time.sleep(100)
        """,
        raised("RuntimeError", "`time.sleep()` would block every task"),
        limits=BUDGET,
    ),
    # -- the facades models reach for (`sys`, `traceback`, `logging`, `abc`, `json.JSONEncoder`)
    case(
        "sys_getframe_is_private",
        "import sys\nreturn str(sys._getframe(0).f_globals)",
        policy("`.f_globals` is not allowed"),
    ),
    case(
        "sys_settrace_is_absent",
        "import sys\nsys.settrace(print)",
        raised("AttributeError", "module 'sys' has no attribute 'settrace' in the sandbox"),
    ),
    case(
        "sys_setrecursionlimit_is_absent",
        "import sys\nsys.setrecursionlimit(10**6)",
        raised("AttributeError", "module 'sys' has no attribute 'setrecursionlimit' in the sandbox"),
    ),
    case(
        "sys_path_is_absent",
        "import sys\nreturn sys.path",
        raised("AttributeError", "module 'sys' has no attribute 'path' in the sandbox"),
    ),
    case(
        "sys_stdout_buffer_is_absent",
        "import sys\nsys.stdout.buffer.write(b'x')",
        raised("AttributeError", "'Stream' object has no attribute 'buffer'"),
    ),
    case(
        "sys_stdout_private_writer",
        "import sys\nreturn str(getattr(sys.stdout, '_wri' + 'te'))",
        guard("`._write` is not allowed"),
    ),
    case(
        "sys_stdout_write_replaced",
        "import sys\nsys.stdout.write = print",
        guard("cannot set `.write` on a 'Stream' object: only objects the code created can be changed"),
    ),
    case(
        "sys_stdout_class_rebuilt_around_a_host_writer",
        """
        import sys
        S = type(sys.stdout)
        S(print).write('x')
        return 1
        """,
        Value(1, stdout="x\n"),
    ),
    case(
        "sys_stdout_write_of_bytes",
        "import sys\nsys.stdout.write(b'raw')",
        raised("TypeError", "write() argument must be str, not bytes"),
    ),
    case(
        "sys_stdout_write_of_a_lying_str",
        """
        import sys
        class S(str):
            def __str__(self):
                return 'lie'
        sys.stdout.write(S('truth'))
        return 1
        """,
        Value(1, stdout="truth"),
    ),
    case(
        "sys_stdout_write_floods_the_output",
        """
        import sys
        while True:
            sys.stdout.write('#' * 1000)
        """,
        limit("output_limit", "the code printed more than 10,000 characters"),
    ),
    case(
        "sys_exit_ends_only_the_run",
        "import sys\nsys.exit(3)",
        raised("SystemExit", "the code exited with status 3"),
    ),
    case(
        "sys_exit_caught_and_the_run_goes_on",
        """
        import sys
        try:
            sys.exit(1)
        except BaseException as e:
            return [type(e).__name__, e.code]
        """,
        Value(["SystemExit", 1]),
    ),
    case(
        "traceback_shows_only_the_codes_frames",
        """
        import traceback
        try:
            getattr((), '__redu' + 'ce_ex__')
        except Exception:
            return traceback.format_exc()
        """,
        Value(
            'Traceback (most recent call last):\n  File "<code>", line 3, in <module>\n'
            "ForbiddenError: `.__reduce_ex__` is not allowed: dunder attributes are private in the sandbox; only "
            "`__name__`, `__qualname__`, `__doc__`, `__module__` and `__class__` can be read\n"
        ),
    ),
    case(
        "traceback_of_a_host_error_shows_no_host_frame",
        """
        import traceback
        try:
            await boom()
        except Exception:
            return traceback.format_exc()
        """,
        Value(
            'Traceback (most recent call last):\n  File "<code>", line 3, in <module>\nValueError: the host failed\n'
        ),
    ),
    case(
        "traceback_walk_tb_is_absent",
        """
        import traceback
        try:
            1 / 0
        except Exception as e:
            return str(traceback.walk_tb(e))
        """,
        raised("AttributeError", "module 'traceback' has no attribute 'walk_tb' in the sandbox"),
    ),
    case(
        "traceback_stack_is_absent",
        "import traceback\nreturn str(traceback.extract_stack())",
        raised("AttributeError", "module 'traceback' has no attribute 'extract_stack' in the sandbox"),
    ),
    case(
        "traceback_print_exc_file_is_ignored",
        """
        import traceback
        try:
            1 / 0
        except Exception:
            traceback.print_exc(file=print)
        return 1
        """,
        Value(
            1,
            stdout=ZERO_DIVISION,
        ),
    ),
    case(
        "traceback_format_exception_of_a_non_exception",
        "import traceback\nreturn traceback.format_exception(print)",
        raised("TypeError", "format_exception() takes an exception, not 'method'"),
    ),
    case(
        "traceback_exception_str_fails",
        """
        import traceback
        class E(Exception):
            def __str__(self):
                raise ValueError('no')
        try:
            raise E()
        except E:
            return traceback.format_exc().splitlines()[-1]
        """,
        Value("E: <exception str() failed>"),
    ),
    case(
        "logging_writes_to_the_run_output",
        """
        import logging
        logging.warning('careful: %s', 'x')
        logging.getLogger('app').error('failed %d', 2)
        logging.info('hidden')
        return 1
        """,
        Value(1, stdout="WARNING:root:careful: x\nERROR:app:failed 2\n"),
    ),
    case(
        "logging_message_width_is_size_checked",
        "import logging\nlogging.warning('%2000000d', 1)",
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "logging_format_width_is_size_checked",
        """
        import logging
        logging.basicConfig(format='%(message)2000000s')
        logging.warning('x')
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "logging_logger_private_config",
        "import logging\nreturn str(logging.getLogger()._config)",
        guard("`._config` is not allowed"),
    ),
    case(
        "logging_logger_level_attribute_is_read_only",
        "import logging\nlogging.getLogger('a').level = 0",
        guard("cannot set `.level` on a 'Logger' object: only objects the code created can be changed"),
    ),
    case(
        "logging_handlers_are_absent",
        "import logging\nreturn logging.getLogger().handlers",
        raised("AttributeError", "'Logger' object has no attribute 'handlers'"),
    ),
    case(
        "logging_root_is_absent",
        "import logging\nreturn str(logging.root)",
        raised("AttributeError", "module 'logging' has no attribute 'root' in the sandbox"),
    ),
    case(
        "logging_handler_classes_are_absent",
        "import logging\nlogging.getLogger().addHandler(logging.StreamHandler())",
        raised("AttributeError", "'Logger' object has no attribute 'addHandler'"),
    ),
    case(
        "logging_floods_the_output",
        """
        import logging
        while True:
            logging.error('#' * 1000)
        """,
        limit("output_limit", "the code printed more than 10,000 characters"),
    ),
    case(
        "logging_exception_shows_the_codes_frames",
        """
        import logging
        try:
            1 / 0
        except ZeroDivisionError:
            logging.exception('failed')
        return 1
        """,
        Value(
            1,
            stdout="ERROR:root:failed\n" + ZERO_DIVISION,
        ),
    ),
    case(
        "abc_register_on_the_shared_abc",
        "import abc\nabc.ABC.register(int)",
        guard("`.register()` is not allowed"),
    ),
    case(
        "abc_abstractmethod_on_a_stdlib_function",
        """
        import abc, json
        f = abc.abstractmethod(json.dumps)
        return json.dumps([1])
        """,
        Value("[1]"),
    ),
    case(
        "json_encoder_iterencode_of_own_subclass",
        """
        import json
        class E(json.JSONEncoder):
            def default(self, o):
                return 'x'
        return ''.join(E(indent=None).iterencode({'a': {1}}))
        """,
        Value('{"a": "x"}'),
    ),
    case(
        "json_encoder_private_attribute",
        "import json\nreturn str(json.JSONEncoder()._one_shot)",
        guard("`._one_shot` is not allowed"),
    ),
    case(
        "json_encoder_class_attribute_write",
        "import json\njson.JSONEncoder.item_separator = '|'",
        guard("cannot set `.item_separator` on a 'type' object: only objects the code created can be changed"),
    ),
    case(
        "json_encoder_default_sees_only_the_value",
        """
        import json
        class E(json.JSONEncoder):
            def default(self, o):
                return str(type(o).__name__)
        return json.dumps({'a': echo}, cls=E)
        """,
        Value('{"a": "function"}'),
    ),
]
CASES += [
    case(f"re_{name}_reads_a_plain_template", (_LYING_PATTERN, f"return {code}"), Value(value))
    for name, code, value in [
        ("sub", 're.sub("a", S("b"), "a")', "b"),
        ("subn", 're.subn("a", S("b"), "a")', ["b", 1]),
        ("pattern_sub", 're.compile("a").sub(S("b"), "a")', "b"),
        ("match_expand", 're.match("(a)", "a").expand(S("<\\\\1>"))', "<a>"),
        ("compile", 'type(re.compile(S("zq")).pattern) is str', True),
        ("search_with_positional_flags", 're.search(S("A"), "xa", re.I).group()', "a"),
        ("split", 're.split(S(","), "a,b", 1)', ["a", "b"]),
        ("escape", 're.escape(S("a.b"))', "a\\.b"),
    ]
] + [
    case(
        "string_template_subclass_with_a_lying_delimiter",
        (
            _LYING_PATTERN,
            """
            class T(string.Template):
                delimiter = S("%")
            return T("%who likes %what").substitute(who="tim", what="pie")
            """,
        ),
        Value("tim likes pie"),
    ),
]


test_imports_reach_only_facades = runs(
    CASES, "Each import or module attribute gives a facade member or its exact refusal."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)


class _Recorder(logging.Handler):
    """A host handler that keeps every record it is given."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("isolation", ["inline"])
async def test_logging_never_reaches_the_hosts_handlers(sb: Sandbox, host_secret: str) -> None:
    """The code's log records go to its own printed output; the host's loggers and handlers see none of them."""
    recorder, root = _Recorder(), logging.getLogger()
    level = root.level
    root.addHandler(recorder)
    root.setLevel(logging.DEBUG)
    try:
        code = (
            "import logging\nlogging.basicConfig(level=logging.DEBUG)\nlogging.getLogger('sandbox').debug('one')\n"
            "logging.error('two')\nreturn 1"
        )
        result = await run(sb, code, functions=HostKit(host_secret).functions())
    finally:
        root.removeHandler(recorder)
        root.setLevel(level)
    assert_outcome(result, Value(1, stdout="DEBUG:sandbox:one\nERROR:root:two\n"))
    assert recorder.records == []
    assert root.level == level
