"""Size guards: no single operation may build a value larger than `Limits.max_size`.

`*`, `**`, `<<`, `%`, `+` and their in-place forms, f-string and `format()` widths, and the string methods that
pad, repeat or join (`ljust`, `center`, `zfill`, `expandtabs`, `replace`, `join`, `str.format`) are checked
before they allocate, so a one-line bomb (`10**10**8`, `'x'.ljust(10**10)`) fails fast even inline.
"""

from __future__ import annotations

import collections
import math
import operator
import re
import string
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

SEQUENCES = (str, bytes, bytearray, list, tuple)
_SPEC_NUMBER = re.compile(r"\d+")
_PERCENT_SPEC = re.compile(r"%[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "@=": operator.imatmul,
}


_SIZED_TYPES: tuple[type[Any], ...] = (str, bytes, bytearray, list, tuple, collections.deque)


def _true_len(obj: object) -> int | None:
    """The length of a str, bytes, list, tuple or deque (a subclass's too) by the base type's own `__len__`."""
    for kind in _SIZED_TYPES:
        if isinstance(obj, kind):
            length: int = kind.__len__(obj)
            return length
    return None


class SizeLimitError(MemoryError):
    """A single operation would build a value larger than `Limits.max_size`."""


class SizeGuards:
    """The size-checked operators and methods of one run; `Guards` adds the budget and attribute rules."""

    def __init__(self, *, max_size: int) -> None:
        self.max_size = max_size

    def getattr(self, obj: object, name: str, *default: object) -> Any:
        """Attribute access for `str.format` fields; `Guards` supplies the sandbox's rules."""
        raise NotImplementedError

    def _too_big(self, what: str, size: int) -> NoReturn:
        raise SizeLimitError(f"this would create {what} of about {size:,}; the limit is {self.max_size:,}")

    def add(self, a: Any, b: Any) -> Any:
        """`a + b` that refuses to concatenate past the size limit."""
        kind = type(a)
        if kind is not int and kind is not float and isinstance(a, SEQUENCES) and isinstance(b, SEQUENCES):
            self.check_length(len(a) + len(b), "a sequence of length")
        return a + b

    def iadd(self, a: Any, b: Any) -> Any:
        """`a += b`, guarded like `a + b`."""
        kind = type(a)
        if kind is int or kind is float:
            return a + b
        if isinstance(a, SEQUENCES) and isinstance(b, SEQUENCES):
            self.check_length(len(a) + len(b), "a sequence of length")
        return _INPLACE["+="](a, b)

    def imul(self, a: Any, b: Any) -> Any:
        """`a *= b`, guarded like `a * b`."""
        checked_a, checked_b = self._check_mul(a, b)
        if checked_a is a:  # `a` is the sequence (repeated in place if it can be) or both are numbers
            return _INPLACE["*="](a, checked_b)
        return checked_a * checked_b  # `n *= seq`: the name gets a new sequence

    def ipow(self, a: Any, b: Any) -> Any:
        """`a **= b`, guarded like `a ** b`."""
        return self.pow(a, b)

    def ilshift(self, a: Any, b: Any) -> Any:
        """`a <<= b`, guarded like `a << b`."""
        return self.lshift(a, b)

    def imod(self, a: Any, b: Any) -> Any:
        """`a %= b`, guarded like `a % b`."""
        return self.mod(a, b)

    def mul(self, a: Any, b: Any) -> Any:
        """`a * b` that refuses to build huge ints, strings and sequences."""
        kind_a, kind_b = type(a), type(b)
        if kind_a is float or kind_b is float:
            return a * b
        if kind_a is int and kind_b is int:  # the common case, checked here without a call
            if a.bit_length() + b.bit_length() > self.max_size:
                self._too_big("an int with a bit length", a.bit_length() + b.bit_length())
            return a * b
        a, b = self._check_mul(a, b)
        return a * b

    def _check_mul(self, a: Any, b: Any) -> tuple[Any, Any]:
        """Check `a * b`; returns the operands to multiply (a repeat count the code made, as a plain int)."""
        if isinstance(a, int) and isinstance(b, int):
            bits = int.bit_length(a) + int.bit_length(b)  # the int methods: a subclass cannot lie about them
            if bits > self.max_size:
                self._too_big("an int with a bit length", bits)
            return a, b
        seq_first = _true_len(a) is not None
        seq, count = (a, b) if seq_first else (b, a)
        length = _true_len(seq)
        if length is None or isinstance(count, float) or not hasattr(type(count), "__index__"):
            return a, b
        times = operator.index(count)  # once: an `__index__` of the code's may answer differently each time
        if length * times > self.max_size:
            self._too_big("a sequence of length", length * times)
        return (seq, times) if seq_first else (times, seq)

    def pow(self, a: Any, b: Any, mod: Any = None) -> Any:
        """`a ** b` (and `pow`) that refuses to build huge ints."""
        if mod is not None:
            return pow(a, b, mod)
        if isinstance(b, int) and b > 1:
            if isinstance(a, int) and abs(a) > 1:
                bits = a.bit_length() * b
            elif isinstance(a, Fraction):
                bits = max(a.numerator.bit_length(), a.denominator.bit_length()) * b
            else:
                bits = 0
            if bits > self.max_size:
                self._too_big("an int with a bit length", bits)
        return a**b

    def lshift(self, a: Any, b: Any) -> Any:
        """`a << b` that refuses to build huge ints."""
        if isinstance(a, int) and isinstance(b, int) and a and a.bit_length() + b > self.max_size:
            self._too_big("an int with a bit length", a.bit_length() + b)
        return a << b

    def mod(self, a: Any, b: Any) -> Any:
        """`a % b`, with `%`-formatting widths capped."""
        kind = type(a)
        if kind is int or kind is float:
            return a % b
        if isinstance(a, str):
            self._check_percent(plain(a), b)  # the text itself, even of a subclass
        elif isinstance(a, bytes | bytearray):
            self._check_percent(bytes(a).decode("latin-1"), b)
        return a % b

    def _check_percent(self, template: str, args: Any) -> None:
        for match in _PERCENT_SPEC.finditer(template):
            for group in match.groups():
                if group == "*":
                    values = args if isinstance(args, tuple) else (args,)
                    if any(isinstance(v, int) and v > self.max_size for v in values):
                        self._too_big("a formatted field of width", max(v for v in values if isinstance(v, int)))
                elif group and int(group) > self.max_size:
                    self._too_big("a formatted field of width", int(group))

    def inplace(self, op: str, x: Any, y: Any) -> Any:
        """`x op= y` with the same size guards as the plain operators."""
        if op == "*=":
            return self.imul(x, y)
        if op == "+=" and isinstance(x, SEQUENCES) and isinstance(y, SEQUENCES):
            self.check_length(len(x) + len(y), "a sequence of length")
        elif op == "**=":
            return self.pow(x, y)
        elif op == "<<=":
            return self.lshift(x, y)
        elif op == "%=":
            return self.mod(x, y)
        return _INPLACE[op](x, y)

    def check_spec(self, spec: str) -> None:
        """Refuse format specs whose width or precision is over the size limit."""
        for number in _SPEC_NUMBER.findall(spec):
            if len(number) > 18 or int(number) > self.max_size:
                self._too_big("a formatted field of width", int(number))

    def format(self, value: Any, conversion: int, spec: str) -> str:
        """An f-string field with a format spec (`f"{x!r:>10}"`)."""
        if conversion == ord("r"):
            value = repr(value)
        elif conversion == ord("s"):
            value = str(value)
        elif conversion == ord("a"):
            value = ascii(value)
        self.check_spec(spec)
        return format(value, spec)

    def builtin_format(self, value: Any, spec: str = "") -> str:
        """The `format()` builtin with capped widths."""
        self.check_spec(spec)
        return format(value, spec)

    def _str_method(self, obj: Any, name: str) -> Callable[..., Any]:
        method = STR_METHODS[name] if name in STR_METHODS else SIZED_METHODS[name]
        if isinstance(obj, type):  # `str.format(template, ...)` and friends, unbound
            return lambda self_, *args, **kwargs: method(self, self_, *args, **kwargs)
        return lambda *args, **kwargs: method(self, obj, *args, **kwargs)

    def _int_to_bytes(self, value: int) -> Callable[..., bytes]:
        def to_bytes(length: int = 1, byteorder: Any = "big", *, signed: bool = False) -> bytes:
            length = operator.index(length)  # once, as a plain int: the code's `__index__` or `>` may lie
            if length > self.max_size:
                self._too_big("bytes of length", length)
            return value.to_bytes(length, byteorder, signed=signed)

        return to_bytes

    def check_length(self, size: int, what: str) -> None:
        """Refuse a single allocation over the size limit."""
        if size > self.max_size:
            self._too_big(what, size)

    def math_bits(self, bits: float) -> None:
        """Refuse a math function whose result would have more bits than allowed."""
        if bits > self.max_size:
            self._too_big("an int with a bit length", int(bits))

    def factorial(self, n: int) -> int:
        """`math.factorial` with its result size capped."""
        if isinstance(n, int) and n > 2:
            self.math_bits(n * math.log2(n))
        return math.factorial(n)


class _GuardedFormatter(string.Formatter):
    """`str.format` whose fields go through the sandbox's attribute and item guards."""

    def __init__(self, guards: SizeGuards) -> None:
        self.guards = guards
        self.numbering: list[bool] = []  # per field: numbered automatically (`{}`, `{.x}`, `{[0]}`) or by hand

    def parse(self, format_string: str) -> Any:
        """Number `{.x}` and `{[0]}` automatically as `str.format` does (`string.Formatter` makes them a KeyError)."""
        for literal, field, spec, conversion in super().parse(format_string):
            if field is not None and (field == "" or field[0] in ".["):
                self.numbering.append(True)
                field = f"{self.numbering.count(True) - 1}{field}"
            elif field is not None and field.split(".")[0].split("[")[0].isdigit():
                self.numbering.append(False)
            if len(set(self.numbering)) > 1:
                first, then = ("automatic field numbering", "manual field specification")[
                    :: 1 if self.numbering[0] else -1
                ]
                raise ValueError(f"cannot switch from {first} to {then}")
            yield literal, field, spec, conversion

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = _formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attribute, key in rest:
            obj = self.guards.getattr(obj, key) if is_attribute else obj[key]
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.guards.check_spec(format_spec)
        return format(value, format_spec)


def _formatter_field_name_split(field_name: str) -> tuple[Any, Iterator[tuple[bool, Any]]]:
    import _string  # type: ignore[import-not-found]  # CPython's own parser of `{a.b[c]}` fields, as used by string.Formatter

    return _string.formatter_field_name_split(field_name)  # type: ignore[no-any-return]


def _format(guards: SizeGuards, template: str, *args: Any, **kwargs: Any) -> str:
    return _GuardedFormatter(guards).vformat(template, args, kwargs)


def _format_map(guards: SizeGuards, template: str, mapping: Any) -> str:
    return _GuardedFormatter(guards).vformat(template, (), mapping)


def _padded(name: str) -> Callable[..., Any]:
    def method(guards: SizeGuards, obj: Any, width: int, *args: Any) -> Any:
        width = operator.index(width)  # once, as a plain int: the code's `__index__` or `>` may lie
        guards.check_length(width, "a string of length")
        return getattr(obj, name)(width, *args)

    return method


def _expandtabs(guards: SizeGuards, obj: Any, tabsize: int = 8) -> Any:
    guards.check_length(len(obj) * max(tabsize, 1), "a string of length")
    return obj.expandtabs(tabsize)


def _replace(guards: SizeGuards, obj: Any, old: Any, new: Any, count: int = -1) -> Any:
    old, new = plain(old), plain(new)  # a subclass's `len` may lie; the base type's may not
    hits = obj.count(old) if old else len(obj) + 1
    if count >= 0:
        hits = min(hits, count)
    guards.check_length(len(obj) + hits * max(len(new) - len(old), 0), "a string of length")
    return obj.replace(old, new, count)


def _join(guards: SizeGuards, obj: Any, iterable: Any) -> Any:
    items = [plain(item) for item in iterable]
    guards.check_length(
        sum(len(item) for item in items if isinstance(item, (str, bytes, bytearray)))
        + len(obj) * max(len(items) - 1, 0),
        "a string of length",
    )
    return obj.join(items)


def plain(value: Any) -> Any:
    """A str or bytes subclass's value as the plain base type (other values unchanged)."""
    if isinstance(value, str) and type(value) is not str:
        return str.__getitem__(value, slice(None))
    if isinstance(value, bytes | bytearray) and type(value) not in (bytes, bytearray):
        return bytes(value)
    return value


SIZED_METHODS: dict[str, Callable[..., Any]] = {
    "join": _join,
    "ljust": _padded("ljust"),
    "rjust": _padded("rjust"),
    "center": _padded("center"),
    "zfill": _padded("zfill"),
    "expandtabs": _expandtabs,
    "replace": _replace,
}
STR_METHODS: dict[str, Callable[..., Any]] = {**SIZED_METHODS, "format": _format, "format_map": _format_map}
