"""Red team, third review: the code's objects handed to standard-library code that writes classes or source.

`@dataclass` pastes field names into source it execs with real builtins; `Enum(...)` and three-argument
`type()` put names into a class namespace; the methods `@dataclass` generates read and write attributes by
field name without the guards. A `str` subclass whose `__format__`, `isidentifier` or `startswith` lies, or
an annotation mapping whose iteration and `items()` disagree, must never get past the check the facade made,
and a generated method called unbound must not write into shared standard-library state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from review3_kit import Case, Refused, Value, case, check, params

if TYPE_CHECKING:
    from sandbox import Sandbox

_SUBCLASSES = "{}[str([c.__name__ for c in ().__class__.__base__.__subclasses__()][:2])]"
"""Real Python that indexes an empty dict with the first subclasses of `object`: a KeyError shows it ran."""
_RAN = "['type', 'async_generator']"
"""What `_SUBCLASSES` raises when it ran unrestricted."""
FIELD_NAME = Refused("forbidden", "ForbiddenError", "a dataclass field name must be")
LYING_STR = """
class S(str):
    def isidentifier(self):
        return True
    def startswith(self, prefix, *args):
        return False
    def __format__(self, spec):
        return "a," + CODE
    def __repr__(self):
        return "'a'"
""".replace("CODE", repr(_SUBCLASSES))
EQ_RUNS_THE_FIELDS = """
Y = dataclasses.dataclass(init=False, repr=False, eq=True)(X)
y = Y()
y.a = 1
try:
    return y == y
except KeyError as e:
    return e.args[0]
"""

CODEGEN: list[Case] = [
    case(
        "dataclass_field_name_is_a_str_subclass_with_its_own_format",
        f"import dataclasses\n{LYING_STR}\n"
        'X = type("X", (), {"__annotations__": {S("a"): int}, "__module__": "nowhere"})\n'
        f"{EQ_RUNS_THE_FIELDS}",
        Value(True),
    ),
    case(
        "dataclass_annotations_whose_items_disagree_with_their_keys",
        (
            f"""
        import dataclasses
        class D(dict):
            def __iter__(self):
                return iter(["a"])
            def keys(self):
                return ["a"]
            def items(self):
                return [("a," + {_SUBCLASSES!r}, int)]
        X = type("X", (), {{"__annotations__": D(a=int), "__module__": "nowhere"}})
        """,
            EQ_RUNS_THE_FIELDS,
        ),
        Value(True),
    ),
    case(
        "dataclass_field_name_with_code_in_a_plain_str",
        f"""
        import dataclasses
        X = type("X", (), {{"__annotations__": {{"a," + {_SUBCLASSES!r}: int}}}})
        dataclasses.dataclass(X)
        return 1
        """,
        FIELD_NAME,
    ),
    case(
        "dataclass_field_named_like_a_dunder_through_type",
        """
        import dataclasses
        K = type("K", (), {"__annotations__": {"__match_args__": tuple}})
        dataclasses.dataclass(K)
        return 1
        """,
        FIELD_NAME,
    ),
    case(
        "dataclass_field_named_like_a_frame_attribute",
        """
        import dataclasses
        K = type("K", (), {"__annotations__": {"gi_frame": int}})
        dataclasses.dataclass(K)
        return 1
        """,
        FIELD_NAME,
    ),
    case(
        "dataclass_options_must_be_known",
        """
        import dataclasses
        @dataclasses.dataclass(bogus=True)
        class P:
            x: int
        """,
        Refused("runtime", "TypeError", "`@dataclass` takes no option 'bogus'"),
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
        Refused("runtime", "TypeError", "takes a 'W' instance, not 'type'"),
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
        Refused("runtime", "TypeError", "takes a 'U' instance, not 'UUID'"),
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
        Refused("runtime", "TypeError", "takes a 'W' instance, not 'TextWrapper'"),
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
        (
            "import enum",
            LYING_STR,
            """
        def hook(*args):
            return "PW" + "NED"
        E = enum.Enum("E", [(S("__repr__"), hook), ("A", 1)])
        return repr(E.A)
        """,
        ),
        Refused("forbidden", "ForbiddenError", "an Enum member name must not start with `_`"),
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
        (
            "import enum",
            LYING_STR,
            """
        E = enum.Enum("E", S("A B"))
        return [m.name for m in E]
        """,
        ),
        Value(["A", "B"]),
    ),
    case(
        "three_argument_type_key_is_a_str_subclass_whose_startswith_lies",
        (
            LYING_STR,
            """
        X = type("X", (), {S("__init_subclass__"): classmethod(lambda cls: print("hook"))})
        class Y(X):
            pass
        return 1
        """,
        ),
        Refused("forbidden", "ForbiddenError", "a class cannot define `__init_subclass__`"),
    ),
]


@pytest.mark.parametrize(("case", "isolation"), params(CODEGEN))
async def test_codegen_facades_take_only_plain_checked_names(sb: Sandbox, case: Case) -> None:
    """Names reach class-writing standard-library code as plain, checked `str`s; generated methods check `self`."""
    await check(sb, case)


_LYING_PATTERN = """
import re, string
S = type("S", (str,), {"__getitem__": lambda self, i: "X" if type(i) is int else str.__getitem__(self, i)})
"""
"""A `str` subclass whose characters, read one by one, lie: `re`'s parser would read the lie (and never end)."""

REGEX: list[Case] = [
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


@pytest.mark.parametrize(("case", "isolation"), params(REGEX))
async def test_re_sees_only_plain_patterns_and_templates(sb: Sandbox, case: Case) -> None:
    """Patterns, templates and flags reach `re` (and its process-wide caches) as plain values."""
    await check(sb, case)
