"""Red team, resource exhaustion and sizes.

Endless loops end on the operation budget, long C-level work on the wall clock, huge values on the size guards
(before they are built), the rest on the worker's address-space limit; recursion, nesting, results and source have
their own caps. Each case asserts the limit kind and the guard's message, never a wall time.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from redteam_kit import (
    BIG,
    BUDGET,
    CALLS,
    PROCESS,
    RAW_MEMORY,
    RESULT,
    WALL,
    WALL_UNSIZED,
    Value,
    case,
    limit,
    names_are_unique,
    policy,
    raised,
    runs,
    syntax,
)

from sandbox import Limits

SIZE_CAP = "the limit is 10,000,000"
"""The default `max_size`, in its refusal."""
TOO_BIG = limit("memory", "the limit is 1,000,000", "MemoryError")
"""The size guard refused the value before it was built (`QUICK`'s `max_size`)."""

BUDGET_SPENT = limit("timeout", "the code used its whole operation budget (an endless loop?)")
"""Work driven in C over a lazy iterator: the iterator takes a tick per item, so the budget ends it."""

CASES = [
    case(
        "infinite_loop",
        """
        while True:
            pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "infinite_loop_against_the_wall_clock",
        """
        while True:
            x = 1
        """,
        limit("timeout", "the code ran past its 0.5 s time limit"),
        limits=WALL,
    ),
    case(
        "infinite_iterator_loop",
        """
        for i in iter(int, 1):
            pass
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "infinite_comprehension",
        """
        import itertools
        return [x for x in itertools.count()]
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "infinite_generator_expression_in_any",
        """
        import itertools
        return any(x < 0 for x in itertools.count())
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "infinite_async_sleep_zero_loop",
        """
        import asyncio
        while True:
            await asyncio.sleep(0)
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
        limits=Limits(timeout=10.0, operations=30_000),  # a small budget: ends in well under a second, loaded or not
    ),
    case(
        "sleep_past_the_timeout",
        """
        import asyncio
        await asyncio.sleep(100)
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "gathered_sleeps",
        """
        import asyncio
        await asyncio.gather(*[asyncio.sleep(100) for i in range(50)])
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "wait_for_with_a_long_timeout",
        """
        import asyncio
        await asyncio.wait_for(asyncio.sleep(100), timeout=1000)
        """,
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "host_function_that_never_returns",
        "await hang()",
        limit("timeout", "the code ran past its 0.5 s time limit waiting on tools or sleeps"),
        limits=WALL,
    ),
    case(
        "string_repetition_guard",
        """
        x = '#' * 2_000_000
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "list_repetition_guard",
        """
        x = [0] * 2_000_000
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "repetition_with_names_guard",
        """
        n = 2_000_000
        s = '#'
        x = n * s
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "shift_guard",
        """
        x = 1 << 2_000_000
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,000,001", "MemoryError"),
    ),
    case(
        "power_guard",
        """
        x = 10 ** 700_000
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,800,000", "MemoryError"),
    ),
    case(
        "pow_builtin_guard",
        """
        x = pow(10, 700_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,800,000", "MemoryError"),
    ),
    case(
        "repeated_squaring_guard",
        """
        n = 10
        for i in range(30):
            n = n * n
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 1,741,648", "MemoryError"),
    ),
    case(
        "augmented_squaring_guard",
        """
        n = 10 ** 1000
        for i in range(12):
            n *= n
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 1,700,828", "MemoryError"),
    ),
    case(
        "augmented_string_doubling_guard",
        """
        s = '#'
        for i in range(22):
            s += s
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 1,048,576", "MemoryError"),
    ),
    case(
        "list_doubling_guard",
        """
        l = [0]
        for i in range(22):
            l = l + l
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 1,048,576", "MemoryError"),
    ),
    case(
        "factorial_guard",
        """
        import math
        x = math.factorial(150_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,579,190", "MemoryError"),
    ),
    case(
        "percent_width_guard",
        """
        x = '%2000000d' % 1
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "ljust_guard",
        """
        x = '#'.ljust(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "center_guard",
        """
        x = '#'.center(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "zfill_guard",
        """
        x = '1'.zfill(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "fstring_width_guard",
        """
        x = f'{1:>{2_000_000}}'
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "fstring_literal_width_guard",
        """
        x = f'{1:>2000000}'
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "format_nested_width_guard",
        """
        x = '{:>{}}'.format(1, 2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "format_literal_width_guard",
        """
        x = '{:>2000000}'.format(1)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "format_builtin_width_guard",
        """
        x = format(1, '>2000000')
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "replace_amplification_guard",
        """
        x = ('#' * 1000).replace('#', '#' * 2000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "expandtabs_guard",
        "x = '\\t'.expandtabs(2_000_000)\nreturn 'PW' + 'NED'\n",
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "join_guard",
        """
        x = ' '.join(['#' * 1000] * 2000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 2,001,999", "MemoryError"),
    ),
    case(
        "bytes_constructor_guard",
        """
        x = bytes(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create bytes of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "bytearray_constructor_guard",
        """
        x = bytearray(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create bytes of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "range_list_guard",
        """
        x = list(range(2_000_000))
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a collection of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "big_power_bomb",
        """
        x = 10**10**8
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 400,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_pow_bomb",
        """
        x = pow(10, 10**8)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 400,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_factorial_bomb",
        """
        import math
        x = math.factorial(10**7)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 232,534,966", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_string_repetition_bomb",
        """
        x = 'x' * 10**10
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 10,000,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_list_repetition_bomb",
        """
        x = [0] * 10**10
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 10,000,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_shift_bomb",
        """
        x = 1 << 10**10
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 10,000,000,001", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_ljust_bomb",
        """
        x = 'x'.ljust(10**10)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 10,000,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_center_bomb",
        """
        x = 'x'.center(10**10)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 10,000,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_fstring_width_bomb",
        """
        x = f'{1:>{10**10}}'
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 10,000,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "big_format_width_bomb",
        """
        x = '{:>{}}'.format(1, 10**10)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 10,000,000,000", "MemoryError"),
        limits=BIG,
        modes=PROCESS,
    ),
    case(
        "redos_nested_quantifier",
        """
        import re
        return re.match('(a+)+$', 'a' * 40 + 'b') is None
        """,
        limit("timeout", "the code ran past its 0.5 s time limit in one long operation (a slow regular expression?)"),
        limits=WALL,
        modes=PROCESS,
        slow=True,
    ),
    case(
        "redos_alternation",
        """
        import re
        return re.search('^(a|aa)+$', 'a' * 60 + 'b') is None
        """,
        limit("timeout", "the code ran past its 0.5 s time limit in one long operation (a slow regular expression?)"),
        limits=WALL,
        modes=PROCESS,
        slow=True,
    ),
    case(
        "c_level_infinite_sum",
        """
        import itertools
        return sum(itertools.count())
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_infinite_deque_drain",
        """
        import collections, itertools
        collections.deque(itertools.count(), maxlen=0)
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_list_of_an_endless_iterator",
        """
        import itertools
        return list(itertools.count())
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_filter_over_an_endless_callable_iterator",
        """
        for x in filter(None, iter(int, 1)):
            pass
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_filter_over_a_huge_map",
        """
        for x in filter(str.isspace, map(str, range(10**18))):
            pass
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_max_over_an_endless_zip",
        """
        import itertools
        return max(zip(itertools.cycle([1]), itertools.repeat(2)))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_join_over_an_enumerate",
        """
        return ''.join(str(i) for i, _ in enumerate(iter(int, 1)) if i < 0)
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_all_over_reversed",
        """
        return all(reversed(range(1, 10**18)))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_islice_with_a_huge_start",
        """
        import itertools
        return next(itertools.islice(range(10**18), 10**17, None))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_filterfalse_over_a_range",
        """
        import itertools
        return next(itertools.filterfalse(bool, range(1, 10**18)))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_dropwhile_over_a_chain",
        """
        import itertools
        return next(itertools.dropwhile(bool, itertools.chain.from_iterable([range(1, 10**18)])))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_groupby_skipping_an_endless_group",
        """
        import itertools
        for key, group in itertools.groupby(itertools.repeat(1)):
            pass
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_sorted_over_a_starmap",
        """
        import itertools, operator
        return sorted(itertools.starmap(operator.add, itertools.product(range(10**5), repeat=2)))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_max_over_a_huge_range",
        """
        return max(range(10**18))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_sum_over_a_huge_range",
        """
        return sum(range(10**18))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_all_over_a_huge_range",
        """
        return all(range(1, 10**18))
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_min_over_a_huge_range_with_a_key",
        """
        return min(range(10**18), key=abs)
        """,
        BUDGET_SPENT,
    ),
    case(
        "unpacking_an_endless_callable_iterator_with_a_star",
        """
        a, *b = iter(int, 1)
        """,
        BUDGET_SPENT,
    ),
    case(
        "unpacking_an_endless_callable_iterator_with_a_star_in_a_for_target",
        """
        for a, *b in [iter(int, 1)]:
            pass
        """,
        BUDGET_SPENT,
    ),
    case(
        "nested_comprehension_over_short_ranges",
        """
        r = range(1000)
        return [0 for a in r for b in r for c in r for d in r if d < 0]
        """,
        BUDGET_SPENT,
    ),
    case(
        "comprehension_over_the_list_it_appends_to",
        """
        items = [0]
        add = items.append
        [add(0) for x in items]
        """,
        BUDGET_SPENT,
    ),
    case(
        "c_level_infinite_list",
        """
        import itertools
        return list(itertools.count())
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "bytearray_over_the_memory_limit",
        """
        x = bytearray(10**9)
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "growing_list_over_the_memory_limit",
        """
        l = []
        while True:
            l.append('#' * 10_000)
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "string_doubling_over_the_memory_limit",
        """
        s = '#'
        while True:
            s += s
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "list_extend_doubling_over_the_memory_limit",
        """
        l = [0]
        while True:
            l.extend(l)
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "deep_recursion",
        """
        def f(n):
            return f(n + 1)
        f(0)
        """,
        raised("RecursionError", "maximum recursion depth exceeded"),
    ),
    case(
        "deep_recursion_through_lambda",
        """
        f = lambda n: f(n + 1)
        f(0)
        """,
        raised("RecursionError", "maximum recursion depth exceeded"),
    ),
    case(
        "deep_recursion_through_repr",
        """
        class A:
            def __repr__(self):
                return repr(self)
        repr(A())
        """,
        # whether the Python call or C's repr check overflows first depends on the stack depth the run starts at
        raised("RecursionError", "maximum recursion depth exceeded"),
    ),
    case(
        "deep_recursion_through_getattr_hook",
        """
        class A:
            def __getattr__(self, name):
                return self.missing
        A().x
        """,
        raised("RecursionError", "maximum recursion depth exceeded"),
    ),
    case(
        "deep_recursion_through_yield_from",
        """
        def g():
            yield from g()
        next(g())
        """,
        raised("RecursionError", "maximum recursion depth exceeded"),
    ),
    case(
        "deep_async_recursion",
        """
        async def f(n):
            return await f(n + 1)
        await f(0)
        """,
        raised("RecursionError", "maximum recursion depth exceeded"),
    ),
    case(
        "deeply_nested_result",
        """
        x = []
        for i in range(10_000):
            x = [x]
        return x
        """,
        raised("TypeError", "is nested more than 100 levels deep"),
    ),
    case(
        "deeply_nested_dict_result",
        """
        x = {}
        for i in range(10_000):
            x = {'k': x}
        return x
        """,
        raised("TypeError", "is nested more than 100 levels deep"),
    ),
    case(
        "deeply_nested_argument",
        """
        x = []
        for i in range(10_000):
            x = [x]
        return await echo(x=x)
        """,
        raised("TypeError", "is nested more than 100 levels deep"),
    ),
    case(
        "deeply_nested_print",
        """
        x = []
        for i in range(100_000):
            x = [x]
        print(x)
        """,
        raised("RecursionError", "maximum recursion depth exceeded while getting the repr of an object"),
    ),
    case(
        "deeply_nested_json_dumps",
        """
        import json
        x = []
        for i in range(100_000):
            x = [x]
        return json.dumps(x)
        """,
        raised("RecursionError", "maximum recursion depth exceeded while encoding a JSON object"),
    ),
    case(
        "result_too_large",
        "return '#' * 900_000",
        limit("result_limit", "the returned value is 900,002 bytes as JSON"),
        limits=RESULT,
    ),
    case(
        "result_list_too_large",
        "return list(range(200_000))",
        limit("result_limit", "the returned value is 1,488,890 bytes as JSON"),
        limits=RESULT,
    ),
    case(
        "host_call_flood",
        """
        for i in range(2000):
            await echo(i=i)
        return 'PW' + 'NED'
        """,
        limit("call_limit", "the code made more than 1,000 tool calls"),
        limits=CALLS,
    ),
    case(
        "host_call_flood_under_gather",
        """
        import asyncio
        await asyncio.gather(*[echo(i=i) for i in range(2000)])
        return 'PW' + 'NED'
        """,
        limit("call_limit", "the code made more than 1,000 tool calls"),
        limits=CALLS,
    ),
    case(
        "source_over_the_limit",
        "x = 1\n" * 2000,
        policy("the code is 12,000 characters"),
        limits=Limits(timeout=5.0, source=1000),
    ),
    case(
        "unbalanced_parentheses",
        "(" * 10_000,
        syntax("SyntaxError: too many nested parentheses"),
    ),
    case(
        "deeply_nested_brackets",
        "x = " + "[" * 5000 + "]" * 5000,
        syntax("SyntaxError: too many nested parentheses"),
    ),
    case(
        "deeply_nested_calls",
        "x = " + "f(" * 5000 + ")" * 5000,
        syntax("SyntaxError: too many nested parentheses"),
    ),
    case(
        "long_unary_chain",
        "x = " + "-" * 100_000 + "1",
        syntax("the code cannot be parsed (MemoryError)"),
    ),
    case(
        "long_binary_chain",
        "x = 1" + " + 1" * 50_000,
        syntax("the code cannot be parsed (RecursionError)"),
    ),
    case(
        "deeply_nested_lambdas",
        "f = " + "lambda: " * 5000 + "0",
        syntax("the code cannot be parsed (MemoryError)"),
    ),
    case(
        "deeply_nested_blocks",
        "".join(" " * i + "if True:\n" for i in range(150)) + " " * 150 + "pass\n",
        syntax("SyntaxError: too many levels of indentation"),
    ),
    case(
        "huge_integer_literal",
        "x = " + "9" * 100_000,
        syntax("SyntaxError: Exceeds the limit (4300 digits) for integer string conversion: value has 100000 digits"),
    ),
    case(
        "shift_by_an_int_subclass",
        """
        class I(int):
            pass
        x = 1 << I(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,000,001", "MemoryError"),
    ),
    case(
        "power_of_int_subclasses",
        """
        class I(int):
            pass
        x = I(10) ** I(700_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,800,000", "MemoryError"),
    ),
    case(
        "random_getrandbits_guard",
        """
        import random
        x = random.getrandbits(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,000,000", "MemoryError"),
    ),
    case(
        "random_randbytes_guard",
        """
        import random
        x = random.randbytes(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create bytes of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "math_comb_guard",
        """
        import math
        x = math.comb(10**6, 5 * 10**5)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 9,965,784", "MemoryError"),
    ),
    case(
        "math_perm_guard",
        """
        import math
        x = math.perm(10**6)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 19,931,568", "MemoryError"),
    ),
    case(
        "percent_star_width_guard",
        """
        x = '%*d' % (2_000_000, 1)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "percent_star_precision_guard",
        """
        x = '%.*f' % (2_000_000, 1.0)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "bytes_percent_width_guard",
        """
        x = b'%2000000d' % 1
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "bytearray_ljust_guard",
        """
        x = bytearray(b'#').ljust(2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "int_to_bytes_guard",
        """
        x = (1).to_bytes(2_000_000, 'big')
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create bytes of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "operator_mul_guard",
        """
        import operator
        x = operator.mul('#', 2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "operator_pow_guard",
        """
        import operator
        x = operator.pow(10, 700_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,800,000", "MemoryError"),
    ),
    case(
        "operator_lshift_guard",
        """
        import operator
        x = operator.lshift(1, 2_000_000)
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create an int with a bit length of about 2,000,001", "MemoryError"),
    ),
    case(
        "tuple_of_range_guard",
        """
        x = tuple(range(2_000_000))
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a collection of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "sorted_range_guard",
        """
        x = sorted(range(2_000_000))
        return 'PW' + 'NED'
        """,
        limit("memory", "this would create a collection of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "comprehension_over_a_big_range",
        """
        x = [0 for i in range(2_000_000)]
        return 'PW' + 'NED'
        """,
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    case(
        "int_to_str_digit_limit",
        "return len(str(10**5000))",
        raised("ValueError", "Exceeds the limit (4300 digits) for integer string conversion"),
    ),
    case(
        "str_to_int_digit_limit",
        "return int('9' * 5000)",
        raised("ValueError", "Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits"),
    ),
    case(
        "pow_with_a_modulus",
        "return pow(3, 10**100, 10**9 + 7)",
        Value(9102203),
    ),
    case(
        "decimal_max_precision_division",
        """
        import decimal
        decimal.getcontext().prec = decimal.MAX_PREC
        x = decimal.Decimal(1) / 7
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "decimal_to_int_is_one_slow_c_call",
        """
        import decimal
        x = int(decimal.Decimal('1e3000000'))
        return 'PW' + 'NED'
        """,
        limit("timeout", "the code ran past its 0.5 s time limit in one long operation (a slow regular expression?)"),
        limits=WALL_UNSIZED,
        modes=PROCESS,
        slow=True,
    ),
    case(
        "join_of_an_infinite_map",
        """
        import itertools
        x = ''.join(map(str, itertools.count()))
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "userstring_repetition_bomb",
        """
        import collections
        x = collections.UserString('#') * 10**10
        return 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'collections' has no attribute 'UserString' in the sandbox"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "translate_expansion_bomb",
        """
        x = ('a' * 1000).translate({97: '#' * 10**7})
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "shake_digest_bomb",
        """
        import hashlib
        x = hashlib.new('shake_128').digest(10**10)
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "star_unpacked_range_bomb",
        """
        x = [*range(10**10)]
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "json_indent_bomb",
        """
        import json
        x = json.dumps([[[[1]]]], indent=10**9)
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "product_repeat_bomb",
        """
        import itertools
        x = itertools.product([0], repeat=10**10)
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "tee_bomb",
        """
        import itertools
        x = itertools.tee([1], 10**9)
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "re_sub_empty_match_bomb",
        """
        import re
        x = re.sub('', '#' * 10**5, 'x' * 10**5)
        return 'PW' + 'NED'
        """,
        limit("memory", "MemoryError", "MemoryError"),
        limits=RAW_MEMORY,
        modes=PROCESS,
    ),
    case(
        "size_guard_repetition_by_an_index_object",
        """
        class N:
            def __index__(self):
                return 2_000_000
        x = '#' * N()
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_repetition_by_an_int_subclass",
        """
        class I(int):
            pass
        x = '#' * I(2_000_000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_repetition_of_a_str_with_a_lying_len",
        """
        class S(str):
            def __len__(self):
                return 0
        x = str(S('#') * 2_000_000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_str_subclass_ljust",
        """
        class S(str):
            pass
        x = S('#').ljust(2_000_000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_str_subclass_percent",
        """
        class S(str):
            pass
        x = S('%2000000d') % 1
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_userstring_repetition",
        """
        import collections
        x = collections.UserString('#') * 2_000_000
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        raised("AttributeError", "module 'collections' has no attribute 'UserString' in the sandbox"),
    ),
    case(
        "size_guard_userstring_center",
        """
        import collections
        x = collections.UserString('#').center(2_000_000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        raised("AttributeError", "module 'collections' has no attribute 'UserString' in the sandbox"),
    ),
    case(
        "size_guard_bytearray_percent",
        """
        x = bytearray(b'%2000000d') % 1
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_ljust_width_with_a_lying_comparison",
        """
        class W:
            def __gt__(self, other):
                return False
            def __index__(self):
                return 2_000_000
        x = '#'.ljust(W())
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_replace_with_a_lying_len",
        """
        class S(str):
            def __len__(self):
                return 0
        x = ('#' * 1000).replace('#', S('#' * 2000))
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_join_with_a_lying_len",
        """
        class S(str):
            def __len__(self):
                return 0
        x = ''.join([S('#' * 1000)] * 2000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a string of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_int_subclass_to_bytes",
        """
        class I(int):
            pass
        x = I(1).to_bytes(2_000_000, 'big')
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create bytes of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_star_unpacked_range",
        """
        x = [*range(2_000_000)]
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_list_of_itertools_repeat",
        """
        import itertools
        x = list(itertools.repeat(0, 2_000_000))
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a repetition of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_deque_repetition",
        """
        import collections
        x = collections.deque([0]) * 2_000_000
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create a sequence of length of about 2,000,000", "MemoryError"),
    ),
    case(
        "size_guard_str_translate",
        """
        x = ('a' * 10).translate({97: '#' * 200_000})
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_re_sub_on_empty_matches",
        """
        import re
        x = re.sub('', '#' * 2000, 'x' * 1000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_textwrap_indent",
        (
            "import textwrap\nx = textwrap.indent('x\\n' * 1000, '#' * 2000)\n"
            "return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'"
        ),
        limit("memory", "this would create a string of length of about 2,004,000", "MemoryError"),
    ),
    case(
        "size_guard_json_dumps_indent",
        """
        import json
        x = json.dumps([[[1]]], indent=1_000_000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_shake_digest",
        """
        import hashlib
        x = hashlib.new('shake_128').digest(2_000_000)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_decimal_precision",
        """
        import decimal
        decimal.getcontext().prec = 2_000_000
        x = str(decimal.Decimal(1) / 7)
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_fraction_power_with_a_fraction_exponent",
        """
        from fractions import Fraction as Q
        x = range((Q(2) ** Q(2_000_000)).numerator.bit_length())
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        TOO_BIG,
    ),
    case(
        "size_guard_int_power_with_a_fraction_exponent",
        """
        from fractions import Fraction as Q
        x = range((3 ** Q(2_000_000)).bit_length())
        return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'
        """,
        limit("memory", "this would create an int with a bit length of about 4,000,000", "MemoryError"),
    ),
    case(
        "fraction_powers_keep_their_values",
        """
        from fractions import Fraction as Q
        return [str(Q(2, 3) ** Q(3)), str(2 ** Q(10)), str(Q(4) ** Q(1, 2)), str(Q(2) ** -2), str(Q(9, 4) ** 2)]
        """,
        Value(["8/27", "1024", "2.0", "1/4", "81/16"]),
    ),
    *(
        case(
            f"async_generator_finally_builds_{what}_past_max_size",
            f"""
            async def g():
                try:
                    yield 1
                finally:
                    print("closing")
                    x = {build}
                    print("built", len(x))
            it = g()
            await anext(it)
            return 1
            """,
            Value(1, stdout="closing\n"),
        )
        for what, build in (
            ("a_list", "list(range(5_000_000))"),
            ("a_tuple", "tuple(range(5_000_000))"),
            ("bytes", "bytes(5_000_000)"),
            ("a_sorted_list", "sorted(range(5_000_000))"),
        )
    ),
    case(
        "bytes_of_an_index_object_is_counted_once",
        """
        class N:
            calls = 0
            def __index__(self):
                N.calls += 1
                return 10 if N.calls == 1 else 5_000_000
        return len(bytes(N()))
        """,
        Value(10),
    ),
    case(
        "bytes_of_an_int_subclass_is_size_checked",
        """
        class I(int):
            pass
        return len(bytes(I(5_000_000)))
        """,
        limit("memory", "this would create bytes of length of about 5,000,000", "MemoryError"),
    ),
    case(
        "the_stand_in_checks_its_size",
        "return len(list(range(2_000_000)))",
        limit("memory", "this would create a collection of length of about 2,000,000", "MemoryError"),
    ),
    *(
        case(
            f"{name}_real_is_not_an_attribute",
            f"return len({name}.real(range(2_000_000)))",
            raised("AttributeError", f"type object '{name}' has no attribute 'real'"),
        )
        for name in ("list", "tuple", "set", "frozenset", "bytearray")
    ),
    case(
        "getattr_finds_no_real_either",
        "return len(getattr(list, 'real')(range(2_000_000)))",
        raised("AttributeError", "type object 'list' has no attribute 'real'"),
    ),
    case(
        "dir_lists_no_real",
        "return [n for n in dir(list) + dir(bytes) if 'real' in n]",
        Value([]),
    ),
    case(
        "subclasses_still_work",
        """
        class Stack(list):
            pass
        return isinstance(Stack([1]), list), len(Stack([1, 2]))
        """,
        Value([True, 2]),
    ),
    case(
        "str_times_huge",
        "'a' * (10**10)",
        limit("memory", "this would create a sequence of length of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "list_times_huge",
        "[0] * (10**10)",
        limit("memory", "this would create a sequence of length of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "pow_huge",
        "10 ** (10**10)",
        limit("memory", "this would create an int with a bit length of about 40,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "bytes_huge",
        "bytes(10**10)",
        limit("memory", "this would create bytes of length of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "join_huge",
        """
        x = 'a' * 1000000
        '-'.join([x] * 1000)
        """,
        limit("memory", "this would create a string of length of about 1,000,000,999", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "doubling_str",
        """
        x = 'a'
        for i in range(60):
            x += x
        """,
        limit("memory", "this would create a sequence of length of about 16,777,216", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "ljust_huge",
        "'a'.ljust(10**10)",
        limit("memory", "this would create a string of length of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "format_width_huge",
        "format(1, '10000000000')",
        limit("memory", "this would create a formatted field of width of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "fstring_width_huge",
        """
        x = 1
        f'{x:>10000000000}'
        """,
        limit("memory", "this would create a formatted field of width of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "percent_width_huge",
        "'%10000000000d' % 1",
        limit("memory", "this would create a formatted field of width of about 10,000,000,000", "MemoryError"),
        limits=BUDGET,
    ),
    case(
        "int_from_huge_str",
        "int('9' * 10000)",
        raised("ValueError", "Exceeds the limit (4300 digits) for integer string conversion: value has 10000 digits"),
        limits=BUDGET,
    ),
    case(
        "nested_repr_recursion",
        """
        x = []
        for i in range(100000):
            x = [x]
        len(repr(x))
        """,
        raised("RecursionError", "maximum recursion depth exceeded while getting the repr of an object"),
        limits=BUDGET,
    ),
    case(
        "percent_mapping_key_width_guard",
        "x = '%(a)2000000s' % {'a': 1}\nreturn 'PW' + 'NED'",
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    # `%`, `+`, `*` and `+=` meet their guard whatever the operands: a value that could grow, or lie about its type
    # or size, is checked.
    case(
        "fast_path_int_subclass_lies_about_its_bounds",
        """
        class Small(int):
            def __lt__(self, other):
                return True

            def __gt__(self, other):
                return True

        x = Small(1 << 600_000)
        return x * x
        """,
        limit("memory", "this would create an int with a bit length of about 1,200,002", "MemoryError"),
    ),
    case(
        "fast_path_small_int_times_a_name_holding_a_string",
        'n = 1_000_001\ns = "x"\nreturn n * s',
        limit("memory", "this would create a sequence of length of about 1,000,001", "MemoryError"),
    ),
    case(
        "fast_path_small_int_literal_times_a_list",
        "x = [0] * 600_000\nreturn len(x * 2)",
        limit("memory", "this would create a sequence of length of about 1,200,000", "MemoryError"),
    ),
    case(
        "fast_path_percent_template_in_a_name",
        't = "%2000000d"\nreturn t % 1',
        limit("memory", "this would create a formatted field of width of about 2,000,000", "MemoryError"),
    ),
    case(
        "fast_path_add_of_two_string_names",
        's = "x" * 600_000\nr = s + s\nreturn len(r)',
        limit("memory", "this would create a sequence of length of about 1,200,000", "MemoryError"),
    ),
    case(
        "fast_path_iadd_of_a_list_name",
        "t = [0] * 600_000\nt += t\nreturn len(t)",
        limit("memory", "this would create a sequence of length of about 1,200,000", "MemoryError"),
    ),
    case(
        "fast_path_iadd_once_the_int_became_a_list",
        """
        t = 0
        for step in range(3):
            t += [0] * 400_000 if step else 1
        """,
        raised("TypeError", "unsupported operand type(s) for +: 'int' and 'list'"),
    ),
    case(
        "fast_path_iadd_of_a_list_grown_in_a_loop",
        """
        t = [0]
        for step in range(30):
            t += t
        """,
        limit("memory", "this would create a sequence of length of about 1,048,576", "MemoryError"),
    ),
    case(
        "fast_path_off_under_a_size_cap_below_its_products",
        "i = 536_870_911\nreturn i * i",
        limit("memory", "this would create an int with a bit length of about 58; the limit is 50", "MemoryError"),
        limits=Limits(timeout=5.0, operations=300_000, max_size=50),
    ),
    case(
        "fast_path_float_literal_cannot_repeat_a_sequence",
        's = "x" * 10\nreturn s * 2.0',
        raised("TypeError", "can't multiply sequence by non-int of type 'float'"),
    ),
    case(
        "fast_path_number_literal_cannot_extend_a_list",
        "x = [0] * 10\nx += 1",
        raised("TypeError", "'int' object is not iterable"),
    ),
    case(
        "unpacking_an_endless_iterator_in_a_for_target_stops_at_once",
        """
        import itertools
        for a, b in [itertools.count()]:
            pass
        """,
        raised("ValueError", "too many values to unpack (expected 2)"),
    ),
    case(
        "unpacking_an_endless_iterator_in_an_assignment_stops_at_once",
        """
        import itertools
        a, (b, c) = 1, itertools.count()
        """,
        raised("ValueError", "too many values to unpack (expected 2)"),
    ),
]


test_resources_are_bounded = runs(CASES, "Each bomb is stopped by its limit, named in the error.")
test_case_names_are_unique = names_are_unique(CASES)


# -- inline memory past the size caps: run in a child whose address space is capped, so the host test survives ----

INLINE_CHILD = """
import asyncio, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
from sandbox import Limits, Sandbox
async def main():
    # no memory watch (`memory=0`): the size cap alone is under test
    async with Sandbox(isolation="inline", limits=Limits(memory=0)) as sandbox:
        result = await sandbox.run(sys.argv[1])
    print(result.error.kind if result.error else "ok", result.error.message if result.error else result.value)
asyncio.run(main())
"""

UNCAPPED_GROWTH = [
    pytest.param(
        "x = [0] * 1000000\nfor i in range(200):\n    x.extend(x)",
        id="list_extend_doubling",
    ),
    pytest.param(
        "import itertools\nlist(itertools.count())",
        id="list_of_endless_iterator",
    ),
]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps the child on Linux")
@pytest.mark.parametrize("code", UNCAPPED_GROWTH)
def test_inline_growth_stops_at_the_size_cap(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", INLINE_CHILD, code], capture_output=True, text=True, timeout=50, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("memory "), done.stdout
    assert SIZE_CAP in done.stdout, done.stdout  # the sandbox's own cap, not the address-space limit
