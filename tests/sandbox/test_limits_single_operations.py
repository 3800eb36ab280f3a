"""Limit bypasses: single operations past `max_size`, work past the clock, results too big.

Each case is one finding, run in both isolations with `max_size` at 1,000,000 by `redteam_kit`, and names the
limit that stops it: the exact error kind and exception type, and the message's words. A finding not closed yet is
a strict xfail with the reason beside it; inline, those are a host DoS (docs/security.md's limits section says inline is
for trusted code).
"""

from __future__ import annotations

import pytest
from redteam_kit import Refused, Value, case, guard, limit, names_are_unique, raised, runs

from sandbox import Limits, Sandbox
from sandbox.limits import MARKER_SLACK, output_message

BOTH = pytest.mark.parametrize("isolation", ["inline", "process"])
CAP = Limits(timeout=5.0, max_size=1_000_000)
LIMIT = "the limit is 1,000,000"


LIAR = (
    "class B(int):\n    def __gt__(self, other):\n        return False\n"
    "    def __radd__(self, other):\n        return 0\n"
)
"""An int subclass whose comparisons and additions lie: a guard must convert it with `operator.index` first."""
SIZE = "this would create "


def sized(message: str) -> Refused:
    """The size guard refused the value before building it (`message` names the size and the limit)."""
    return limit("memory", message, "MemoryError")


CASES = [
    case(
        "pow with a modulus and a huge exponent",
        "return pow(3, (1 << 200000) - 1, (1 << 60000) + 1) % 10",
        sized("pow(x, y, m) with a 200,000-bit y and a 60,001-bit m is too much work for one operation"),
        limits=CAP,
    ),
    case(
        "a %-width after a mapping key",
        'return len("%(a)20000000s" % {"a": "x"})',
        sized(f"{SIZE}a formatted field of width of about 20,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "a negative * width",
        'return len("%*s" % (-20000000, "x"))',
        sized(f"{SIZE}a formatted field of width of about 20,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "a bytes %-width after a mapping key",
        'return len(b"%(a)20000000s" % {b"a": b"x"})',
        sized(f"{SIZE}a formatted field of width of about 20,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "math.prod",
        "import math\nreturn math.prod([1 << 400_000] * 3).bit_length()",
        sized(f"{SIZE}an int with a bit length of about 1,200,002; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "math.lcm",
        "import math\nreturn math.lcm((1 << 600_000) + 1, (1 << 600_000) + 3).bit_length()",
        sized(f"{SIZE}an int with a bit length of about 1,200,002; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "Fraction times Fraction",
        "from fractions import Fraction\nf = Fraction(1 << 600_000, 3)\nreturn (f * f).numerator.bit_length()",
        sized(f"{SIZE}a fraction with a bit length of about 1,200,002; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "sum of lists",
        "return len(sum([[0] * 400_000] * 25, []))",
        sized(f"{SIZE}a sequence of length of about 1,200,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "sum of tuples",
        "return len(sum([(0,) * 400_000] * 12, ()))",
        sized(f"{SIZE}a sequence of length of about 1,200,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "operator.add",
        "import operator\ns = 'x' * 400_000\nfor i in range(5):\n    s = operator.add(s, s)\nreturn len(s)",
        sized(f"{SIZE}a sequence of length of about 1,600,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "operator.concat",
        "import operator\ns = b'x' * 400_000\nfor i in range(5):\n    s = operator.concat(s, s)\nreturn len(s)",
        sized(f"{SIZE}a sequence of length of about 1,600,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "str.replace with a lying count",
        "class C:\n    def __ge__(self, o):\n        return True\n    def __index__(self):\n        return -1\n"
        "return len(('a' * 2000).replace('a', 'b' * 1000, C()))",
        sized(f"{SIZE}a string of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "str.expandtabs with a lying tabsize",
        "class T:\n    def __gt__(self, o):\n        return True\n    def __rmul__(self, o):\n        return 0\n"
        "    def __index__(self):\n        return 1000\nreturn len(('\\t' * 2000).expandtabs(T()))",
        sized(f"{SIZE}a string of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "** with a lying int subclass",
        LIAR + "return (3 ** B(2000000)).bit_length()",
        sized(f"{SIZE}an int with a bit length of about 4,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "<< with a lying int subclass",
        LIAR + "return (1 << B(20000000)).bit_length()",
        sized(f"{SIZE}an int with a bit length of about 20,000,001; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "math.factorial with a lying int subclass",
        LIAR + "import math\nreturn math.factorial(B(200000)).bit_length()",
        sized(f"{SIZE}an int with a bit length of about 3,521,928; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "random.getrandbits with a lying int subclass",
        LIAR + "import random\nreturn random.getrandbits(B(20000000)).bit_length()",
        sized(f"{SIZE}an int with a bit length of about 20,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "random.randbytes with a lying int subclass",
        LIAR + "import random\nreturn len(random.randbytes(B(20000000)))",
        sized(f"{SIZE}bytes of length of about 20,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "a * width from a lying int subclass",
        LIAR + "return len('%*s' % (B(20000000), 'x'))",
        sized(f"{SIZE}a formatted field of width of about 20,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "+ of str subclasses with a lying len",
        "class S(str):\n    def __len__(self):\n        return 0\ns = 'x' * 600000\nreturn len(str(S(s) + S(s)))",
        sized(f"{SIZE}a sequence of length of about 1,200,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "a Fraction too large to write",
        "from fractions import Fraction\nreturn Fraction(10**5000, 3)",
        raised("TypeError", "the returned value is a Fraction of 16,610 bits, too large to write out"),
        limits=CAP,
    ),
    case(
        "the returned value: one big string many times",
        "s = 'x' * 1_000_000\nreturn [s] * 300",
        limit("result_limit", "the returned value is more than 1,048,576 bytes as JSON; the limit is 1,048,576"),
        limits=CAP,
    ),
    case(
        "str.translate",
        'return len(("a" * 2000).translate({97: "b" * 1000}))',
        sized(f"{SIZE}a string of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "unbound int.to_bytes",
        'return len(int.to_bytes(0, 2000000, "big"))',
        sized(f"{SIZE}bytes of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "repr doubling",
        "s = '\\\\' * 200000\nfor i in range(5):\n    s = repr(s)\nreturn len(s)",
        sized(f"{SIZE}a string of length of about"),
        limits=CAP,
    ),
    case(
        "deque of a range",
        "import collections\nreturn len(collections.deque(range(2000000)))",
        sized(f"{SIZE}a collection of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "Counter of a range",
        "import collections\nreturn len(collections.Counter(range(2000000)))",
        sized(f"{SIZE}a collection of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "product repeated",
        "import itertools\nreturn len(list(itertools.product('ab', repeat=2000000)))",
        sized(f"{SIZE}a collection of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "Decimal precision",
        "import decimal\ndecimal.getcontext().prec = 2 * 10**6\nreturn len(str(decimal.Decimal(1) / 7))",
        sized(f"{SIZE}a decimal with a precision of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "Decimal context exponent",
        "import decimal\nctx = decimal.Context(Emax=10**7)\nreturn str(ctx.power(10, 3000000))",
        sized(f"{SIZE}a decimal with an exponent of about 10,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "Decimal context subclass",
        "import decimal\nclass C(decimal.Context):\n    pass\nreturn str(C(prec=2000000))",
        guard("`decimal.Context` cannot be subclassed in the sandbox"),
        limits=CAP,
    ),
    *(
        case(
            f"a Decimal written with a huge exponent: {what}",
            f"import decimal\n{code}",
            sized(f"{SIZE}a decimal with an exponent of about 3,000,000; {LIMIT}"),
            limits=CAP,
        )
        for what, code in (
            ("int", "return int(decimal.Decimal('1e3000000')).bit_length()"),
            ("format f", "return len(format(decimal.Decimal('1e-3000000'), 'f'))"),
            ("str", "return str(decimal.Decimal('-1e3000000'))"),
            ("a digit tuple", "return int(decimal.Decimal((0, (1,), 3000000))).bit_length()"),
            ("type(d)", "D = type(decimal.Decimal(1))\nreturn int(D('1e3000000')).bit_length()"),
            ("d.__class__", "D = decimal.Decimal(1).__class__\nreturn int(D('1e3000000')).bit_length()"),
            ("a subclass", "class M(decimal.Decimal):\n    pass\nreturn int(M('1e3000000')).bit_length()"),
            ("json parse_float", "import json\nreturn json.loads('[1e3000000]', parse_float=decimal.Decimal)"),
            ("map", "return [int(d) for d in map(decimal.Decimal, ['1.5', '1e3000000'])]"),
            ("sorted key", "return sorted(['1.5', '1e3000000'], key=decimal.Decimal)"),
        )
    ),
    case(
        "Decimal context defaults under a small cap",
        "import decimal\nd = decimal.Decimal('1e999')\nc = decimal.getcontext()\nn = decimal.Context()\n"
        "return [str(d), c.Emax, c.Emin, n.Emax, n.Emin, n.prec, decimal.Context(prec=500).prec]",
        Value(["1E+999", 1000, -1000, 1000, -1000, 28, 500]),
        limits=Limits(timeout=5.0, max_size=1000),
    ),
    case(
        "a Decimal past a small cap",
        "import decimal\nreturn str(decimal.Decimal(1).scaleb(1001))",
        raised("Overflow", "[<class 'decimal.Overflow'>]"),
        limits=Limits(timeout=5.0, max_size=1000),
    ),
    case(
        "itertools.accumulate of strings",
        "import itertools\nlast = None\nfor last in itertools.accumulate(itertools.repeat('x' * 400000, 30)):\n"
        "    pass\nreturn len(last)",
        sized(f"{SIZE}a sequence of length of about 1,200,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "UserList times a count",
        "import collections\nreturn len(collections.UserList([0] * 1000) * 2000)",
        sized(f"{SIZE}a sequence of length of about 2,000,000; {LIMIT}"),
        limits=CAP,
    ),
    case(
        "UserList doubling",
        "import collections\nu = collections.UserList([0] * 1000)\nfor i in range(11):\n    u = u + u\nreturn len(u)",
        sized(f"{SIZE}a sequence of length of about 1,024,000; {LIMIT}"),
        limits=CAP,
    ),
]


test_each_finding_is_stopped_by_the_limit_it_bypassed = runs(
    CASES, "Each finding ends with the exact kind and exception type, and the message names the limit it bypassed."
)
test_case_names_are_unique = names_are_unique(CASES)


@BOTH
async def test_printing_one_big_string_many_times_keeps_only_what_fits(sb: Sandbox) -> None:
    """`print(*[s] * 300)` stops at the flood limit without joining 300 copies first, its head kept."""
    result = await sb.run("s = 'x' * 1_000_000\nprint(*([s] * 300))", limits=CAP)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("output_limit", output_message(CAP.flood) + " (line 2)")
    assert result.stdout.startswith("x" * (CAP.output - CAP.output // 2) + "\n[... ")
    assert len(result.stdout) <= CAP.output + MARKER_SLACK


@BOTH
async def test_a_kept_variable_holding_one_big_string_many_times_is_dropped_unmeasured(sb: Sandbox) -> None:
    """a kept list of 300 references to a 1 MB string is refused by its lower bound, never written out."""
    result = await sb.run("s = 'x' * 1_000_000\nkeep = [s] * 300\nsmall = 1", limits=CAP, variables={})
    assert result.error is None, result.error
    assert result.variables == {"small": 1}
    assert result.dropped_variables == {
        "keep": "too large: over the 262,144 bytes of JSON left for variables",
        "s": "too large: 1,000,002 bytes of JSON, over the 262,144 left for variables",
    }


@BOTH
async def test_a_fence_line_of_many_spaces_is_read_in_one_pass(sb: Sandbox) -> None:
    """a backtick line of 60,000 spaces is no fence; the run is a syntax error at once, not a hang."""
    result = await sb.run("```" + " " * 60_000 + "`", limits=CAP)
    assert result.error is not None
    assert result.error.kind == "syntax"


@BOTH
@pytest.mark.xfail(
    strict=True,
    reason="stdlib code written in Python (difflib) runs unticked: only the wall clock stops it, "
    "and inline, nothing inside one call (docs/security.md, limits)",
)
async def test_stdlib_code_written_in_python_counts_against_the_operation_budget(sb: Sandbox) -> None:
    """difflib's loops should spend the operation budget like the code's own loops do."""
    code = (
        "import difflib\na = 'ab' * 300\nb = 'ba' * 300\n"
        "return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()"
    )
    result = await sb.run(code, limits=Limits(timeout=5.0, operations=1_000))
    assert result.error is not None
    assert result.error.kind == "timeout"


@BOTH
async def test_deepcopy_of_a_tuple_shared_many_times_copies_each_tuple_once(sb: Sandbox) -> None:
    """2**22 paths through 23 tuples: `copy.deepcopy` visits each tuple once and returns it unchanged."""
    code = "import copy\nt = (0,)\nfor i in range(22):\n    t = (t, t)\nreturn copy.deepcopy(t) is t"
    result = await sb.run(code, limits=CAP)
    assert (result.value, result.error) == (True, None)
