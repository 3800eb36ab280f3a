"""JSON values: the only data that crosses the sandbox boundary, and the one place values become JSON.

`to_json` converts what the model's code returns or passes to a host function: as `json.dumps` would write it
(int, float, bool and None keys become the strings it spells, tuples become lists), and the common values JSON
lacks as pydantic's JSON mode writes them (datetime, date and time in ISO 8601, timedelta as an ISO duration,
Decimal, UUID and Fraction as strings, sets as lists, dataclasses as dicts, Enum members as their value, bytes as
UTF-8 text). It reads plain data only: the values of the base types (`int.__index__`, `str.__getitem__`, the C
iterators of `dict`, `list`, `tuple` and `set`), never a method the code defined, so a subclass with a lying
`items()`, `__iter__`, `__str__`, `__eq__` or `__hash__` is never asked. `check_json` is the strict check for
values that must already be JSON (host results, kept variables). Both copy, so no object crosses either way.

Public: the one JSON value type (`JsonValue`, `JsonObject`, also exported by `sandbox`), the converters, and the
two rules a host's own converter shares so a value reads the same from a host function as from the code's `return`
(`float_key`: how a float key is spelled; `sorted_values`: the order of a set's items).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import inspect
import itertools
import json
import math
import operator
import types
import uuid
from typing import Any, TypeAlias

from sandbox.limits import MAX_INT_BITS, MAX_JSON_VALUES, int_too_large_message, too_many_values_message

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
"""A JSON value as `json.loads` gives it: the only data that crosses the sandbox boundary."""
JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object: a dict of JSON values by string keys."""

__all__ = [
    "MAX_DEPTH",
    "JsonObject",
    "JsonValue",
    "NotJsonError",
    "check_json",
    "float_key",
    "json_size",
    "sorted_values",
    "to_json",
]

MAX_DEPTH = 100
"""Levels of nesting a JSON value may have, in the sandbox and in a host's results alike."""
MAX_NODES = MAX_JSON_VALUES
"""Values converted at most (`sandbox.limits.MAX_JSON_VALUES`)."""
_VIEWS: tuple[type, ...] = (type({}.keys()), type({}.values()))
_ITERATORS: tuple[type, ...] = (
    *(map, filter, zip, range, enumerate, reversed, types.GeneratorType, types.AsyncGeneratorType),
    itertools.compress,  # what the run's `iter`, `reversed` and itertools hand out: they tick per item
    *(type(iter([])), type(iter(())), type(iter({})), type(iter("")), type(iter(range(0)))),
)


class NotJsonError(ValueError):
    """A value is not plain JSON data; the message says where and what it is."""


def check_json(value: object, *, max_depth: int = MAX_DEPTH, max_int_bits: int = MAX_INT_BITS) -> JsonValue:
    """Return a fresh copy of `value` made only of exact JSON types (tuples become lists), or raise `NotJsonError`."""
    flat = _flat_copy(value, max_depth, max_int_bits)
    return flat if flat is not None else _convert("value", value, max_depth, max_int_bits, strict=True)


def to_json(
    value: object, *, path: str = "value", max_depth: int = MAX_DEPTH, max_int_bits: int = MAX_INT_BITS
) -> JsonValue:
    """Return `value` converted to JSON data as `json.dumps` and pydantic's JSON mode would, or raise `NotJsonError`.

    Args:
        value: What the code returned or passed.
        path: How the message names the value (`value`, `args[0]`, a keyword's name).
        max_depth: Levels of nesting allowed.
        max_int_bits: The largest int allowed, in bits.
    """
    flat = _flat_copy(value, max_depth, max_int_bits)
    return flat if flat is not None else _convert(path, value, max_depth, max_int_bits, strict=False)


def _convert(root: str, value: object, max_depth: int, max_int_bits: int, *, strict: bool) -> JsonValue:
    """Convert in one walk; where a failing value sits (`value['a'][0]`) is spelled out only once it failed."""
    try:
        return _Converter(root, max_depth, max_int_bits, MAX_NODES, strict=strict).value(value, max_depth)
    except _Unplaced as error:
        raise NotJsonError(f"{root}{''.join(reversed(error.where))}{error}") from None


class _Unplaced(NotJsonError):
    """A failure whose message starts right after the failing value's place; the walk's frames add the place."""

    def __init__(self, rest: str) -> None:
        super().__init__(rest)
        self.where: list[str] = []
        """The place's parts, innermost first (`[0]`, `['a']`, `.value`)."""


def _placed(error: _Unplaced, part: str) -> _Unplaced:
    error.where.append(part)
    return error


def _flat_copy(value: object, max_depth: int, max_int_bits: int) -> list[JsonValue] | dict[str, JsonValue] | None:
    """A copy of an exact list or dict of exact JSON scalars (most calls' arguments), as the walk makes it; else None.

    Only the exact types are read, so no method of the code's runs; anything else is left to the walk.
    """
    kind = type(value)
    data: Any = value
    if (kind is not list and kind is not dict) or max_depth < 1 or len(data) >= MAX_NODES:
        return None
    if kind is dict:
        for key in dict.keys(data):
            if type(key) is not str:
                return None
    low, high = _INT_BOUNDS if max_int_bits == MAX_INT_BITS else (-(1 << max_int_bits), 1 << max_int_bits)
    for item in dict.values(data) if kind is dict else data:
        item_kind = type(item)
        if item_kind is str or item_kind is bool or item is None:
            continue
        if item_kind is int and low < item < high:  # at most `max_int_bits` bits
            continue
        if item_kind is float and math.isfinite(item):
            continue
        return None
    return dict(data) if kind is dict else list(data)


_INT_BOUNDS = (-(1 << MAX_INT_BITS), 1 << MAX_INT_BITS)
"""The ints of at most `MAX_INT_BITS` bits lie strictly between these (made once: each is a 1.3 KB int)."""


def json_size(value: JsonValue, limit: int, *, utf8: bool = False) -> int | None:
    """The size of JSON `value` as `json.dumps` writes it (characters, or compact UTF-8 bytes); None: far over `limit`.

    A walk with an early stop comes first: a list holding one big string many times is a few nodes but a huge
    text, and is never written out. Only a value whose lower bound is within a few times `limit` is encoded, so
    the text made is bounded by the limit, never by the value.
    """
    stop = _SIZE_SLACK * limit
    bound = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            bound += len(item) + 2  # type: ignore[arg-type]  # exact str, checked above
        elif kind is dict:
            bound += 1 + 4 * len(item)  # type: ignore[arg-type]  # braces, and per item quotes, colon, comma
            for key, inner in item.items():  # type: ignore[attr-defined]  # exact dict, checked above
                bound += len(key)
                stack.append(inner)
        elif kind is list:
            bound += 1 + len(item)  # type: ignore[arg-type]  # brackets and commas
            stack.extend(item)  # type: ignore[arg-type]  # exact list, checked above
        else:
            bound += 1
        if bound > stop:
            return None
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":") if utf8 else None)
    return len(text.encode("utf-8", "surrogatepass")) if utf8 else len(text)


_MAX_FRACTION_BITS = 14_000
"""Bits of a Fraction's numerator or denominator written as text at most (CPython writes 4,300 digits)."""
_SIZE_SLACK = 16
"""How far over its limit a value is still measured exactly (for the message); past that it is just too large."""


class _Converter:
    def __init__(self, root: str, max_depth: int, max_int_bits: int, max_nodes: int, *, strict: bool) -> None:
        self.root = root
        self.max_depth = max_depth
        self.max_int_bits = max_int_bits
        self.nodes_left = max_nodes
        self.strict = strict

    def value(self, value: Any, depth: int) -> JsonValue:
        self.nodes_left -= 1
        if self.nodes_left < 0:
            raise NotJsonError(too_many_values_message(self.root))  # of the whole value: no place
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value  # type: ignore[no-any-return]  # exact immutable JSON scalars
        if kind is int or kind is float:
            return self.number(value)
        if depth <= 0:
            raise _Unplaced(f" is nested more than {self.max_depth} levels deep")
        if kind is dict:
            return self.mapping(value, depth)
        if kind is list or kind is tuple:
            return self.items((list if kind is list else tuple).__iter__(value), len(value), depth)
        if self.strict:
            name = kind.__name__
            article = "an" if name[:1].lower() in "aeiou" else "a"
            raise _Unplaced(f" is {article} {name}, not JSON data (use dict, list, str, int, float, bool, None)")
        return self.convert(value, kind, depth)

    def number(self, value: Any) -> int | float:
        if type(value) is float or isinstance(value, float):
            number = float.__float__(value)  # the value itself, even of a subclass
            if not math.isfinite(number):
                raise _Unplaced(f" is {number!r}, which JSON cannot carry: use None or a string instead")
            return number
        whole = int.__index__(value)
        if whole.bit_length() > self.max_int_bits:
            raise _Unplaced(int_too_large_message("", whole.bit_length()))  # the place goes in front
        return whole

    def mapping(self, value: Any, depth: int) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {}
        for key, item in dict.items(value).__iter__():  # the dict's own storage, not an `items()` of the code's
            name = self.key(key)
            if name in out:
                raise _Unplaced(f" has two keys that both become {name!r} in JSON; keep one of them")
            try:
                out[name] = self.value(item, depth - 1)
            except _Unplaced as error:
                raise _placed(error, f"[{name!r}]") from None
        return out

    def items(self, iterator: Any, size: int, depth: int) -> list[JsonValue]:
        """The converted items of a container of `size` items, from its own C iterator."""
        try:
            return [self.value(item, depth - 1) for item in iterator]
        except _Unplaced as error:  # the iterator knows how many it has left: so which item failed
            raise _placed(error, f"[{size - operator.length_hint(iterator) - 1}]") from None

    def key(self, key: Any) -> str:
        kind = type(key)
        if kind is str:
            return key  # type: ignore[no-any-return]  # an exact str
        if self.strict:
            raise _Unplaced(f" has a key that is {_a(kind)}; JSON object keys must be strings")
        if key is None or kind is bool:
            return {None: "null", True: "true", False: "false"}[key]
        if _is(kind, enum.Enum):
            try:
                return self.key(_enum_value(key))
            except _Unplaced as error:
                raise _placed(error, " (a key's value)") from None
        if _is(kind, str):
            return str.__getitem__(key, slice(None))  # its value, not its `__str__`
        if _is(kind, int) or _is(kind, float):
            number = self.number(key) if _is(kind, int) else float.__float__(key)
            return float_key(number) if type(number) is float else int.__repr__(number)
        text = _as_text(key, kind)
        if text is not None:
            return text
        raise _Unplaced(f" has a key that is {_a(kind)}; JSON object keys are strings: use a str key")

    def convert(self, value: Any, kind: type, depth: int) -> JsonValue:
        """The values JSON lacks, as pydantic's JSON mode writes them; or a `NotJsonError` that says what to do."""
        if _is(kind, enum.Enum):
            return self.inner(_enum_value(value), ".value", depth)
        if _is(kind, int) or _is(kind, float):
            return self.number(value)
        if _is(kind, str):
            return str.__getitem__(value, slice(None))  # its value, not its `__str__`
        if _is(kind, dict):
            return self.mapping(value, depth)  # Counter, defaultdict, OrderedDict
        if _is(kind, list) or _is(kind, tuple) or _is(kind, collections.deque):
            base = next(base for base in (list, tuple, collections.deque) if _is(kind, base))
            return self.items(base.__iter__(value), base.__len__(value), depth)  # namedtuples too
        if _is(kind, set) or _is(kind, frozenset):
            unordered = set if _is(kind, set) else frozenset
            return sorted_values(self.items(unordered.__iter__(value), unordered.__len__(value), depth))
        if any(kind is view for view in _VIEWS):
            return self.items(iter(value), len(value), depth)  # `d.keys()` of a real dict
        if kind is type({}.items()):
            return [self.inner(pair, f"[{i}]", depth) for i, pair in enumerate(value)]  # pairs as tuples
        text = _as_text(value, kind)
        if text is not None:
            return text
        if _is(kind, bytes) or _is(kind, bytearray):
            return _utf8(value, kind)
        fields = _dataclass_fields(kind)
        if fields is not None:
            return {name: self.inner(_field(value, name), f".{name}", depth) for name in fields}
        raise _Unplaced(f" is {_a(kind)}: {_fix(value, kind)}")

    def inner(self, value: Any, part: str, depth: int) -> JsonValue:
        """`value`, one level down at `part` of the value being converted."""
        try:
            return self.value(value, depth - 1)
        except _Unplaced as error:
            raise _placed(error, part) from None


def _is(kind: type, base: type) -> bool:
    """`issubclass` by identity in the MRO: no `__subclasscheck__` or `__eq__` of a metaclass is asked."""
    return any(cls is base for cls in kind.__mro__)


def _a(kind: type) -> str:
    name = kind.__name__ if type(kind.__name__) is str else "object"
    return f"an {name!r} object" if name[:1].lower() in "aeiou" else f"a {name!r} object"


def _enum_value(member: Any) -> object:
    try:
        return object.__getattribute__(member, "__dict__")["_value_"]  # what `.value` reads, without a property
    except (AttributeError, KeyError):
        raise NotJsonError("an Enum member without a value cannot be converted") from None


def float_key(number: float) -> str:
    """A float dict key as `json.dumps` writes it (`"1.5"`, `"Infinity"`, `"NaN"`)."""
    if math.isfinite(number):
        return float.__repr__(number)
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")  # as `json.dumps` spells them


def _as_text(value: Any, kind: type) -> str | None:
    """Datetimes, dates, times and durations in ISO 8601; Decimal, UUID and Fraction as their strings."""
    if _is(kind, datetime.datetime) or _is(kind, datetime.time):
        base = datetime.datetime if _is(kind, datetime.datetime) else datetime.time
        zone = base.tzinfo.__get__(value)  # the field itself, not a property
        if zone is not None and type(zone) is not datetime.timezone:
            raise _Unplaced(" has a tzinfo that is not a `datetime.timezone`: use `datetime.timezone(offset)`")
        text: str = base.isoformat(value)  # the base's own formatting
        return text[:-6] + "Z" if text.endswith("+00:00") else text  # as pydantic writes UTC
    if _is(kind, datetime.date):
        return datetime.date.isoformat(value)
    if _is(kind, datetime.timedelta):
        return _duration(value)
    if _is(kind, decimal.Decimal):
        return decimal.Decimal.__str__(value)
    if _is(kind, uuid.UUID):
        number = uuid.UUID.__dict__["int"].__get__(value)  # the slot, not a property
        if type(number) is not int:  # `UUID.__init__` keeps an int of the code's class that says it is in range
            raise _Unplaced(" is a UUID whose number is not a plain int; return `str(x)`")
        return str(uuid.UUID(int=number))
    if _is(kind, fractions.Fraction):
        top, bottom = (fractions.Fraction.__dict__[f].__get__(value) for f in ("_numerator", "_denominator"))
        if type(top) is not int or type(bottom) is not int:  # `Fraction(x)` copies what a Rational of the code's says
            raise _Unplaced(" is a Fraction whose parts are not plain ints; return `str(x)` or `float(x)`")
        bits = max(top.bit_length(), bottom.bit_length())
        if bits > _MAX_FRACTION_BITS:  # past what `str(int)` writes (4,300 digits), it would raise ValueError
            raise _Unplaced(f" is a Fraction of {bits:,} bits, too large to write out; return float(x) or round it")
        return f"{top}/{bottom}"  # the slots, as pydantic writes it
    return None


def _duration(value: Any) -> str:
    """A timedelta as pydantic writes it: `P1DT2H`, `-PT1S`, `PT0.5S`, `PT0S`."""
    days, seconds, micros = (getattr(datetime.timedelta, f).__get__(value) for f in ("days", "seconds", "microseconds"))
    sign = ""
    if days < 0:  # pydantic writes the size with a sign in front
        sign = "-"
        total = -((days * 86_400 + seconds) * 1_000_000 + micros)
        days, rest = divmod(total, 86_400 * 1_000_000)
        seconds, micros = divmod(rest, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    date = f"{days}D" if days else ""
    clock = f"{hours}H" if hours else ""
    clock += f"{minutes}M" if minutes else ""
    if secs or micros:
        clock += f"{secs}.{micros:06d}".rstrip("0").rstrip(".") + "S"
    if not date and not clock:
        clock = "0S"
    return f"{sign}P{date}{'T' + clock if clock else ''}"


def _utf8(value: Any, kind: type) -> str:
    raw = (
        bytes(bytearray.__getitem__(value, slice(None)))
        if _is(kind, bytearray)
        else bytes.__getitem__(value, slice(None))
    )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unplaced(" is bytes that are not UTF-8 text: return `base64.b64encode(b).decode()`") from None


def sorted_values(items: list[JsonValue]) -> list[JsonValue]:
    """A set's items in order when they are all str or all numbers, so a run gives the same list every time."""
    if all(type(item) is str for item in items) or all(type(item) in (int, float) for item in items):
        return sorted(items)  # type: ignore[type-var]  # all str, or all numbers
    return items


def _dataclass_fields(kind: type) -> list[str] | None:
    if not any(type(cls.__dict__.get("__dataclass_fields__")) is dict for cls in kind.__mro__):
        return None
    return [field.name for field in dataclasses.fields(kind)]  # fields only, not ClassVars or InitVars


def _field(value: Any, name: str) -> object:
    found = inspect.getattr_static(value, name, None)  # no descriptor is run, no `__getattr__` asked
    if type(found) is types.MemberDescriptorType:  # a `slots=True` dataclass
        return found.__get__(value)
    if any(type(found) is kind for kind in (property, types.GetSetDescriptorType, classmethod, staticmethod)):
        raise _Unplaced(f".{name} is a property, not a field's value; return a dict of what you need")
    return found


def _fix(value: Any, kind: type) -> str:
    """What to return instead of a value that does not convert."""
    if any(_is(kind, iterator) for iterator in _ITERATORS):
        return "return `list(...)` of it"
    if _is(kind, types.CoroutineType) or kind.__name__ == "PendingCall":
        return "`await` it and return its result"
    if _is(kind, type):
        return "a class is not data: return its name (`C.__name__`) or an instance's fields"
    if callable(value):
        return "a function is not data: call it and return its result, or return its name (`f.__name__`)"
    if kind is complex:
        return "return `[z.real, z.imag]` or `str(z)`"
    return (
        "return plain data (dict, list, str, int, float, bool, None); for a class of your own, make it a "
        "`@dataclass` or return a dict of its fields"
    )
