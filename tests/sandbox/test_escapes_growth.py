"""Red team, growth: one call that copies or grows a collection past `max_size`, and iteration that never ticks.

Each case is the smallest bomb that passes the cap (`QUICK`'s `max_size` is 1,000,000), so an unguarded one only
costs the test some megabytes; with the real default cap and a bigger count each is a host OOM or hang inline.
The refusal names the size it would have reached and the limit.
"""

from __future__ import annotations

from redteam_kit import Value, case, guard, limit, names_are_unique, raised, runs

from sandbox import Limits

SIZE = "this would create "
LIMIT = "the limit is 1,000,000"
BUILT = "return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'"
"""The payload's last line: the bomb got through if the value was built."""
LONG = Limits(timeout=30.0, operations=10_000_000, max_size=1_000_000)
"""Enough operations to pull a million items one tick at a time; the wall clock is far away."""


GREW = limit("memory", "this would create a string of length of about", "MemoryError")
"""A transform's result measured past the cap (its size is where the measuring stopped)."""
BUDGET_SPENT = limit("timeout", "the code used its whole operation budget (an endless loop?)")


def raised_type(name: str) -> object:
    """The ticking iterator's class refused to make one (as CPython refuses for its iterator types)."""
    return raised("TypeError", f"cannot create '{name}' instances")


def not_made(name: str) -> object:
    """The class `type(x)` answers for a run's lazy builtin refused to make an unticked one."""
    return guard(f"`type(x)(...)` cannot make a {name!r} in the sandbox; call `{name}(...)`")


def sized(what: str) -> object:
    """The size guard refused the value before building it."""
    return limit("memory", f"{SIZE}{what}; {LIMIT}", "MemoryError")


CASES = [
    # -- itertools' constructors copy their iterable into a tuple in C, and size their index arrays by `r` --------
    *(
        case(
            f"itertools_{name}_copies_a_huge_range",
            f"import itertools\nx = range(2_000_000)\nit = itertools.{name}(x, 1)\n{BUILT}",
            sized("a collection of length of about 2,000,000"),
        )
        for name in ("permutations", "combinations", "combinations_with_replacement")
    ),
    *(
        case(
            f"itertools_{name}_with_a_huge_r",
            f"import itertools\nx = range(2_000_000)\nit = itertools.{name}('ab', len(x))\n{BUILT}",
            sized("a tuple of length of about 2,000,000"),
        )
        for name in ("permutations", "combinations", "combinations_with_replacement")
    ),
    case(
        "itertools_permutations_copies_an_endless_iterator",
        "import itertools\nit = itertools.permutations(itertools.count(), 1)\nreturn 1",
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "itertools_product_copies_a_long_iterator",
        "import itertools\nit = itertools.product(iter(range(2_000_000)))\nx = range(2_000_000)\n" + BUILT,
        sized("a collection of length of about 1,000,001"),
        limits=LONG,
    ),
    # -- a collection built from a lazy iterable that gives more than the cap ---------------------------------
    *(
        case(
            f"{kind}_of_an_endless_iterator",
            f"import collections, itertools\nx = {kind}(itertools.count())\n{BUILT}",
            sized("a collection of length of about 1,000,001"),
            limits=LONG,
        )
        for kind in ("list", "tuple", "set", "frozenset", "sorted", "collections.deque", "collections.Counter")
    ),
    case(
        "list_of_a_long_generator",
        f"def g():\n    while True:\n        yield 0\nx = list(g())\n{BUILT}",
        sized("a collection of length of about 1,000,001"),
        limits=LONG,
    ),
    case(
        "bytes_of_an_endless_iterator",
        f"import itertools\nx = bytes(itertools.repeat(0))\n{BUILT}",
        sized("a collection of length of about 1,000,001"),
        limits=LONG,
    ),
    case(
        "deque_with_a_small_maxlen_consumes_an_iterator",
        "import collections, itertools\nit = itertools.islice(itertools.count(), 1_500_000)\n"
        "return list(collections.deque(it, maxlen=2))",
        Value([1_499_998, 1_499_999]),
        limits=LONG,
    ),
    case(
        "deque_with_a_small_maxlen_of_a_huge_range",
        f"import collections\nx = range(2_000_000)\nd = collections.deque(x, maxlen=2)\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    # -- growing methods: one call adds a whole range (or a sized collection) -----------------------------------
    case(
        "dict_fromkeys_of_a_huge_range",
        f"x = dict.fromkeys(range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "dict_fromkeys_on_an_instance_and_a_subclass",
        "class D(dict):\n    pass\nx = D().fromkeys(range(2_000_000), 0)\n" + BUILT,
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "list_extend_doubling",
        f"x = [0] * 600_000\nx.extend(x)\n{BUILT}",
        sized("a collection of length of about 1,200,000"),
    ),
    case(
        "list_extend_unbound_with_a_range",
        f"x = []\nlist.extend(x, range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "list_iadd_of_a_range",
        f"x = []\nx += range(2_000_000)\n{BUILT}",
        sized("a sequence of length of about 2,000,000"),
    ),
    case(
        "deque_extend_of_a_range",
        f"import collections\nx = collections.deque()\nx.extend(range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "deque_extendleft_of_a_range",
        f"import collections\nx = collections.deque()\nx.extendleft(range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "deque_iadd_of_a_range",
        f"import collections\nx = collections.deque()\nx += range(2_000_000)\n{BUILT}",
        sized("a sequence of length of about 2,000,000"),
    ),
    case(
        "counter_update_of_a_range",
        f"import collections\nx = collections.Counter()\nx.update(range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "userlist_extend_of_a_range",
        f"import collections\nx = collections.UserList()\nx.extend(range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "set_update_of_a_range",
        f"x = set()\nx.update(range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "set_union_of_a_range",
        f"x = set().union([1], range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,001"),
    ),
    # -- a replacement made at every (empty) match ---------------------------------------------------------------
    *(
        case(
            f"re_{what}_inserts_past_the_cap",
            f"import re\ns = 'x' * 1000\nx = {call}\n{BUILT}",
            sized(f"a string of length of about {size}"),
        )
        for what, call, size in (
            ("subn", "re.subn('', '#' * 2000, s)[0]", "1,001,000"),
            ("compiled_sub", "re.compile('x*?').sub('#' * 2000, s)", "1,001,000"),
            ("sub_with_group_references", r"re.sub('(x*)', r'\1\1' * 300, 'x' * 2000)", "1,203,200"),
        )
    ),
    # -- unpacking a range (or a collection) into a display or a call -------------------------------------------
    *(
        case(
            f"star_unpacking_{what}",
            f"x = range(2_000_000)\ny = {code}\n{BUILT}",
            sized("a collection of length of about 2,000,000"),
        )
        for what, code in (
            ("into_a_tuple", "(*x,)"),
            ("into_a_set", "{*x}"),
            ("into_a_call", "max(*x)"),
        )
    ),
    case(
        "star_unpacking_doubles_at_most_once",
        f"x = [*range(600_000), *range(600_000)]\ny = [*x, *x]\n{BUILT}",
        sized("a collection of length of about 1,200,000"),
    ),
    # -- methods that make as much as asked: extendable hashes, date formats ----------------------------------------
    *(
        case(
            f"hashlib_{name}_{method}_of_a_huge_{'keyword' if '=' in call else 'length'}",
            f"import hashlib\nx = hashlib.new('{name}').{method}({call})\n{BUILT}",
            sized(f"bytes of length of about {size}"),
        )
        for name in ("shake_128", "shake_256")
        for method, call, size in (
            ("digest", "2_000_000", "2,000,000"),
            ("hexdigest", "600_000", "1,200,000"),
            ("digest", "length=2_000_000", "2,000,000"),
        )
    ),
    case(
        "hashlib_digest_length_from_a_lying_index",
        "class N:\n    n = 0\n    def __index__(self):\n        N.n += 1\n        return 8 if N.n == 1 else 2_000_000\n"
        "import hashlib\nreturn len(hashlib.new('shake_128').digest(N()))",
        Value(8),
    ),
    *(
        case(
            f"strftime_{what}_expands_past_the_cap",
            f"import datetime, time\nf = '%c' * 20_000\nx = {call}\n{BUILT}",
            sized("a string of length of about 2,040,000"),
        )
        for what, call in (
            ("time", "time.strftime(f)"),
            ("time_with_a_struct", "time.strftime(f, time.gmtime(0))"),
            ("date", "datetime.date(2020, 1, 2).strftime(f)"),
            ("datetime_unbound", "datetime.datetime.strftime(datetime.datetime(2020, 1, 2), f)"),
            ("datetime_keyword", "datetime.datetime(2020, 1, 2).strftime(format=f)"),
            ("time_of_day", "datetime.time(1, 2).strftime(f)"),
            ("format", "format(datetime.date(2020, 1, 2), f)"),
            ("an_f_string", 'f"{datetime.date(2020, 1, 2):{f}}"'),
        )
    ),
    case(
        "strftime_keeps_its_values",
        """
        import datetime, time
        d = datetime.datetime(2020, 1, 2, 3, 4, 5)
        day = datetime.date(2021, 5, 6)
        return [d.strftime('%Y-%m-%d %H:%M'), time.strftime('%Y', time.gmtime(0)), day.strftime('%d/%m'), f"{day:%b}"]
        """,
        Value(["2020-01-02 03:04", "1970", "06/05", "May"]),
    ),
    # -- transforms that make their input many times longer, applied a few times --------------------------------
    *(
        case(
            f"{what}_grows_a_string_past_the_cap",
            f"{setup}\ns = {start}\nfor i in range(8):\n    s = {step}\nx = s\n{BUILT}",
            GREW,
        )
        for what, setup, start, step in (
            ("repr", "", "'\\\\' * 100_000", "repr(s)"),
            ("repr_of_bytes", "", "b'\\\\' * 100_000", "repr(s).encode()"),
            ("ascii", "", "chr(0x1F600) * 100_000", "ascii(s)"),
            ("an_f_string_conversion", "", "'\\\\' * 100_000", 'f"{s!r}"'),
            ("an_f_string_ascii_conversion", "", "'\\\\' * 100_000", 'f"<{s!a:>3}>"'),
            ("str_format_conversion", "", "'\\\\' * 100_000", "'{!r}'.format(s)"),
            ("json_dumps", "import json", "'\\\\' * 100_000", "json.dumps(s)"),
            (
                "json_dumps_non_ascii",
                "import json",
                "chr(0x1F600) * 100_000",
                "json.dumps(s).encode().decode('unicode_escape')",
            ),
            ("nfkd", "import unicodedata", "chr(0xFDFA) * 60_000", "unicodedata.normalize('NFKD', s)"),
            ("quote", "import urllib.parse", "'%' * 100_000", "urllib.parse.quote(s)"),
            ("quote_plus", "import urllib.parse", "chr(0x1F600) * 30_000", "urllib.parse.quote_plus(s)"),
        )
    ),
    case(
        "json_dumps_indent_past_the_cap",
        f"import json\nx = json.dumps([[[1]]], indent=500_000)\n{BUILT}",
        GREW,
    ),
    case(
        "json_dumps_indent_of_many_items_past_the_cap",
        f"import json\nx = json.dumps([[0] * 1000] * 200, indent=' ' * 10)\n{BUILT}",
        GREW,
    ),
    # -- iteration no loop of the code's ticks: a C consumer driving `yield from` ---------------------------------
    *(
        case(
            f"yield_from_{what}_driven_by_a_c_consumer",
            f"""
            import collections
            def g():
                yield from {source}
            collections.deque(g(), maxlen=0)
            return 'PW' + 'NED'
            """,
            limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        )
        for what, source in (
            ("a_range", "range(3_000_000)"),
            ("a_list", "[0] * 900_000"),
            ("a_string", "'x' * 900_000"),
            ("a_dict_view", "dict.fromkeys(range(900_000)).keys()"),
            ("a_nested_generator", "(lambda: (yield from range(3_000_000)))()"),
        )
    ),
    *(
        case(
            f"the_type_of_{what}_makes_no_unticked_iterator",
            f"""
            import collections, itertools
            it = type({made})({args})
            collections.deque(it, maxlen=0)
            return 'PW' + 'NED'
            """,
            expected,
        )
        for what, made, args, expected in (
            ("iter", "iter([])", "range(3_000_000), range(1, 3_000_000)", raised_type("list_iterator")),
            ("reversed", "reversed('ab')", "range(3_000_000)", not_made("reversed")),
            ("itertools_count", "itertools.count()", "range(3_000_000), range(1, 3_000_000)", raised_type("count")),
            ("map", "map(abs, [])", "abs, range(3_000_000)", not_made("map")),
            ("filter", "filter(None, [])", "None, range(1, 3_000_000)", not_made("filter")),
            ("zip", "zip()", "range(3_000_000)", not_made("zip")),
            ("enumerate", "enumerate([])", "range(3_000_000)", not_made("enumerate")),
        )
    ),
    *(
        case(
            f"subclassing_{what}_is_refused",
            f"class M({base}):\n    pass\nreturn 1",
            raised("TypeError", f"`{name}` cannot be subclassed in the sandbox; wrap it in a class of yours"),
        )
        for what, base, name in (("map", "map", "map"), ("the_type_of_a_map", "type(map(abs, []))", "map"))
    ),
]


test_growth_is_bounded = runs(CASES, "Each copy or growth past the size cap is refused before it is built.")
test_case_names_are_unique = names_are_unique(CASES)
