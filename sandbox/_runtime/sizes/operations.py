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
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NoReturn

from sandbox._runtime.sizes.growth import DATES, check_strftime, growing, known_len
from sandbox._runtime.sizes.text import SIZED_METHODS, STR_METHODS, PercentFields, percent_summary, plain
from sandbox._runtime.sizes.transforms import check_repr, checked_repr

if TYPE_CHECKING:
    from collections.abc import Callable

SEQUENCES = (str, bytes, bytearray, list, tuple, collections.UserList, collections.deque)
_EXTENDED_IN_PLACE = (list, bytearray, collections.deque)
"""What `+=` extends in place by any iterable (`x += range(n)`), not only by another sequence."""
_SPEC_NUMBER = re.compile(r"\d+")
_REPR_TEXT = (str, bytes, bytearray)
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
    """The length of a str, bytes, list, tuple or deque (a subclass's too) by the base type's own `__len__`.

    A `UserList` is measured by its `data`, which its own `*` and `+` repeat and add in C.
    """
    for kind in _SIZED_TYPES:
        if isinstance(obj, kind):
            length: int = kind.__len__(obj)
            return length
    if isinstance(obj, collections.UserList):
        data = object.__getattribute__(obj, "__dict__").get("data")  # the stored list: a property of the code's may lie
        length_of_data = _true_len(data) if not isinstance(data, collections.UserList) else None
        if length_of_data is None:
            raise TypeError("a UserList whose `data` is not a list cannot be added or repeated in the sandbox")
        return length_of_data
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
            self.check_length(_sum_len(a, b), "a sequence of length")
        return a + b

    def concat(self, a: Any, b: Any) -> Any:
        """`operator.concat`, guarded like `a + b`."""
        if isinstance(a, SEQUENCES) and isinstance(b, SEQUENCES):
            self.check_length(_sum_len(a, b), "a sequence of length")
        return operator.concat(a, b)

    def sum(self, iterable: Any, /, start: Any = 0) -> Any:
        """`sum`; with a list or tuple to start from, each step is checked like `a + b`."""
        if not isinstance(start, SEQUENCES):
            return sum(iterable, start)
        total = start
        for item in iterable:
            total = self.add(total, item)
        return total

    def iadd(self, a: Any, b: Any) -> Any:
        """`a += b`, guarded like `a + b`."""
        kind = type(a)
        if kind is int or kind is float:
            return a + b
        self._check_iadd(a, b)
        return _INPLACE["+="](a, b)

    def _check_iadd(self, a: Any, b: Any) -> None:
        if isinstance(a, SEQUENCES) and isinstance(b, SEQUENCES):
            self.check_length(_sum_len(a, b), "a sequence of length")
        elif isinstance(a, _EXTENDED_IN_PLACE) and (added := known_len(b)):
            self.check_length((_true_len(a) or 0) + added, "a sequence of length")

    def star(self, iterable: Any) -> Any:
        """`*iterable` in a display or a call: refused when it would unpack more items than the size limit."""
        self.check_length(known_len(iterable), "a collection of length")
        return iterable

    def growing(self, obj: object, name: str, method: Callable[..., Any]) -> Callable[..., Any] | None:
        """The method `name` of `obj` (read as `method`), checked for what it would build; None: needs no check."""
        return growing(self, obj, name, method)

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
        if isinstance(a, Fraction | int) and isinstance(b, Fraction | int):
            bits = max(_bits(a, "numerator") + _bits(b, "numerator"), _bits(a, "denominator") + _bits(b, "denominator"))
            if bits > self.max_size:
                self._too_big("a fraction with a bit length", bits)
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
        a, b, mod = _plain_int(a, "__pow__"), _plain_int(b, "__rpow__"), _plain_int(mod, "__rpow__")
        if mod is not None:
            if type(b) is int and type(mod) is int and b > 0:
                work = b.bit_length() * mod.bit_length()  # one squaring and multiplication per exponent bit
                if work > _MODPOW_WORK:
                    raise SizeLimitError(
                        f"pow(x, y, m) with a {b.bit_length():,}-bit y and a {mod.bit_length():,}-bit m is too much "
                        f"work for one operation (y's bits times m's may be {_MODPOW_WORK:,}); use smaller numbers"
                    )
            return pow(a, b, mod)
        # `Fraction ** Fraction(n)` and `int ** Fraction(n)` raise to the int `n`
        exponent = b if type(b) is int else _whole(b)
        if exponent > 1:
            if type(a) is int and abs(a) > 1:
                bits = a.bit_length() * exponent
            elif isinstance(a, Fraction | int):
                bits = max(_bits(a, "numerator"), _bits(a, "denominator")) * exponent
            else:
                bits = 0
            if bits > self.max_size:
                self._too_big("an int with a bit length", bits)
        return a**b

    def lshift(self, a: Any, b: Any) -> Any:
        """`a << b` that refuses to build huge ints."""
        a, b = _plain_int(a, "__lshift__"), _plain_int(b, "__rlshift__")
        if type(a) is int and type(b) is int and a and a.bit_length() + b > self.max_size:
            self._too_big("an int with a bit length", a.bit_length() + b)
        return a << b

    def mod(self, a: Any, b: Any) -> Any:
        """`a % b`, with `%`-formatting widths capped and `%r`/`%a` of a long string measured."""
        kind = type(a)
        if kind is int or kind is float:
            return a % b
        if isinstance(a, str):
            b = self._check_percent(plain(a), b, text=True)  # the text itself, even of a subclass
        elif isinstance(a, bytes | bytearray):
            b = self._check_percent(bytes(a).decode("latin-1"), b, text=False)
        return a % b

    def _check_percent(self, template: str, args: Any, *, text: bool) -> Any:
        """Refuse a `%` whose widths or `%r`/`%a` values pass the cap; returns the arguments to format with."""
        fields = percent_summary(template)
        if fields.widest > self.max_size:
            self._too_big("a formatted field of width", fields.widest)
        if fields.stars:  # a `*` width or precision comes from the arguments; negative means left-justified
            values = tuple.__iter__(args) if isinstance(args, tuple) else (args,)
            for value in values:
                if isinstance(value, int) and abs(operator.index(value)) > self.max_size:
                    self._too_big("a formatted field of width", abs(operator.index(value)))
        return self._check_shown(args, fields, text=text) if fields.shown else args

    def _check_shown(self, args: Any, fields: PercentFields, *, text: bool) -> Any:
        """Measure each `%r`/`%a` value's repr before `%` writes it (a bytes template's `%r` is `ascii`)."""
        if fields.keys:
            try:  # read once into a plain dict, which `%` then reads: a mapping of the code's may answer differently
                args = {key: args[key] for key in fields.keys}
            except (LookupError, TypeError):
                return args  # `%` raises its own error
            values = args
        else:
            values = dict(enumerate(tuple.__iter__(args))) if isinstance(args, tuple) else {0: args}
        for place, conversion in fields.shown:
            value = values.get(place)
            if type(value) in _REPR_TEXT:
                check_repr(self, value, ascii_only=conversion == "a" or not text)
        return args

    def inplace(self, op: str, x: Any, y: Any) -> Any:
        """`x op= y` with the same size guards as the plain operators."""
        if op == "*=":
            return self.imul(x, y)
        if op == "+=":
            self._check_iadd(x, y)
        elif op == "**=":
            return self.pow(x, y)
        elif op == "<<=":
            return self.lshift(x, y)
        elif op == "%=":
            return self.mod(x, y)
        return _INPLACE[op](x, y)

    def check_spec(self, spec: str, value: object = None) -> None:
        """Refuse format specs whose width or precision is over the size limit (a date's: its expansion)."""
        if isinstance(value, DATES):
            check_strftime(self, spec)
        for number in _SPEC_NUMBER.findall(spec):
            if len(number) > 18 or int(number) > self.max_size:
                self._too_big("a formatted field of width", int(number))

    def format(self, value: Any, conversion: int, spec: str) -> str:
        """An f-string field with a format spec (`f"{x!r:>10}"`)."""
        if conversion == ord("r") or conversion == ord("a"):
            value = checked_repr(self, value, ascii_only=conversion == ord("a"))
        elif conversion == ord("s"):
            value = str(value)
        self.check_spec(spec, value)
        return format(value, spec)

    def repr(self, value: Any, /) -> str:
        """The `repr()` builtin, refused before a string's grows past the size limit."""
        return checked_repr(self, value)

    def ascii(self, value: Any, /) -> str:
        """The `ascii()` builtin, likewise."""
        return checked_repr(self, value, ascii_only=True)

    def builtin_format(self, value: Any, spec: str = "") -> str:
        """The `format()` builtin with capped widths."""
        self.check_spec(spec, value)
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

    def check_length(self, size: int, what: str) -> int:
        """Refuse a single allocation over the size limit; returns `size` as a plain int, to use instead of it."""
        size = operator.index(size)  # once, as a plain int: the code's `__index__` or `>` may lie
        if size > self.max_size:
            self._too_big(what, size)
        return size

    def math_bits(self, bits: float) -> None:
        """Refuse a math function whose result would have more bits than allowed."""
        if bits > self.max_size:
            self._too_big("an int with a bit length", int(bits))

    def factorial(self, n: int) -> int:
        """`math.factorial` with its result size capped."""
        n = operator.index(n)  # once, as a plain int: the code's `__index__` or `>` may lie
        if n > 2:
            self.math_bits(n * math.log2(n))
        return math.factorial(n)

    def prod(self, iterable: Any, /, *, start: Any = 1) -> Any:
        """`math.prod`, each product checked like `*`."""
        total = start
        for item in iterable:
            total = self.mul(total, item)
        return total

    def lcm(self, *integers: Any) -> int:
        """`math.lcm`, refused when its result could pass the size limit (at most the sum of the bits)."""
        plain_ints = [operator.index(n) for n in integers]
        self.math_bits(sum(n.bit_length() for n in plain_ints))
        return math.lcm(*plain_ints)


def _sum_len(a: Any, b: Any) -> int:
    """The length of `a + b` by the base types' own lengths (a subclass's `__len__` may lie)."""
    return (_true_len(a) or 0) + (_true_len(b) or 0)


def _bits(value: Fraction | int, part: str) -> int:
    """Bits of a Fraction's (or int's) numerator or denominator, read by the int method."""
    if isinstance(value, int):
        return int.bit_length(value) if part == "numerator" else 1
    number = _FRACTION_PARTS[part].__get__(value)  # the stored slot: a subclass's property may lie
    return int.bit_length(number) if isinstance(number, int) else 0


_FRACTION_PARTS: dict[str, Any] = {
    "numerator": Fraction.__dict__["_numerator"],
    "denominator": Fraction.__dict__["_denominator"],
}


def _whole(exponent: Any) -> int:
    """The int a `**` raises to: an int's, or a whole Fraction's numerator (its stored slot); else 0."""
    if type(exponent) is int:
        return exponent
    if isinstance(exponent, Fraction) and _FRACTION_PARTS["denominator"].__get__(exponent) == 1:
        numerator = _FRACTION_PARTS["numerator"].__get__(exponent)
        return int.__index__(numerator) if isinstance(numerator, int) else 0
    return 0


def _plain_int(value: Any, method: str) -> Any:
    """An int (a subclass too, unless it defines `method` itself) as a plain int; other values unchanged."""
    if isinstance(value, int) and getattr(type(value), method, None) is getattr(int, method):
        return int.__index__(value)
    return value


_MODPOW_WORK = 100_000_000
"""Exponent bits times modulus bits allowed for `pow(x, y, m)` (a 4,096-bit RSA step is 16,777,216)."""
