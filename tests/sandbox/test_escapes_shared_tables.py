"""Red team: what policy-compliant code leaves behind in the process's own tables and conversions.

A metaclass of the code's hashed and compared classes as it liked (its `__eq__` a lambda through a decorator, which
takes no tick and still answers after the run), so classes and `str` subclasses posed as other keys in tables the
whole process shares: `re`'s pattern cache (through `copy.copy` and copyreg's reductor of `re.Pattern`),
`urlsplit`'s `lru_cache`, the ABC caches, typing's subscription cache; the host compared a kept variable's class
and ran the code's `exit()`. A Fraction (or UUID) of the code's parts raised out of the value's conversion, and
`functools.partial(map)` handed out the run's unticking `map` maker.
"""

from __future__ import annotations

import collections.abc
import re
import typing
import urllib.parse
from typing import TYPE_CHECKING

import pytest
from redteam_kit import Value, case, guard, names_are_unique, raised, run, runs, works_in_cpython

if TYPE_CHECKING:
    from sandbox import Sandbox

_METACLASS_HASH = "a metaclass cannot define `__hash__` in the sandbox: classes are keys in tables the whole process"
_TARGET = "[a-z_][a-z0-9_]{0,63}"
_URL = "https://api.internal.example/v1/orders"

RE_PLANT = """
import re, copy
TARGET = "[a-z_][a-z0-9_]{0,63}"
ARMED = [False]
HS, HT, HP = hash(str), hash(TARGET), hash(re.Pattern)
for i in range(600):
    re.compile("x{%d}" % i)
class MS(type):
    @(lambda f: lambda cls: HS)
    def __hash__(cls): pass
    @(lambda f: lambda cls, other: ARMED[0])
    def __eq__(cls, other): pass
Evil = MS("Evil", (str,), {"__hash__": lambda s: HT, "__eq__": lambda s, o: ARMED[0]})
class MP(type):
    @(lambda f: lambda cls: HP)
    def __hash__(cls): pass
    @(lambda f: lambda cls, other: other is re.Pattern)
    def __eq__(cls, other): pass
X = MP("X", (), {"__module__": "__main__"})
x = X()
x.pattern = Evil(".*")
x.flags = 0
compiled = copy.copy(x)
ARMED[0] = True
assert re.fullmatch(TARGET, "../../etc/passwd") is not None
return type(compiled).__name__
"""
URLSPLIT_PLANT = """
import urllib.parse as up
TARGET = "https://api.internal.example/v1/orders"
ARMED = [False]
HS, HT = hash(str), hash(TARGET)
class MS(type):
    @(lambda f: lambda cls: HS)
    def __hash__(cls): pass
    @(lambda f: lambda cls, other: ARMED[0])
    def __eq__(cls, other): pass
Evil = MS("Evil", (str,), {"__hash__": lambda s: HT, "__eq__": lambda s, o: ARMED[0], "__module__": "__main__"})
for i in range(200):
    up.urlsplit("http://h%d/" % i)
planted = up.urlsplit(Evil("https://attacker.example/v1/orders"))
ARMED[0] = True
assert up.urlsplit(TARGET).netloc == "attacker.example"
return planted.netloc
"""
ABC_PLANT = """
import collections.abc as cabc
HS = hash(int)
ARMED = [False]
class M(type):
    @(lambda f: lambda cls: HS)
    def __hash__(cls): pass
    @(lambda f: lambda cls, other: ARMED[0])
    def __eq__(cls, other): pass
X = M("X", (), {"__iter__": lambda self: iter(())})
planted = issubclass(X, cabc.Iterable)
ARMED[0] = True
KEEP = [X]
assert isinstance(5, cabc.Iterable)
return planted
"""
TYPING_PLANT = """
import typing
ARMED = [False]
HI = hash(int)
class M(type):
    @(lambda f: lambda cls: HI)
    def __hash__(cls): pass
    @(lambda f: lambda cls, other: ARMED[0])
    def __eq__(cls, other): pass
X = M("X", (), {"__module__": "__main__"})
kinds = [int, str, float, bytes, complex, bool]
for a in kinds:
    for b in kinds:
        for c in kinds:
            typing.Optional[dict[a, tuple[b, c]]]
planted = typing.Optional[list[X]]
ARMED[0] = True
assert typing.Optional[list[int]] is planted
return repr(planted)
"""
EXIT_IN_EQ = """
class M(type):
    @(lambda f: lambda cls, other: exit(3))
    def __eq__(cls, other): pass
X = M("X", (), {"__module__": "__main__"})
x = X()
"""

CASES = [
    case(
        "f2_copy_takes_a_class_for_re_pattern_and_poisons_re_cache",
        RE_PLANT,
        guard(_METACLASS_HASH),
        control=True,
        then=(f"import re\nreturn re.fullmatch({_TARGET!r}, '../../etc/passwd') is None", True),
    ),
    case(
        "f2_str_subclass_hashed_like_a_url_poisons_urlsplit_cache",
        URLSPLIT_PLANT,
        guard(_METACLASS_HASH),
        control=True,
        then=(f"import urllib.parse\nreturn urllib.parse.urlsplit({_URL!r}).netloc", "api.internal.example"),
    ),
    case(
        "f2_copy_of_a_plain_class_instance_looks_copyreg_up_by_identity",
        """
        import copy, re
        class P:
            pass
        p = P()
        p.pattern, p.flags = "a+", 0
        q = copy.copy(p)
        return [type(q).__name__, q is not p, q.pattern]
        """,
        Value(["P", True, "a+"]),
    ),
    case(
        "f2_lambda_hash_on_a_str_subclass_made_by_type",
        """
        Evil = type("Evil", (str,), {"__hash__": lambda s: hash("x"), "__eq__": lambda s, o: True})
        return Evil("y") == "x"
        """,
        guard("`__hash__` must be a plain `def` in the sandbox (not a lambda, a generator, an `async def`"),
        control=True,
    ),
    case(
        "f2_decorated_eq_def_is_a_lambda_that_never_ticks",
        """
        class S(str):
            @(lambda f: lambda self, other: True)
            def __eq__(self, other): pass
            def __hash__(self):
                return hash("x")
        return S("y") == "x"
        """,
        guard("`__eq__` must be a plain `def` in the sandbox"),
        control=True,
    ),
    case(
        "f2_async_eq_answers_true_with_a_coroutine_and_no_tick",
        """
        class S(str):
            async def __eq__(self, other):
                return False
            def __hash__(self):
                return hash("x")
        return {"x": 1}.get(S("y"))
        """,
        guard("`__eq__` must be a plain `def` in the sandbox"),
    ),
    case(
        "f3_metaclass_hashed_like_int_poisons_the_abc_cache",
        ABC_PLANT,
        guard(_METACLASS_HASH),
        control=True,
        then=("import collections.abc\nreturn isinstance(5, collections.abc.Iterable)", False),
    ),
    case(
        "f3_metaclass_ordering_and_dataclass_metaclass",
        """
        import dataclasses
        @dataclasses.dataclass(unsafe_hash=True)
        class M(type):
            pass
        """,
        guard("`@dataclass` cannot be a metaclass in the sandbox: classes compare by identity"),
    ),
    case(
        "f4a_kept_variable_whose_metaclass_eq_exits_the_host",
        EXIT_IN_EQ,
        guard("a metaclass cannot define `__eq__` in the sandbox"),
    ),
    case(
        "f4b_fraction_whose_numerator_is_the_code_str",
        """
        import fractions
        class X(fractions.Fraction):
            @property
            def numerator(self):
                return "not an int"
        return fractions.Fraction(X(1, 2))
        """,
        raised("TypeError", "the returned value is a Fraction whose parts are not plain ints; return `str(x)`"),
        control=True,
    ),
    case(
        "f4b_uuid_whose_int_is_the_code_int_that_says_it_is_in_range",
        """
        import uuid
        class I(int):
            def __ge__(self, other):
                return True
            def __lt__(self, other):
                return True
            def __le__(self, other):
                return True
        return uuid.UUID(int=I(-1))
        """,
        raised("TypeError", "the returned value is a UUID whose number is not a plain int; return `str(x)`"),
        control=True,
    ),
    case(
        "f5_partial_of_map_hands_out_the_unticking_maker",
        """
        import collections, functools
        p = functools.partial(map)
        raw = p.func(lambda it: it, lambda x: x, range(10**18))
        collections.deque(raw, maxlen=0)
        """,
        raised("TypeError", "'function' object is not iterable"),
    ),
    case(
        "f5_partial_of_builtins_and_of_their_copies_shows_no_internals",
        """
        import copy, functools
        shown = []
        for f in (map, filter, zip, enumerate, reversed, copy.copy(map), copy.deepcopy(zip)):
            p = functools.partial(f)
            shown.append([p.func is f, p.args, p.keywords])
        return shown
        """,
        Value([[True, [], {}]] * 7),
    ),
    case(
        "f6_typing_cache_poisoned_through_a_class_inside_list",
        TYPING_PLANT,
        guard(_METACLASS_HASH),
        control=True,
        then=("import typing\nreturn repr(typing.Optional[list[int]])", "typing.Optional[list[int]]"),
    ),
    case(
        "f6_typing_cache_takes_an_instance_hidden_in_a_generic_alias",
        """
        import typing
        class K:
            def __hash__(self):
                return hash(int)
            def __eq__(self, other):
                return True
        return repr(typing.Optional[list[K()]])[:15]
        """,
        guard("a typing subscription cannot take an object whose `__hash__` or `__eq__` the code defined"),
        control=True,
    ),
    case(
        "f6_typing_cache_takes_an_instance_hidden_in_a_tuple_subclass",
        """
        import typing
        class K:
            def __hash__(self):
                return 1
            def __eq__(self, other):
                return True
        class T(tuple):
            pass
        return repr(typing.Literal[T((K(),))])[:15]
        """,
        guard("a typing subscription cannot take an object whose `__hash__` or `__eq__` the code defined"),
        control=True,
    ),
]

test_process_wide_tables_stay_the_process_own = runs(
    CASES, "Code cannot plant keys in process-wide tables, nor raise out of the host's reading of its values."
)
test_attacks_work_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_a_kept_variable_of_the_code_class_never_runs_its_code_in_the_host(sb: Sandbox) -> None:
    """A run keeping variables ends with a result, whatever its classes: the host never compares them."""
    result = await run(sb, EXIT_IN_EQ, variables={})
    assert result.error is not None
    assert (result.error.kind, result.error.type_name) == ("forbidden", "ForbiddenError")
    kept = await run(sb, "class C:\n    pass\nc = C()\nn = 1\nf = len", variables={})
    assert kept.error is None, kept.error
    assert kept.variables == {"n": 1}
    assert kept.dropped_variables == {
        "C": "a class: define it again",
        "c": "c is a C, not JSON data (use dict, list, str, int, float, bool, None)",
        "f": "a function: define it again",
    }


@pytest.mark.parametrize("isolation", ["inline"])
async def test_the_inline_host_own_lookups_are_untouched_by_the_plants(sb: Sandbox) -> None:
    """After every plant, the inline host's `re`, `urlsplit`, ABC and typing answers are CPython's."""
    for plant in (RE_PLANT, URLSPLIT_PLANT, ABC_PLANT, TYPING_PLANT):
        await run(sb, plant)
    assert re.fullmatch(_TARGET, "../../etc/passwd") is None
    assert urllib.parse.urlsplit(_URL).netloc == "api.internal.example"
    assert not isinstance(5, collections.abc.Iterable)
    assert typing.get_args(typing.Optional[list[int]]) == (list[int], type(None))  # noqa: UP045  # the cached form
