"""Red team, second round: escape and abuse techniques that `test_escapes.py` does not cover yet.

Same contract as `test_escapes.py` (classes A-G: introspection, format strings, host objects, modules, control
flow, resources, the OS): every case fails with one of its acceptable error kinds, or succeeds harmlessly (`OK`),
leaks nothing (no host secret, no `PWNED` marker, which payloads build at run time as `"PW" + "NED"`), hands host
functions only plain JSON data, keeps its error text short, and leaves the sandbox working.

`KNOWN` and the tests after it are techniques the review found getting through. Those still open are marked
`xfail(strict=True)` with the effect observed, so a fix shows up as an XPASS; fixed ones are listed in `FIXED`
(or lose their mark) and must then be stopped like any other case. Techniques that
damage the process they run in (a host module changed for good, the host's event loop stopped, a crash) run in a
fresh interpreter, never in the test process.
"""

from __future__ import annotations

import asyncio
import contextvars
import decimal
import json
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from escape_kit import assert_still_works, is_plain_json, run

from sandbox import Limits, Namespace, RunResult, Sandbox

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox import Isolation

MiB = 1024 * 1024
OK = "ok"
"""Pseudo-kind: the run may succeed, as long as nothing leaks and the host survives."""
FORBIDDEN = frozenset({"forbidden"})
BLOCKED = frozenset({"forbidden", "runtime"})
RUNTIME = frozenset({"runtime"})
RESOURCE = frozenset({"memory", "timeout", "runtime", "crashed"})
HARMLESS = frozenset({OK})
HARMLESS_OR_BLOCKED = frozenset({OK, "forbidden", "runtime"})
BOTH = ("inline", "process")
INLINE = ("inline",)
PROCESS = ("process",)
ERROR_KINDS = frozenset(
    {"syntax", "forbidden", "runtime", "timeout", "memory", "output_limit", "call_limit", "result_limit", "crashed"}
)
MAX_ERROR_TEXT = 64 * 1024
"""Characters of error message plus traceback a run may hand back (the default printed-output cap)."""
SECRET_NAME = "SANDBOX_TEST_SECRET"
"""The host environment variable that conftest's `host_secret` fixture fills."""

QUICK = Limits(timeout=3.0, operations=300_000, output=10_000, max_size=1_000_000)
"""Most cases: an operation budget ends loops in milliseconds; `max_size` is 1,000,000."""
WALL = Limits(timeout=1.0, operations=10**12, max_size=10**12)
"""Process-only cases that only the worker's wall clock or address-space limit can stop."""


@dataclass(frozen=True)
class Case:
    """One technique: its code, the error kinds that count as stopping it, and where it runs."""

    name: str
    cls: str
    """A introspection, B format strings, C host objects, D modules, E control flow, F resources, G the OS."""
    code: str
    kinds: frozenset[str]
    limits: Limits = QUICK
    modes: tuple[str, ...] = BOTH
    reason: str = ""
    """For `KNOWN` cases: what the technique currently achieves."""


def case(name: str, cls: str, code: str, kinds: frozenset[str], **kwargs: Any) -> Case:
    """A case with its code dedented."""
    return Case(name, cls, textwrap.dedent(code).strip("\n") + "\n", kinds, **kwargs)


# -- A. introspection: frames, private state and class hooks ---------------------------------------------------

_CLASS_BODY_DUNDERS = (
    "__set_name__ __init_subclass__ __class_getitem__ __getattribute__ __setattr__ __delattr__ __reduce_ex__ "
    "__reduce__ __deepcopy__ __copy__ __await__ __instancecheck__ __subclasshook__ __getstate__ __setstate__ "
    "__dir__ __get__ __set__"
).split()
_TYPE_DUNDERS = (
    "__set_name__ __class_getitem__ __setattr__ __reduce_ex__ __deepcopy__ __await__ __get__ __getstate__"
).split()

A = [
    *[
        case(
            f"class_body_defines_{name.strip('_')}",
            "A",
            f"class X:\n    def {name}(self, *args):\n        return 'PW' + 'NED'\nreturn 'PW' + 'NED'",
            FORBIDDEN,
        )
        for name in _CLASS_BODY_DUNDERS
    ],
    case("class_body_assigns_match_args", "A", "class X:\n    __match_args__ = ('real',)\nreturn 1", FORBIDDEN),
    case("class_body_assigns_slots", "A", "class X:\n    __slots__ = ()\nreturn 1", frozenset({OK, "forbidden"})),
    *[
        case(
            f"three_argument_type_defines_{name.strip('_')}",
            "A",
            f'X = type("X", (), {{"{name}": lambda self, *args: "PW" + "NED"}})\nreturn 1',
            FORBIDDEN,
        )
        for name in _TYPE_DUNDERS
    ],
    case(
        "three_argument_type_annotations_are_not_readable",
        "A",
        """
         B = type("B", (), {"__annotations__": {"x": int}})
         return str(getattr(B, "__annota" + "tions__")) + "PW" + "NED"
         """,
        FORBIDDEN,
    ),
    case(
        "three_argument_type_with_dunder_slot_names",
        "A",
        'B = type("B", (), {"__slots__": ("__globals__", "__code__")})\nb = B()\nreturn 1',
        HARMLESS,
    ),
    case(
        "three_argument_type_with_a_host_module_name",
        "A",
        'B = type("B", (), {"__module__": "os"})\nreturn str(B())[:7]',
        HARMLESS,
    ),
    case(
        "generator_gi_yieldfrom",
        "A",
        """
         def inner():
             yield 1
         def outer():
             yield from inner()
         g = outer()
         next(g)
         return str(getattr(g, "gi_yield" + "from")) + "PW" + "NED"
         """,
        FORBIDDEN,
    ),
    case(
        "suspended_coroutine_cr_await",
        "A",
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
        FORBIDDEN,
    ),
    case(
        "async_generator_ag_await",
        "A",
        """
         async def ag():
             yield 1
         return str(getattr(ag(), "ag_" + "await")) + "PW" + "NED"
         """,
        FORBIDDEN,
    ),
    case(
        "exception_with_traceback_keeps_it_hidden",
        "A",
        """
         try:
             1 / 0
         except ZeroDivisionError as e:
             same = e.with_traceback(None)
         return str(getattr(same, "__trace" + "back__")) + "PW" + "NED"
         """,
        FORBIDDEN,
    ),
    case(
        "exception_group_split_hands_back_only_exceptions",
        "A",
        """
         group = ExceptionGroup("g", [ValueError("a"), TypeError("b")])
         match, rest = group.split(ValueError)
         return [str(match.exceptions[0]), str(rest.exceptions[0]), str(group.derive([KeyError("c")]))]
         """,
        HARMLESS,
    ),
    case(
        "super_of_a_host_proxy_hides_its_private_state",
        "A",
        'return str(getattr(super(type(echo), echo), "_calls")) + "PW" + "NED"',
        FORBIDDEN,
    ),
    case("proxy_class_private_slot", "A", 'return str(type(echo)._calls) + "PW" + "NED"', FORBIDDEN),
    case(
        "function_type_needs_a_code_object",
        "A",
        'F = type(lambda: 0)\nreturn str(F(None, {})) + "PW" + "NED"',
        RUNTIME,
    ),
    case("super_init_of_a_host_proxy_is_object_init", "A", "super(type(echo), echo).__init__()\nreturn 1", HARMLESS),
    case(
        "method_type_rebinds_print_to_a_value",
        "A",
        "M = type(print)\nM(print, 1)\nreturn 1",
        HARMLESS_OR_BLOCKED,
    ),
]

# -- B. format strings ---------------------------------------------------------------------------------------------

B = [
    case(
        "template_braces_do_not_walk_attributes",
        "B",
        'import string\nreturn string.Template("${a.__class__}").safe_substitute(a=1)',
        HARMLESS,
    ),
    case(
        "own_format_method_walks_attributes",
        "B",
        """
         class F:
             def __format__(self, spec):
                 return "{0.__class__.__base__}".format(self)
         return f"{F()}" + "PW" + "NED"
         """,
        BLOCKED,
    ),
    case(
        "format_field_coroutine_await",
        "B",
        """
         async def f():
             return 1
         co = f()
         try:
             return "{0.cr_await}".format(co) + "PW" + "NED"
         finally:
             co.close()
         """,
        BLOCKED,
    ),
    case(
        "format_field_private_loop",
        "B",
        'import asyncio\nreturn "{0._loop}".format(asyncio.Lock()) + "PW" + "NED"',
        BLOCKED,
    ),
    case(
        "format_item_key_shaped_like_a_dunder",
        "B",
        'return "{0[__class__]}".format({"__class__": "plain item"})',
        HARMLESS,
    ),
    case(
        "format_map_with_missing_hook",
        "B",
        "class M(dict):\n    def __missing__(self, key):\n        return key\nreturn '{a}{b}'.format_map(M())",
        HARMLESS,
    ),
    case(
        "strftime_huge_width",
        "B",
        'import datetime\nreturn len(datetime.date(2020, 1, 1).strftime("%999999999Y"))',
        HARMLESS_OR_BLOCKED,
    ),
    case(
        "format_builtin_on_a_str_subclass",
        "B",
        "class S(str):\n    pass\nx = format(S('#'), '>2000000')\nreturn 'PW' + 'NED'",
        RESOURCE,
    ),
    case(
        "fstring_spec_on_a_str_subclass",
        "B",
        "class S(str):\n    pass\nx = f\"{S('#'):>2000000}\"\nreturn 'PW' + 'NED'",
        RESOURCE,
    ),
]

# -- C. host objects, host-function proxies and the asyncio facade --------------------------------------------------

C = [
    case(
        "copy_of_a_host_proxy_still_calls_through_the_sandbox",
        "C",
        "import copy\nreturn await copy.copy(echo)(x=1)",
        HARMLESS,
    ),
    case("pending_call_awaited_twice", "C", "c = echo(x=1)\nreturn [await c, await c]", HARMLESS),
    case(
        "pending_call_gathered_twice", "C", "import asyncio\nc = echo(x=1)\nreturn await asyncio.gather(c, c)", HARMLESS
    ),
    case(
        "lazy_sleep_awaited_twice", "C", "import asyncio\ns = asyncio.sleep(0, 5)\nreturn [await s, await s]", HARMLESS
    ),
    case(
        "task_handle_awaited_twice",
        "C",
        "import asyncio\nt = asyncio.create_task(asyncio.sleep(0, 3))\nreturn [await t, await t]",
        HARMLESS,
    ),
    case(
        "deepcopy_of_a_task_handle",
        "C",
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
        HARMLESS_OR_BLOCKED,
    ),
    case("recursive_list_passed_to_host", "C", "x = []\nx.append(x)\nreturn await echo(x=x)", BLOCKED),
    case("huge_int_passed_to_host", "C", "return await echo(x=10**5000)", BLOCKED),
    case("infinity_passed_to_host", "C", 'return await echo(x=float("inf"))', BLOCKED),
    case("bytes_passed_to_host", "C", 'return await echo(x=b"raw")', HARMLESS),  # UTF-8 text, as pydantic does
    case("own_instance_passed_positionally", "C", "class P:\n    pass\nreturn await echo(P())", BLOCKED),
    case(
        "own_str_subclass_key_passed_to_host",
        "C",
        "class K(str):\n    pass\nreturn await echo(x={K('a'): 1})",
        HARMLESS,
    ),
    case("lone_surrogate_passed_to_host", "C", 'return await echo(x="\\ud800")', HARMLESS),
    case("dunder_keyword_names_passed_to_host", "C", 'return await echo(**{"__class__": 1, "a-b": 2})', HARMLESS),
    case(
        "host_call_cancelled_by_wait_for",
        "C",
        "import asyncio\nawait asyncio.wait_for(echo(x=1), 0)",
        BLOCKED,
    ),
    case("uncalled_proxy_as_a_task", "C", "import asyncio\nasyncio.create_task(echo)", RUNTIME),
    case("namespace_item_shaped_like_a_dunder", "C", 'return str(tools["__class__"]) + "PW" + "NED"', RUNTIME),
    case("namespace_function_attribute_chain", "C", "return await tools.echo.more(x=1)", RUNTIME),
    case(
        "task_handle_add_done_callback",
        "C",
        "import asyncio\nt = asyncio.create_task(asyncio.sleep(0))\nt.add_done_callback(print)\nawait t",
        RUNTIME,
    ),
    case(
        "timeout_context_private_task",
        "C",
        'import asyncio\nasync with asyncio.timeout(5) as t:\n    return str(t._task) + "PW" + "NED"',
        FORBIDDEN,
    ),
    case("queue_private_loop", "C", 'import asyncio\nreturn str(asyncio.Queue()._loop) + "PW" + "NED"', FORBIDDEN),
    case(
        "semaphore_private_waiters",
        "C",
        'import asyncio\nreturn str(asyncio.Semaphore(0)._waiters) + "PW" + "NED"',
        FORBIDDEN,
    ),
    *[
        case(f"asyncio_{name}", "C", f"import asyncio\nreturn str(asyncio.{name}) + 'PW' + 'NED'", RUNTIME)
        for name in "shield TaskGroup get_event_loop_policy run_coroutine_threadsafe start_server Future".split()
    ],
    case(
        "lazy_class_rebuilt_from_type",
        "C",
        'import asyncio\nL = type(asyncio.sleep(0))\nreturn await L(lambda: asyncio.sleep(0, "fine"))',
        HARMLESS,
    ),
    case(
        "attribute_error_obj_is_what_the_code_passed",
        "C",
        "import asyncio\ntry:\n    asyncio.Task(5).done()\nexcept AttributeError as e:\n    return e.obj",
        HARMLESS,
    ),
]

# -- D. modules and shared stdlib state ---------------------------------------------------------------------------

D = [
    *[
        case(f"import_{module.replace('.', '_')}", "D", f"import {module}\nreturn 'PW' + 'NED'", FORBIDDEN)
        for module in (
            "contextlib abc contextvars logging sqlite3 glob zipfile concurrent.futures unittest.mock zoneinfo "
            "xml.etree.ElementTree"
        ).split()
    ],
    case(
        "operator_attrgetter_private",
        "D",
        'import asyncio, operator\nreturn str(operator.attrgetter("_loop")(asyncio.Lock())) + "PW" + "NED"',
        FORBIDDEN,
    ),
    case(
        "operator_methodcaller_private",
        "D",
        'import asyncio, operator\nreturn str(operator.methodcaller("_get_loop")(asyncio.Lock())) + "PW" + "NED"',
        FORBIDDEN,
    ),
    case(
        "starmap_setattr_on_a_module",
        "D",
        'import itertools, json\nlist(itertools.starmap(setattr, [(json, "dumps", len)]))\nreturn "PW" + "NED"',
        FORBIDDEN,
    ),
    case(
        "dataclass_asdict_of_a_host_function",
        "D",
        "import dataclasses, json\nreturn dataclasses.asdict(json.dumps)",
        RUNTIME,
    ),
    case(
        "namedtuple_field_named_like_a_dunder",
        "D",
        'import collections\nP = collections.namedtuple("P", ["__class__"])\nreturn "PW" + "NED"',
        RUNTIME,
    ),
    case(
        "dataclass_field_named_like_a_dunder",
        "D",
        "import dataclasses\n@dataclasses.dataclass\nclass P:\n    __globals__: int = 0\nreturn 'PW' + 'NED'",
        FORBIDDEN,
    ),
    case(
        "typing_named_tuple_string_annotation_is_not_evaluated",
        "D",
        'import typing\nP = typing.NamedTuple("P", [("a", "print(\'PW\' + \'NED\')")])\nreturn P(1).a',
        HARMLESS,
    ),
    case(
        "typing_typed_dict_string_annotation_is_not_evaluated",
        "D",
        'import typing\nT = typing.TypedDict("T", {"a": "print(\'PW\' + \'NED\')"})\nreturn T(a=1)',
        HARMLESS,
    ),
    case(
        "typing_type_var_bound_is_not_evaluated",
        "D",
        "import typing\nT = typing.TypeVar(\"T\", bound=\"print('PW' + 'NED')\")\nreturn str(T)",
        HARMLESS,
    ),
    case(
        "typing_forward_reference_is_not_evaluated",
        "D",
        "import typing\nreturn str(typing.List[\"print('PW' + 'NED')\"])[:11]",
        HARMLESS,
    ),
    case(
        "super_init_reinitialises_a_shared_uuid",
        "D",
        "import uuid\nsuper(uuid.UUID, uuid.NAMESPACE_DNS).__init__(int=0)\nreturn str(uuid.NAMESPACE_DNS)",
        RUNTIME,
    ),
    case(
        "super_setitem_on_a_module_facade",
        "D",
        'import json\nsuper(type(json), json).__setitem__("dumps", len)\nreturn "PW" + "NED"',
        RUNTIME,
    ),
    case("item_write_on_a_module_facade", "D", 'import json\njson["dumps"] = len\nreturn "PW" + "NED"', RUNTIME),
    case(
        "cached_property_lock_is_inert",
        "D",
        "import functools\ncp = functools.cached_property(len)\ncp.lock.acquire()\ncp.lock.release()\nreturn 1",
        HARMLESS,
    ),
]

# -- E. control flow -----------------------------------------------------------------------------------------------

E = [
    case(
        "base_exception_group_of_exits",
        "E",
        'raise BaseExceptionGroup("g", [SystemExit(3), KeyboardInterrupt()])',
        RUNTIME,
    ),
    case(
        "base_exception_group_of_exits_in_a_task",
        "E",
        'import asyncio\nasync def f():\n    raise BaseExceptionGroup("g", [SystemExit(3)])\nawait asyncio.gather(f())',
        RUNTIME,
    ),
    case(
        "gathered_exit_returned_as_a_value",
        "E",
        """
         import asyncio
         async def f():
             raise SystemExit(3)
         got = await asyncio.gather(f(), return_exceptions=True)
         return [str(g) for g in got]
         """,
        frozenset({OK, "runtime"}),
    ),
    case(
        "stop_signal_from_exit_reraised_with_a_known_kind",
        "E",
        """
         try:
             exit()
         except BaseException as e:
             Stop = type(e)
         raise Stop("timeout", "a stop of the code's own making")
         """,
        frozenset({"timeout", "runtime"}),
    ),
    case(
        "exit_caught_and_the_run_goes_on", "E", "try:\n    exit()\nexcept BaseException:\n    pass\nreturn 1", HARMLESS
    ),
    case(
        "exception_str_recurses",
        "E",
        "class E(Exception):\n    def __str__(self):\n        return str(self)\nraise E()",
        RUNTIME,
    ),
    case(
        "long_exception_context_chain",
        "E",
        """
         e = None
         for i in range(5000):
             try:
                 raise ValueError(i) from e
             except ValueError as new:
                 e = new
         raise e
         """,
        RUNTIME,
    ),
    case(
        "sort_key_mutates_the_list",
        "E",
        "xs = list(range(100))\nxs.sort(key=lambda x: xs.clear() or x)\nreturn len(xs)",
        HARMLESS_OR_BLOCKED,
    ),
    case(
        "heap_comparison_mutates_the_heap",
        "E",
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
        HARMLESS_OR_BLOCKED,
    ),
    case(
        "dict_key_equality_mutates_the_dict",
        "E",
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
        HARMLESS_OR_BLOCKED,
    ),
]

# -- F. resources --------------------------------------------------------------------------------------------------

F = [
    case(
        "shift_by_an_int_subclass", "F", "class I(int):\n    pass\nx = 1 << I(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE
    ),
    case(
        "power_of_int_subclasses",
        "F",
        "class I(int):\n    pass\nx = I(10) ** I(700_000)\nreturn 'PW' + 'NED'",
        RESOURCE,
    ),
    case(
        "random_getrandbits_guard",
        "F",
        "import random\nx = random.getrandbits(2_000_000)\nreturn 'PW' + 'NED'",
        RESOURCE,
    ),
    case(
        "random_randbytes_guard", "F", "import random\nx = random.randbytes(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE
    ),
    case("math_comb_guard", "F", "import math\nx = math.comb(10**6, 5 * 10**5)\nreturn 'PW' + 'NED'", RESOURCE),
    case("math_perm_guard", "F", "import math\nx = math.perm(10**6)\nreturn 'PW' + 'NED'", RESOURCE),
    case("percent_star_width_guard", "F", "x = '%*d' % (2_000_000, 1)\nreturn 'PW' + 'NED'", RESOURCE),
    case("percent_star_precision_guard", "F", "x = '%.*f' % (2_000_000, 1.0)\nreturn 'PW' + 'NED'", RESOURCE),
    case("bytes_percent_width_guard", "F", "x = b'%2000000d' % 1\nreturn 'PW' + 'NED'", RESOURCE),
    case("bytearray_ljust_guard", "F", "x = bytearray(b'#').ljust(2_000_000)\nreturn 'PW' + 'NED'", RESOURCE),
    case("int_to_bytes_guard", "F", "x = (1).to_bytes(2_000_000, 'big')\nreturn 'PW' + 'NED'", RESOURCE),
    case("operator_mul_guard", "F", "import operator\nx = operator.mul('#', 2_000_000)\nreturn 'PW' + 'NED'", RESOURCE),
    case("operator_pow_guard", "F", "import operator\nx = operator.pow(10, 700_000)\nreturn 'PW' + 'NED'", RESOURCE),
    case(
        "operator_lshift_guard",
        "F",
        "import operator\nx = operator.lshift(1, 2_000_000)\nreturn 'PW' + 'NED'",
        RESOURCE,
    ),
    case("tuple_of_range_guard", "F", "x = tuple(range(2_000_000))\nreturn 'PW' + 'NED'", RESOURCE),
    case("sorted_range_guard", "F", "x = sorted(range(2_000_000))\nreturn 'PW' + 'NED'", RESOURCE),
    case("comprehension_over_a_big_range", "F", "x = [0 for i in range(2_000_000)]\nreturn 'PW' + 'NED'", RESOURCE),
    case("int_to_str_digit_limit", "F", "return len(str(10**5000))", RUNTIME),
    case("str_to_int_digit_limit", "F", "return int('9' * 5000)", RUNTIME),
    case("pow_with_a_modulus", "F", "return pow(3, 10**100, 10**9 + 7)", HARMLESS),
    case(
        "decimal_max_precision_division",
        "F",
        "import decimal\ndecimal.getcontext().prec = decimal.MAX_PREC\nx = decimal.Decimal(1) / 7\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=WALL,
        modes=PROCESS,
    ),
    case(
        "decimal_to_int_is_one_slow_c_call",
        "F",
        "import decimal\nx = int(decimal.Decimal('1e3000000'))\nreturn 'PW' + 'NED'",
        RESOURCE,
        limits=WALL,
        modes=PROCESS,
    ),
    *[
        case(name, "F", f"{code}\nreturn 'PW' + 'NED'", RESOURCE, limits=WALL, modes=PROCESS)
        for name, code in [
            ("join_of_an_infinite_map", "import itertools\nx = ''.join(map(str, itertools.count()))"),
            ("userstring_repetition_bomb", "import collections\nx = collections.UserString('#') * 10**10"),
            ("translate_expansion_bomb", "x = ('a' * 1000).translate({97: '#' * 10**7})"),
            ("shake_digest_bomb", "import hashlib\nx = hashlib.new('shake_128').digest(10**10)"),
            ("star_unpacked_range_bomb", "x = [*range(10**10)]"),
            ("json_indent_bomb", "import json\nx = json.dumps([[[[1]]]], indent=10**9)"),
            ("product_repeat_bomb", "import itertools\nx = itertools.product([0], repeat=10**10)"),
            ("tee_bomb", "import itertools\nx = itertools.tee([1], 10**9)"),
            ("re_sub_empty_match_bomb", "import re\nx = re.sub('', '#' * 10**5, 'x' * 10**5)"),
        ]
    ],
]

# -- G. the operating system ---------------------------------------------------------------------------------------

G = [
    case("uuid1_reads_the_mac_address", "G", "import uuid\nreturn str(uuid.uuid1())", RUNTIME),
    case("uuid_getnode", "G", "import uuid\nreturn uuid.getnode()", RUNTIME),
    case("asyncio_open_unix_connection", "G", "import asyncio\nawait asyncio.open_unix_connection('/x')", RUNTIME),
    case("random_system_random", "G", "import random\nreturn random.SystemRandom().random()", RUNTIME),
    case("time_tzset", "G", "import time\ntime.tzset()\nreturn 1", RUNTIME),
]

CASES = [*A, *B, *C, *D, *E, *F, *G]

# -- known: techniques that currently get through ----------------------------------------------------------------

_WALK = "{0.__globals__[codecs].sys.modules[os].getcwd}"
"""A format field that walks from `json.dumps` to the real `os.getcwd`."""
_SIZE = "return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'"
"""The end of a size-guard payload: the marker appears only if an over-limit value was built."""

KNOWN = [
    case(
        "update_wrapper_updates_an_own_mapping_with_module_globals",
        "A",
        f"""
         import functools, statistics
         class Sink:
             def __init__(self):
                 self.box = {{}}
             def __getattr__(self, name):
                 return self.box
         s = Sink()
         functools.update_wrapper(s, statistics.mean, assigned=(), updated=("__globals__",))
         return s.box["sys"].modules["os"].environ.get("{SECRET_NAME}", "PW" + "NED")
         """,
        BLOCKED,
        reason="functools.update_wrapper(updated=...) is a getattr with the code's string: a real module's globals",
    ),
    case(
        "update_wrapper_replaces_the_run_globals",
        "A",
        f"""
         import functools, statistics
         def f():
             pass
         functools.update_wrapper(f, statistics.mean, assigned=(), updated=("__globals__",))
         return sys.modules["os"].environ.get("{SECRET_NAME}", "PW" + "NED")
         """,
        BLOCKED,
        reason="update_wrapper(updated=('__globals__',)) pours statistics' globals (sys, real builtins) into the run",
    ),
    case(
        "str_subclass_format_walks_attributes",
        "B",
        f'import json\nclass S(str):\n    pass\nreturn S("{_WALK}").format(json.dumps) + "PW" + "NED"',
        BLOCKED,
        reason="the str.format guard checks `type(obj) is str`; a subclass gets the real, unguarded format",
    ),
    case(
        "userstring_format_walks_attributes",
        "B",
        f'import collections, json\nreturn collections.UserString("{_WALK}").format(json.dumps) + "PW" + "NED"',
        BLOCKED,
        reason="UserString.format calls the real str.format on its data",
    ),
    case(
        "userstring_format_map_walks_attributes",
        "B",
        'import collections\nreturn collections.UserString("{a.__class__}").format_map({"a": 1}) + "PW" + "NED"',
        BLOCKED,
        reason="UserString.format_map calls the real str.format_map on its data",
    ),
    case(
        "dataclass_field_name_is_code",
        "A",
        f"""
         import dataclasses
         name = "a,{{}}[__import__('os').environ.get('{SECRET_NAME}', 'PW' + 'NED')],self.a"
         X = type("X", (), {{"__annotations__": {{name: int}}, "__module__": "nowhere"}})
         Y = dataclasses.dataclass(init=False, repr=False, eq=True)(X)
         y = Y()
         y.a = 1
         try:
             y == y
         except KeyError as e:
             return e.args[0]
         """,
        BLOCKED,
        reason="type() takes any `__annotations__` keys; @dataclass pastes them into code it execs with real builtins",
    ),
    case(
        "asyncio_lock_subclass_reads_the_loop",
        "C",
        'import asyncio\nclass L(asyncio.Lock):\n    pass\nreturn str(L()._get_loop()) + "PW" + "NED"',
        BLOCKED,
        reason="instances of the code's subclasses of stdlib classes expose the base's private attributes",
    ),
    case(
        "timeout_subclass_reads_the_task",
        "C",
        """
         import asyncio
         class T(type(asyncio.timeout(1))):
             pass
         async with T(None) as t:
             task = t._task
         return str(task.get_loop()) + "PW" + "NED"
         """,
        BLOCKED,
        reason="type() hands out real stdlib classes; a subclass reads the running Task, then the loop",
    ),
    case(
        "coroutine_driven_by_hand_yields_a_future",
        "C",
        """
         import asyncio
         async def f():
             await asyncio.sleep(1)
         co = f()
         future = co.send(None)
         co.close()
         return str(future.get_loop()) + "PW" + "NED"
         """,
        BLOCKED,
        reason="coroutine.send(None) returns the asyncio Future the sleep yields; get_loop() is the real loop",
    ),
    case(
        "as_completed_item_driven_by_hand_yields_a_future",
        "C",
        """
         import asyncio
         async def s():
             await asyncio.sleep(0.1)
         co = next(iter(asyncio.as_completed([s()])))
         future = co.send(None)
         co.close()
         return str(future.get_loop()) + "PW" + "NED"
         """,
        BLOCKED,
        reason="as_completed yields asyncio's own coroutines; driven by hand they yield real Futures",
    ),
    case(
        "deepcopy_memo_holds_the_host_functions",
        "C",
        """
         import copy
         memo = {}
         copy.deepcopy(echo, memo)
         for value in memo.values():
             for item in value if type(value) is list else [value]:
                 if type(item) is dict and "echo" in item:
                     return item["echo"].secret + "PW" + "NED"
         """,
        BLOCKED,
        modes=INLINE,
        reason="copy.deepcopy(proxy, memo) leaves the proxy's state (Dispatcher, the host functions) in memo",
    ),
    case(
        "deepcopy_memo_holds_the_guards_and_lifts_the_budget",
        "C",
        """
         import copy
         memo = {}
         copy.deepcopy(hasattr, memo)
         for value in memo.values():
             if type(value) is list:
                 for item in value:
                     if hasattr(item, "grace") and hasattr(item, "operations_left"):
                         item.grace(operations=10**15, seconds=10**6)
         n = 0
         for i in range(1_000_000):
             n += 1
         return "PW" + "NED"
         """,
        frozenset({"timeout", "forbidden", "runtime"}),
        reason="deepcopy(hasattr, memo) reaches the run's Guards; grace() lifts the budget and the deadline",
    ),
    case(
        "gather_of_a_fake_future_hands_out_the_context",
        "C",
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
        BLOCKED,
        reason="gather() trusts a duck-typed future's get_loop(); the fake loop receives the run's contextvars Context",
    ),
    case(
        "forged_stop_signal_with_an_unknown_kind",
        "E",
        """
         try:
             exit()
         except BaseException as e:
             Stop = type(e)
         raise Stop("bogus-kind", "anything")
         """,
        BLOCKED,
        reason="a StopRun the code raises sets error.kind freely; process isolation then raises AssertionError",
    ),
    case(
        "exception_class_name_floods_the_message",
        "E",
        'raise type("E" * 100_000, (Exception,), {})("x")',
        RUNTIME,
        reason="the message is capped, but not the exception's class name in front of it",
    ),
    case(
        "long_source_line_floods_the_traceback",
        "E",
        "def f(n):\n    return f(n + 1) if n < 30 else 1 / 0  # " + "x" * 60_000 + "\nf(0)",
        RUNTIME,
        reason="the traceback repeats each frame's source line uncapped (20 frames x the line)",
    ),
    case(
        "enum_functional_api_installs_a_forbidden_dunder",
        "A",
        """
         import enum
         E = enum.Enum("E", [("__match_args__", ("name",)), ("A", 1)])
         match E.A:
             case E(name):
                 return name + "PW" + "NED"
         """,
        BLOCKED,
        reason="Enum('E', [(dunder, value)]) puts any dunder on a class, past the class-namespace check",
    ),
    *[
        case(f"size_guard_{name}", "F", f"{textwrap.dedent(code).strip()}\n{_SIZE}", RESOURCE, reason=reason)
        for name, code, reason in [
            (
                "repetition_by_an_index_object",
                "class N:\n    def __index__(self):\n        return 2_000_000\nx = '#' * N()",
                "only exact ints are counted",
            ),
            ("repetition_by_an_int_subclass", "class I(int):\n    pass\nx = '#' * I(2_000_000)", "type(x) is int"),
            (
                "repetition_of_a_str_with_a_lying_len",
                "class S(str):\n    def __len__(self):\n        return 0\nx = str(S('#') * 2_000_000)",
                "the guard trusts len()",
            ),
            ("str_subclass_ljust", "class S(str):\n    pass\nx = S('#').ljust(2_000_000)", "type(x) is str"),
            ("str_subclass_percent", "class S(str):\n    pass\nx = S('%2000000d') % 1", "type(x) is str"),
            ("userstring_repetition", "import collections\nx = collections.UserString('#') * 2_000_000", "unguarded"),
            ("userstring_center", "import collections\nx = collections.UserString('#').center(2_000_000)", "unguarded"),
            ("bytearray_percent", "x = bytearray(b'%2000000d') % 1", "only str and bytes"),
            (
                "ljust_width_with_a_lying_comparison",
                (
                    "class W:\n    def __gt__(self, other):\n        return False\n    def __index__(self):\n"
                    "        return 2_000_000\nx = '#'.ljust(W())"
                ),
                "the guard trusts `>`",
            ),
            (
                "replace_with_a_lying_len",
                "class S(str):\n    def __len__(self):\n        return 0\nx = ('#' * 1000).replace('#', S('#' * 2000))",
                "the guard trusts len()",
            ),
            (
                "join_with_a_lying_len",
                "class S(str):\n    def __len__(self):\n        return 0\nx = ''.join([S('#' * 1000)] * 2000)",
                "the guard trusts len()",
            ),
            ("int_subclass_to_bytes", "class I(int):\n    pass\nx = I(1).to_bytes(2_000_000, 'big')", "type(x) is int"),
            ("star_unpacked_range", "x = [*range(2_000_000)]", "list(range()) is guarded, [*range()] is not"),
            ("list_of_itertools_repeat", "import itertools\nx = list(itertools.repeat(0, 2_000_000))", "unguarded"),
            ("deque_repetition", "import collections\nx = collections.deque([0]) * 2_000_000", "unguarded"),
            ("str_translate", "x = ('a' * 10).translate({97: '#' * 200_000})", "unguarded, like replace was"),
            ("re_sub_on_empty_matches", "import re\nx = re.sub('', '#' * 2000, 'x' * 1000)", "unguarded"),
            ("textwrap_indent", "import textwrap\nx = textwrap.indent('x\\n' * 1000, '#' * 2000)", "unguarded"),
            ("json_dumps_indent", "import json\nx = json.dumps([[[1]]], indent=1_000_000)", "unguarded"),
            ("shake_digest", "import hashlib\nx = hashlib.new('shake_128').digest(2_000_000)", "unguarded"),
            (
                "decimal_precision",
                "import decimal\ndecimal.getcontext().prec = 2_000_000\nx = str(decimal.Decimal(1) / 7)",
                "unguarded",
            ),
            (
                "fraction_power_with_a_fraction_exponent",
                "from fractions import Fraction as Q\nx = range((Q(2) ** Q(2_000_000)).numerator.bit_length())",
                "the pow guard only counts int exponents",
            ),
        ]
    ],
]
FIXED: frozenset[str] = frozenset(
    {
        "abc_register_on_a_shared_abc-inline",
        "abc_register_on_a_shared_abc-process",
        "as_completed_item_driven_by_hand_yields_a_future-inline",
        "as_completed_item_driven_by_hand_yields_a_future-process",
        "async_generator_raises_system_exit_when_finalised-inline",
        "async_generator_raises_system_exit_when_finalised-process",
        "asyncio_lock_subclass_reads_the_loop-inline",
        "asyncio_lock_subclass_reads_the_loop-process",
        "coroutine_driven_by_hand_yields_a_future-inline",
        "coroutine_driven_by_hand_yields_a_future-process",
        "dataclass_decorator_freezes_a_stdlib_class-inline",
        "dataclass_decorator_freezes_a_stdlib_class-process",
        "dataclass_field_name_is_code-inline",
        "dataclass_field_name_is_code-process",
        "deep_iterator_chain_overflows_the_c_stack-process",
        "deepcopy_memo_holds_the_guards_and_lifts_the_budget-inline",
        "deepcopy_memo_holds_the_guards_and_lifts_the_budget-process",
        "deepcopy_memo_holds_the_host_functions-inline",
        "enum_functional_api_installs_a_forbidden_dunder-inline",
        "enum_functional_api_installs_a_forbidden_dunder-process",
        "exception_class_name_floods_the_message-inline",
        "exception_class_name_floods_the_message-process",
        "forged_stop_signal_with_an_unknown_kind-inline",
        "forged_stop_signal_with_an_unknown_kind-process",
        "gather_of_a_fake_future_hands_out_the_context-inline",
        "gather_of_a_fake_future_hands_out_the_context-process",
        "hand_driven_coroutine_stops_the_loop-inline",
        "hand_driven_coroutine_stops_the_loop-process",
        "item_write_into_a_stdlib_class_dict-inline",
        "item_write_into_a_stdlib_class_dict-process",
        "long_source_line_floods_the_traceback-inline",
        "long_source_line_floods_the_traceback-process",
        "size_guard_repetition_by_an_index_object-inline",
        "size_guard_repetition_by_an_index_object-process",
        "size_guard_repetition_by_an_int_subclass-inline",
        "size_guard_repetition_by_an_int_subclass-process",
        "size_guard_repetition_of_a_str_with_a_lying_len-inline",
        "size_guard_repetition_of_a_str_with_a_lying_len-process",
        "size_guard_deque_repetition-inline",
        "size_guard_deque_repetition-process",
        "size_guard_str_subclass_percent-inline",
        "size_guard_str_subclass_percent-process",
        "size_guard_bytearray_percent-inline",
        "size_guard_bytearray_percent-process",
        "size_guard_ljust_width_with_a_lying_comparison-inline",
        "size_guard_ljust_width_with_a_lying_comparison-process",
        "size_guard_replace_with_a_lying_len-inline",
        "size_guard_replace_with_a_lying_len-process",
        "size_guard_join_with_a_lying_len-inline",
        "size_guard_join_with_a_lying_len-process",
        "size_guard_int_subclass_to_bytes-inline",
        "size_guard_int_subclass_to_bytes-process",
        "size_guard_list_of_itertools_repeat-inline",
        "size_guard_list_of_itertools_repeat-process",
        "size_guard_textwrap_indent-inline",
        "size_guard_textwrap_indent-process",
        "size_guard_str_subclass_ljust-inline",
        "size_guard_str_subclass_ljust-process",
        "size_guard_userstring_center-inline",
        "size_guard_userstring_center-process",
        "size_guard_userstring_repetition-inline",
        "size_guard_userstring_repetition-process",
        "str_subclass_format_walks_attributes-inline",
        "str_subclass_format_walks_attributes-process",
        "timeout_subclass_reads_the_task-inline",
        "timeout_subclass_reads_the_task-process",
        "update_wrapper_replaces_the_code_of_a_stdlib_function-inline",
        "update_wrapper_replaces_the_code_of_a_stdlib_function-process",
        "update_wrapper_replaces_the_run_globals-inline",
        "update_wrapper_replaces_the_run_globals-process",
        "update_wrapper_updates_an_own_mapping_with_module_globals-inline",
        "update_wrapper_updates_an_own_mapping_with_module_globals-process",
        "userstring_format_map_walks_attributes-inline",
        "userstring_format_map_walks_attributes-process",
        "userstring_format_walks_attributes-inline",
        "userstring_format_walks_attributes-process",
    }
)
"""Ids of `KNOWN` cases and `DAMAGES` (`<name>-<isolation>`) the sandbox has stopped since the review."""


def still_open(test_id: str, reason: str) -> list[pytest.MarkDecorator]:
    """The xfail mark of a finding that still gets through; none once it is in `FIXED`."""
    return [] if test_id in FIXED else [pytest.mark.xfail(strict=True, reason=reason)]


KNOWN_PARAMS = [
    pytest.param(c, isolation, id=f"{c.cls}-{c.name}-{isolation}", marks=still_open(f"{c.name}-{isolation}", c.reason))
    for c in KNOWN
    for isolation in c.modes
]
PARAMS = [pytest.param(c, isolation, id=f"{c.cls}-{c.name}-{isolation}") for c in CASES for isolation in c.modes]


# -- host side ------------------------------------------------------------------------------------------------------


class HostKit:
    """Host functions for the attacks, recording every value the sandbox hands them."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: list[object] = []

    def functions(self) -> dict[str, Any]:
        """The functions one run sees: `echo` (with a secret on it as bait) and a `tools` namespace."""

        async def echo(*args: object, **kwargs: object) -> object:
            self.received.extend(args)
            self.received.extend(kwargs.values())
            return {"args": list(args), "kwargs": kwargs}

        echo.secret = self.secret  # type: ignore[attr-defined]  # bait for attribute walks

        def resolve(name: str) -> Callable[..., object]:
            if name == "echo":
                return echo
            raise LookupError(name)

        return {"echo": echo, "tools": Namespace(resolve)}


def assert_nothing_leaked(result: RunResult, secret: str) -> None:
    """No host secret and no escape marker in anything the run shows."""
    texts = [json.dumps(result.value, default=repr), result.stdout]
    if result.error is not None:
        texts += [result.error.message, result.error.traceback]
    for text in texts:
        assert secret not in text
        assert "PWNED" not in text


def assert_stopped(result: RunResult, case: Case, secret: str, kit: HostKit) -> None:
    """The case failed with an acceptable kind (or succeeded harmlessly), showed nothing, sent only JSON."""
    if result.error is None:
        assert OK in case.kinds, f"the attack ran: value={result.value!r:.300} stdout={result.stdout[:300]!r}"
    else:
        assert result.error.kind in case.kinds, result.error
        assert result.error.kind in ERROR_KINDS, result.error
        assert result.error.message
        assert len(result.error.message) <= 2000, result.error.message[:300]
        assert len(result.error.message) + len(result.error.traceback) <= MAX_ERROR_TEXT
    assert_nothing_leaked(result, secret)
    assert result.calls <= case.limits.calls
    assert all(is_plain_json(value) for value in kit.received), kit.received


# -- the attacks --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "isolation"), PARAMS)
async def test_attack_is_stopped_and_the_sandbox_survives(sb: Sandbox, case: Case, host_secret: str) -> None:
    """The attack fails with an expected kind, leaks nothing, passes no objects out, and the next run works."""
    kit = HostKit(host_secret)
    result = await run(sb, case.code, functions=kit.functions(), limits=case.limits)
    assert_stopped(result, case, host_secret, kit)
    await assert_still_works(sb)


@pytest.mark.parametrize(("case", "isolation"), KNOWN_PARAMS)
async def test_known_escape_is_stopped(sb: Sandbox, case: Case, host_secret: str) -> None:
    """Techniques the review found getting through: stopped now (`FIXED`), or still open (xfail)."""
    kit = HostKit(host_secret)
    result = await run(sb, case.code, functions=kit.functions(), limits=case.limits)
    assert_stopped(result, case, host_secret, kit)
    await assert_still_works(sb)


def test_case_names_are_unique() -> None:
    """Each case has its own name, so a test id names one technique."""
    names = [c.name for c in [*CASES, *KNOWN]]
    assert len(names) == len(set(names))


# -- known: effects a single result does not show -------------------------------------------------------------------

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
    async with Sandbox(isolation=isolation, workers=1, limits=QUICK) as sb:  # one worker: the next run lands on it
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
    leaky = next(c for c in KNOWN if c.name == "gather_of_a_fake_future_hands_out_the_context")
    variable: contextvars.ContextVar[str] = contextvars.ContextVar("host_request_user")
    token = variable.set(host_secret)
    try:
        result = await run(sandboxes["inline"], leaky.code, functions=kit.functions(), limits=QUICK)
    finally:
        variable.reset(token)
    assert host_secret not in json.dumps(result.value)


async def test_decimal_context_of_the_host_is_untouched(sandboxes: dict[str, Sandbox]) -> None:
    """Changing `decimal.getcontext()` in the code does not change the host's decimal arithmetic."""
    mine = decimal.Context(prec=50)
    decimal.setcontext(mine)
    try:
        await run(sandboxes["inline"], "import decimal\ndecimal.getcontext().prec = 3\nreturn 1", limits=QUICK)
        assert decimal.getcontext().prec == 50
    finally:
        decimal.setcontext(decimal.Context())


THROW = """
class Mine(Exception):
    pass
async def f():
    return await slow()
co = f()
co.send(None)
try:
    co.throw(Mine())
except BaseException:
    pass
return 1
"""


async def test_host_function_never_sees_an_object_of_the_code(sandboxes: dict[str, Sandbox]) -> None:
    """Driving a host call by hand (`send`/`throw`) cannot put the code's objects inside a host function."""
    seen: list[BaseException] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except BaseException as exc:
            seen.append(exc)
            raise

    await run(sandboxes["inline"], THROW, functions={"slow": slow}, limits=QUICK)
    await asyncio.sleep(0)
    assert not [exc for exc in seen if getattr(type(exc), "__sandbox_class__", False)]


async def test_oversized_host_reply_is_a_result(sandboxes: dict[str, Sandbox]) -> None:
    """A host function returning more than one frame can carry fails the run; `run` itself does not raise."""

    def big() -> object:
        return ["#" * MiB] * 70  # 70 MiB of JSON from 1 MiB of memory

    result = await run(sandboxes["process"], "return len(await big())", functions={"big": big}, limits=QUICK)
    assert result.error is not None
    await assert_still_works(sandboxes["process"])


# -- known: damage to the process the code runs in, shown in a fresh interpreter ---------------------------------


@dataclass(frozen=True)
class Damage:
    """An attack run in a fresh interpreter, then a second run and a check of the host's own state."""

    name: str
    attack: str
    check: str
    """The second run's code; its value must equal `expected`."""
    expected: object
    host: str
    """A Python expression, true when the host process's own state is intact."""
    reason: str


DAMAGES = [
    Damage(
        "update_wrapper_replaces_the_code_of_a_stdlib_function",
        "import functools, statistics\n"
        "functools.update_wrapper(statistics.mean, lambda *a, **k: sys, assigned=('__code__',), updated=())\n"
        "return statistics.mean([1]).modules['os'].getcwd()",
        "import statistics\nreturn statistics.mean([1, 2])",
        1.5,
        "__import__('statistics').mean([1, 2]) == 1.5",
        "update_wrapper(assigned=('__code__',)) rewrites a shared stdlib function: the code runs with its globals",
    ),
    Damage(
        "item_write_into_a_stdlib_class_dict",
        "import textwrap\ntextwrap.TextWrapper.unicode_whitespace_trans[ord('a')] = 'Z'\nreturn 1",
        "import textwrap\nreturn textwrap.fill('banana')",
        "banana",
        "__import__('textwrap').fill('banana') == 'banana'",
        "item writes pass on any object: TextWrapper.unicode_whitespace_trans is shared",
    ),
    Damage(
        "abc_register_on_a_shared_abc",
        "import collections.abc\ncollections.abc.Sequence.register(int)\nreturn 1",
        "import collections.abc\nreturn isinstance(1, collections.abc.Sequence)",
        False,
        "not isinstance(1, __import__('collections.abc').abc.Sequence)",
        "ABC.register is a public method of shared stdlib classes",
    ),
    Damage(
        "dataclass_decorator_freezes_a_stdlib_class",
        "import dataclasses, textwrap\ndataclasses.dataclass(frozen=True)(textwrap.TextWrapper)\nreturn 1",
        "import textwrap\nreturn textwrap.fill('x')",
        "x",
        "__import__('textwrap').fill('x') == 'x'",
        "@dataclass sets __setattr__ and friends on whatever class it is given",
    ),
    Damage(
        "async_generator_raises_system_exit_when_finalised",
        "async def g():\n    try:\n        yield 1\n    finally:\n        raise SystemExit(3)\n"
        "it = g()\nawait anext(it)\nreturn 1",
        "return 1",
        1,
        "True",
        "the loop's asyncgen finalizer runs the finally outside the run's task: SystemExit stops the loop",
    ),
    Damage(
        "hand_driven_coroutine_stops_the_loop",
        "import asyncio\nasync def f():\n    await asyncio.sleep(1)\n"
        "co = f()\nfuture = co.send(None)\nco.close()\nfuture.get_loop().stop()\nreturn 1",
        "return 1",
        1,
        "True",
        "with the real loop (see coroutine_driven_by_hand_yields_a_future), loop.stop() ends the host's asyncio.run",
    ),
    Damage(
        "deep_iterator_chain_overflows_the_c_stack",
        "it = iter([1])\nfor i in range(300_000):\n    it = map(abs, it)\nreturn next(it)",
        "return 1",
        1,
        "True",
        "CPython recursion in C (map of map of ...): inline the host segfaults; a dead worker makes run() raise",
    ),
]

ROOT = str(Path(__file__).resolve().parents[2])
"""The repository root, for the fresh interpreter's import path."""
DAMAGE_RUNNER = """
import asyncio, json, sys
from sandbox import Limits, Sandbox
spec = json.loads(sys.stdin.read())
async def main():
    report = {}
    async with Sandbox(isolation=spec["isolation"], workers=1, limits=Limits(timeout=3.0)) as sb:
        try:
            first = await sb.run(spec["attack"])
            report["first"] = first.error.kind if first.error else "ok"
        except BaseException as exc:
            report["first_raised"] = repr(exc)[:300]
        await asyncio.sleep(0.3)
        try:
            after = await sb.run(spec["check"])
            report["after"] = after.value
            report["after_error"] = after.error.message if after.error else None
        except BaseException as exc:
            report["after_raised"] = repr(exc)[:300]
    report["host_ok"] = bool(eval(spec["host"]))
    print(json.dumps(report))
asyncio.run(main())
"""


@pytest.mark.parametrize(
    ("damage", "isolation"),
    [
        pytest.param(d, isolation, id=f"{d.name}-{isolation}", marks=still_open(f"{d.name}-{isolation}", d.reason))
        for d in DAMAGES
        for isolation in BOTH
    ],
)
async def test_known_damage_is_contained(damage: Damage, isolation: str, tmp_path: Path) -> None:
    """The attack leaves the host process alive and its stdlib intact, and the next run works normally."""
    spec = {"isolation": isolation, "attack": damage.attack, "check": damage.check, "host": damage.host}
    with anyio.fail_after(30):
        done = await anyio.run_process(
            [sys.executable, "-c", DAMAGE_RUNNER],
            input=json.dumps(spec).encode(),
            check=False,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": ROOT},
        )
    assert done.returncode == 0, f"the host process died ({done.returncode}): {done.stderr.decode()[-500:]}"
    report = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "first_raised" not in report, report
    assert "after_raised" not in report, report
    assert report["after"] == damage.expected, report
    assert report["host_ok"], report
