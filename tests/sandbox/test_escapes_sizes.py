"""Red team, sizes left open by earlier rounds: a slice, a count, a template or a replacement past `max_size`.

Slice assignment that grows a list (`x[len(x):] = x`), the `random` and `heapq` functions told how many items to
make, `%r`/`%a` in a `%` template, `json.JSONEncoder` used directly (and `separators`), and `re.sub` with a function
as the replacement. Each case is the smallest bomb that passes the cap (`QUICK`'s `max_size` is 1,000,000) and
names the size it would have reached; the values honest code gets are pinned against CPython in `test_language.py`.
"""

from __future__ import annotations

from redteam_kit import Value, case, limit, names_are_unique, runs

from sandbox import Limits

SIZE = "this would create "
LIMIT = "the limit is 1,000,000"
BUILT = "return 'PW' + 'NED' if len(x) > 1_000_000 else 'guarded'"
"""The payload's last line: the bomb got through if the value was built."""
LONG = Limits(timeout=30.0, operations=10_000_000, max_size=1_000_000)
"""Enough operations to pull a million items one tick at a time; the wall clock is far away."""
GREW = limit("memory", "this would create a string of length of about", "MemoryError")
"""A text measured past the cap (its size is where the measuring stopped)."""


def sized(what: str) -> object:
    """The size guard refused the value before building it."""
    return limit("memory", f"{SIZE}{what}; {LIMIT}", "MemoryError")


HALF = "x = [0] * 600_000\n"
LYING_MAPPING = """
class M:
    reads = 0
    def keys(self):
        return ['s']
    def __getitem__(self, key):
        self.reads += 1
        return 'x' if self.reads == 1 else '\\\\' * 600_000
"""
"""A mapping whose second read of a key is a long string: a check that reads it apart from `%` is fooled."""

CASES = [
    # -- slice assignment grows a list or bytearray in C --------------------------------------------------------
    case(
        "slice_assignment_doubles_a_list",
        f"{HALF}x[len(x):] = x\n{BUILT}",
        sized("a sequence of length of about 1,200,000"),
    ),
    case(
        "slice_assignment_at_the_front", f"{HALF}x[:0] = x\n{BUILT}", sized("a sequence of length of about 1,200,000")
    ),
    case(
        "slice_assignment_of_a_range_over_one_item",
        f"x = [0] * 10\nx[1:2] = range(2_000_000)\n{BUILT}",
        sized("a sequence of length of about 2,000,009"),
    ),
    case(
        "slice_assignment_of_an_endless_iterator",
        f"import itertools\nx = [0]\nx[1:] = itertools.count()\n{BUILT}",
        sized("a sequence of length of about 1,000,001"),
        limits=LONG,
    ),
    case(
        "augmented_slice_assignment_doubles_a_list",
        f"{HALF}x[len(x):] += x\n{BUILT}",
        sized("a sequence of length of about 1,200,000"),
    ),
    case(
        "slice_assignment_doubles_a_bytearray",
        f"x = bytearray(600_000)\nx[len(x):] = x\n{BUILT}",
        sized("a sequence of length of about 1,200,000"),
    ),
    case(
        "slice_assignment_doubles_a_list_subclass",
        f"class L(list):\n    pass\nx = L([0] * 600_000)\nx[len(x):] = x\n{BUILT}",
        sized("a sequence of length of about 1,200,000"),
    ),
    case(
        "slice_assignment_with_an_index_that_changes",
        "class I:\n    calls = 0\n    def __index__(self):\n        self.calls += 1\n"
        "        return 0 if self.calls == 1 else 600_000\n"
        f"{HALF}x[I():] = x\n{BUILT}",
        Value("guarded"),
    ),
    # -- random and heapq make as many items as they are told ---------------------------------------------------
    case(
        "random_choices_with_a_huge_k",
        f"import random\nx = random.choices([0], k=2_000_000)\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "random_sample_with_a_huge_k",
        f"import random\nx = random.sample(range(10**9), 2_000_000)\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "own_random_getrandbits",
        f"import random\nx = str(random.Random().getrandbits(20_000_000)).zfill(1)\n{BUILT}",
        sized("an int with a bit length of about 20,000,000"),
    ),
    case(
        "own_random_randbytes",
        f"import random\nx = random.Random(1).randbytes(2_000_000)\n{BUILT}",
        sized("bytes of length of about 2,000,000"),
    ),
    case(
        "own_random_sample_by_keyword",
        f"import random\nx = random.Random(1).sample(population=range(10**9), k=2_000_000)\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "random_choices_unbound",
        f"import random\nx = random.Random.choices(random.Random(1), [0], k=2_000_000)\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "own_random_subclass_choices",
        f"import random\nclass R(random.Random):\n    pass\nx = R().choices([0], k=2_000_000)\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "heapq_nlargest_of_a_huge_range",
        f"import heapq\nx = heapq.nlargest(2_000_000, range(2_000_000))\n{BUILT}",
        sized("a collection of length of about 2,000,000"),
    ),
    case(
        "heapq_nsmallest_of_an_endless_iterator",
        f"import heapq, itertools\nx = heapq.nsmallest(10**9, itertools.count())\n{BUILT}",
        sized("a collection of length of about 1,000,001"),
        limits=LONG,
    ),
    case(
        "heapq_nlargest_takes_a_tick_per_item",
        "import heapq\nreturn heapq.nlargest(1, range(10**18))",
        limit("timeout", "the code used its whole operation budget (an endless loop?)"),
    ),
    # -- a `%` template writes its `%r`/`%a` values' reprs ---------------------------------------------------------
    case("percent_r_of_a_long_string", f"s = '\\\\' * 600_000\nx = '%r' % (s,)\n{BUILT}", GREW),
    case("percent_a_of_astral_characters", f"s = chr(0x1F600) * 200_000\nx = '%a' % s\n{BUILT}", GREW),
    case("percent_r_by_key", f"s = '\\\\' * 600_000\nx = '%(s)r' % {{'s': s}}\n{BUILT}", GREW),
    case("bytes_percent_r", f"s = chr(0x1F600) * 200_000\nx = b'%r' % (s,)\n{BUILT}", GREW),
    case("percent_r_after_a_star_width", f"s = '\\\\' * 600_000\nx = '%*r' % (3, s)\n{BUILT}", GREW),
    case("percent_r_of_a_mapping_that_changes", f"{LYING_MAPPING}x = '%(s)r' % M()\n{BUILT}", Value("guarded")),
    # -- json.JSONEncoder used directly, and separators -------------------------------------------------------------
    case("json_encoder_indent", f"import json\nx = json.JSONEncoder(indent=500_000).encode([[[1]]])\n{BUILT}", GREW),
    case(
        "json_encoder_iterencode_indent",
        f"import json\nx = max(json.JSONEncoder(indent=500_000).iterencode([[[[1]]]]), key=len)\n{BUILT}",
        GREW,
    ),
    case(
        "json_dumps_of_a_subclass_that_sets_its_indent",
        "import json\nclass E(json.JSONEncoder):\n    def __init__(self, **options):\n"
        f"        super().__init__(indent=500_000)\nx = json.dumps([[[1]]], cls=E)\n{BUILT}",
        GREW,
    ),
    case(
        "json_encoder_indent_set_on_an_own_instance",
        "import json\nclass E(json.JSONEncoder):\n    pass\n"
        f"e = E()\ne.indent = 500_000\nx = e.encode([[[1]]])\n{BUILT}",
        GREW,
    ),
    case(
        "json_encoder_of_a_long_string", f"import json\nx = json.JSONEncoder().encode('\\\\' * 600_000)\n{BUILT}", GREW
    ),
    case(
        "json_dumps_long_separators",
        f"import json\nx = json.dumps([0] * 1000, separators=(',' * 2000, ':'))\n{BUILT}",
        sized("a string of length of about 1,998,000"),
    ),
    case(
        "json_encoder_long_key_separator",
        f"import json\nx = json.JSONEncoder(separators=(',', ':' * 2000)).encode(dict.fromkeys(range(600)))\n{BUILT}",
        sized("a string of length of about 1,200,599"),
    ),
    # -- re.sub with a function as the replacement -------------------------------------------------------------------
    case("re_sub_with_a_function", f"import re\nx = re.sub('x', lambda m: 'y' * 1000, 'x' * 5000)\n{BUILT}", GREW),
    case(
        "compiled_pattern_subn_with_a_function",
        f"import re\nx = re.compile(b'x').subn(lambda m: b'y' * 1000, b'x' * 5000)[0]\n{BUILT}",
        GREW,
    ),
    case(
        "re_sub_function_returning_a_str_subclass_with_a_lying_len",
        "import re\nclass S(str):\n    def __len__(self):\n        return 0\n"
        f"x = re.sub('x', lambda m: S('y' * 1000), 'x' * 5000)\n{BUILT}",
        GREW,
    ),
]


test_sizes_are_bounded = runs(CASES, "Each slice, count, template or replacement past the cap is refused unbuilt.")
test_case_names_are_unique = names_are_unique(CASES)
