"""The frame codec and the flat-argument copy behave exactly as the general code they shortcut.

`sandbox._shared.frames.encode`/`decode` skip `json.dumps`'s and `json.loads`'s per-call layers; `to_json` and
`check_json` copy a flat list or dict of exact scalars without the walk. Each must give what the general path gives, and
refuse what it refuses, with the same error.
"""

from __future__ import annotations

import json
import math

import pytest

from sandbox._shared.frames import HEADER, ProtocolError, decode, encode, frame_size
from sandbox.jsonvalue import NotJsonError, check_json, to_json
from sandbox.limits import MAX_INT_BITS, MAX_JSON_VALUES

MESSAGES = [
    {"t": "call", "run": 3, "id": 17, "fn": "echo", "attr": None, "args": [5], "kwargs": {}},
    {"t": "x", "floats": [1.5, -0.0, 1e300, math.inf, -math.inf], "big": 2**200, "neg": -(2**70)},
    {"t": "x", "text": 'é \u2028 \ud800 "q" \\ \n \x00', "nested": {"a": [[], {}, [{"b": None}]], "ok": True}},
    {"t": "x", 1: "int key", None: "none key", 2.5: "float key", False: "bool key"},
]


@pytest.mark.parametrize("message", MESSAGES)
def test_a_frame_holds_what_json_dumps_writes_and_decodes_to_what_json_loads_reads(message: dict[str, object]) -> None:
    """Header, then the compact `json.dumps` text in UTF-8 (surrogates passed through); decoded as `json.loads`."""
    frame = encode(message)
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    assert frame == HEADER.pack(len(frame) - HEADER.size) + text.encode("utf-8", "surrogatepass")
    assert frame_size(frame) == len(frame) - HEADER.size
    decoded = decode(frame[HEADER.size :])
    assert json.dumps(decoded) == json.dumps(json.loads(text))


def test_nan_crosses_as_json_dumps_spells_it() -> None:
    """`NaN` is written as `json.dumps` writes it and read back as a NaN."""
    frame = encode({"t": "x", "v": math.nan})
    assert frame.endswith(b'"v":NaN}')
    value = decode(frame[HEADER.size :])["v"]
    assert isinstance(value, float)
    assert math.isnan(value)


def test_what_json_dumps_refuses_is_refused_with_its_error() -> None:
    """A value JSON cannot hold is `json.dumps`'s TypeError; a cycle is its ValueError."""
    with pytest.raises(TypeError) as not_json:
        encode({"t": "x", "v": {1, 2}})
    assert str(not_json.value) == "Object of type set is not JSON serializable"
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValueError) as circular:
        encode({"t": "x", "v": cycle})
    assert str(circular.value) == "Circular reference detected"
    assert encode({"t": "x", "v": [1]}).endswith(b"[1]}")  # a failed encoding leaves nothing behind


def test_frame_size_reads_the_header_at_an_offset() -> None:
    """The size of the second of two frames in one buffer, read in place."""
    first, second = encode({"t": "a"}), encode({"t": "bb", "v": [1, 2, 3]})
    assert frame_size(first + second, len(first)) == len(second) - HEADER.size


@pytest.mark.parametrize(
    ("payload", "decoded"),
    [
        (b' {"t":"x"}', {"t": "x"}),
        (b'{"t":"x"}\n ', {"t": "x"}),
        (b'{"t":"x","n":12345678901234567890123}', {"t": "x", "n": 12345678901234567890123}),
    ],
)
def test_whitespace_around_a_frame_is_read_as_json_loads_reads_it(payload: bytes, decoded: object) -> None:
    """Leading and trailing whitespace are JSON's to allow; long ints stay exact."""
    assert decode(payload) == decoded


@pytest.mark.parametrize(
    "payload",
    [b'{"t":"x"} {"t":"y"}', b'{"t":"x"}x', b'\xef\xbb\xbf{"t":"x"}', b"", b"[1]", b'{"t":1}', b'{"t":"x"', b"\xff"],
)
def test_a_frame_that_is_not_one_json_object_with_a_string_t_is_a_protocol_error(payload: bytes) -> None:
    """Extra data after the value, a byte-order mark, truncation, bad UTF-8, a non-object: `ProtocolError`."""
    with pytest.raises(ProtocolError):
        decode(payload)


LIMIT = 1 << MAX_INT_BITS
FLAT = [
    [],
    {},
    [1, -2, 0.5, -0.0, "s", True, False, None, LIMIT - 1, 1 - LIMIT],
    {"a": 1, "b": "two", "c": None, "d": 2.5, "e": False},
]


@pytest.mark.parametrize("value", FLAT)
@pytest.mark.parametrize("convert", [to_json, check_json])
def test_a_flat_list_or_dict_of_scalars_is_copied_as_it_is(
    value: list[object] | dict[str, object], convert: object
) -> None:
    """A new container of the same type holding the same items."""
    assert callable(convert)
    copied = convert(value)
    assert copied == value
    assert type(copied) is type(value)
    assert copied is not value


_CARRY = "which JSON cannot carry: use None or a string instead"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, LIMIT], f"value[1] is an int too large to send ({MAX_INT_BITS + 1} bits); send it as a str"),
        ([-LIMIT], f"value[0] is an int too large to send ({MAX_INT_BITS + 1} bits); send it as a str"),
        ({"a": math.nan}, f"value['a'] is nan, {_CARRY}"),
        ([1.0, -math.inf], f"value[1] is -inf, {_CARRY}"),
    ],
)
def test_a_flat_value_with_an_item_json_cannot_carry_fails_as_the_walk_names_it(value: object, message: str) -> None:
    """An int past `MAX_INT_BITS` or a non-finite float in a flat list or dict: the walk's error, with its place."""
    with pytest.raises(NotJsonError) as error:
        to_json(value)
    assert str(error.value) == message


def test_flat_values_that_are_not_exact_json_are_converted_by_the_walk() -> None:
    """Non-str keys, a str subclass, a tuple item: converted as `json.dumps` would, exactly as before."""

    class Name(str):
        __slots__ = ()

    converted = to_json({1: "a", None: Name("b")})
    assert converted == {"1": "a", "null": "b"}
    assert isinstance(converted, dict)
    assert type(converted["null"]) is str
    assert to_json([(1, 2), Name("c")]) == [[1, 2], "c"]
    with pytest.raises(NotJsonError):
        check_json([Name("c")])


def test_the_depth_and_count_limits_hold_for_flat_values_too() -> None:
    """`max_depth=0` refuses a list; a list of `MAX_JSON_VALUES` items is past the count."""
    with pytest.raises(NotJsonError) as deep:
        to_json([1], max_depth=0)
    assert str(deep.value) == "value is nested more than 0 levels deep"
    with pytest.raises(NotJsonError) as many:
        to_json([0] * MAX_JSON_VALUES)
    assert str(many.value) == "value holds more than 1,000,000 values in all; return less"
    assert to_json([0] * (MAX_JSON_VALUES - 1)) == [0] * (MAX_JSON_VALUES - 1)
