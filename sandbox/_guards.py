"""Runtime guards: the functions the policy's rewritten code calls (`_getattr_`, `_tick_`, `_mul_`, ...).

One `Guards` is made per run. It owns the operation budget, knows which classes the run created (their
`_private` attributes are the code's own), and caps the size of values built by a single operation.
"""

from __future__ import annotations

import decimal
import functools
import inspect
import math
import operator
import re
import string
import textwrap
import time
import types
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NoReturn, cast

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from sandbox._compile import FILENAME, MAIN
from sandbox._policy import ALLOWED_DUNDER_METHODS, FORBIDDEN_ATTRIBUTES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

_MAIN_LOCALS = f"{MAIN}.<locals>."
SANDBOX_CLASS_MARK = "__sandbox_class__"
_TICK_CHUNK = 1024
_NAMEDTUPLE_ATTRIBUTES = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
# Objects of the standard library whose attributes are settings the code may change (`ctx.prec = 5`).
_WRITABLE = (decimal.Context, textwrap.TextWrapper)
_SEQUENCES = (str, bytes, bytearray, list, tuple)
_SMALL_CONTAINERS = (list, tuple, str, dict, set, frozenset, bytes)
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


class StopRun(GeneratorExit):  # a signal, not an error the code can handle
    """Ends the run: a limit was reached.

    A BaseException, so `except Exception` cannot keep it; a GeneratorExit, so a generator being closed (by the
    garbage collector, say) while it runs out of budget closes quietly instead of reporting an error.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def again(self) -> StopRun:
        """A fresh signal saying the same: raising one instance from many frames chains its tracebacks."""
        return StopRun(self.kind, self.message)


class ForbiddenError(AttributeError):
    """The code reached for something the sandbox hides."""


class ForbiddenImportError(ImportError):
    """The code imported a module the sandbox does not offer."""


class SizeLimitError(MemoryError):
    """A single operation would build a value larger than `Limits.max_size`."""


def forbid(message: str) -> NoReturn:
    """Raise the sandbox's refusal with a message for the model."""
    raise ForbiddenError(message)


class Guards:
    """The per-run guard functions and the operation budget."""

    def __init__(self, *, operations: int, deadline: float, max_size: int) -> None:
        self.max_size = max_size
        self.operations_left = operations
        self.deadline = deadline
        self.stopped: StopRun | None = None
        self.coroutines: list[Any] = []
        self._ticks_left = 0
        self.tick = self._make_tick()

    # -- budget ------------------------------------------------------------------------------------------

    def _make_tick(self) -> Callable[[], None]:
        left = 0

        def _tick_() -> None:
            nonlocal left
            left -= 1
            if left <= 0:
                left = self._refill()

        def _drain() -> None:
            nonlocal left
            left = 0

        self._drain = _drain
        return _tick_

    def _refill(self) -> int:
        if self.stopped is not None:
            raise self.stopped.again()
        if self.operations_left <= 0:
            self.stop("timeout", "the code used its whole operation budget (an endless loop?); do less work per run")
        if time.monotonic() > self.deadline:
            self.stop("timeout", "the code ran out of time; do less work per run, or split it over several runs")
        self.operations_left -= _TICK_CHUNK
        return _TICK_CHUNK

    def stop(self, kind: str, message: str) -> NoReturn:
        """Stop the run now and at every later tick (a bare `except:` cannot swallow it)."""
        raise self.halt(kind, message)

    def halt(self, kind: str, message: str) -> StopRun:
        """Make every later tick stop the run; returns the signal (the first one set wins)."""
        if self.stopped is None:
            self.stopped = StopRun(kind, message)
        self._drain()
        return self.stopped.again()

    def finish(self) -> None:
        """The run is over: any of its code that still runs (a generator being closed) stops at once."""
        self.stopped = StopRun("timeout", "the run is over")
        self._drain()

    def grace(self, *, operations: int, seconds: float) -> None:
        """A small fresh budget, for the model's code the host itself runs after a stop (an exception's `__str__`)."""
        self.stopped = None
        self.operations_left = operations
        self.deadline = time.monotonic() + seconds
        self._drain()

    # -- attributes and items ----------------------------------------------------------------------------

    def is_own(self, obj: object) -> bool:
        """Whether `obj` is a class the code defined, an instance of one, or one of its functions."""
        if isinstance(obj, type):
            return bool(getattr(obj, SANDBOX_CLASS_MARK, False))
        if isinstance(obj, types.FunctionType):
            return obj.__code__.co_filename == FILENAME
        return bool(getattr(type(obj), SANDBOX_CLASS_MARK, False))

    def getattr(self, obj: object, name: str, *default: object) -> Any:
        """`obj.name`, unless the name is private to something the code did not define."""
        if type(name) is not str:
            raise TypeError(f"attribute name must be a string, not {type(name).__name__!r}")
        if name.startswith("__"):
            # `super().__init__(...)` and a class's own dunders; never a stdlib object's (it may be shared)
            if name not in ALLOWED_DUNDER_METHODS or not (type(obj) is super or self.is_own(obj)):
                forbid(f"`.{name}` is not allowed: dunder attributes are private in the sandbox")
        elif name.startswith("_"):
            if not (self.is_own(obj) or (name in _NAMEDTUPLE_ATTRIBUTES and _is_tuple_or_tuple_class(obj))):
                forbid(f"`.{name}` is not allowed: names starting with `_` are private in the sandbox")
        elif name in FORBIDDEN_ATTRIBUTES:
            forbid(f"`.{name}` is not allowed: frames, code and the class hierarchy are hidden in the sandbox")
        kind = type(obj)
        if (kind is str or obj is str) and name in _STR_METHODS:
            return self._str_method(obj, name)
        if (kind is bytes or kind is bytearray or obj is bytes or obj is bytearray) and name in _SIZED_METHODS:
            return self._str_method(obj, name)
        if kind is int and name == "to_bytes":
            return self._int_to_bytes(cast("int", obj))
        return getattr(obj, name, *default)

    def hasattr(self, obj: object, name: str) -> bool:
        """`hasattr` that answers False for hidden attributes instead of revealing them."""
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def setattr(self, obj: object, name: str, value: object) -> None:
        """`setattr`, only on the code's own objects and never a dunder."""
        if type(name) is not str or name.startswith("__"):
            forbid(f"setting `{name}` is not allowed: dunder attributes are private in the sandbox")
        setattr(self.write(obj), name, value)

    def delattr(self, obj: object, name: str) -> None:
        """`delattr`, with the same rules as `setattr`."""
        if type(name) is not str or name.startswith("__"):
            forbid(f"deleting `{name}` is not allowed: dunder attributes are private in the sandbox")
        delattr(self.write(obj), name)

    def write(self, obj: object) -> Any:
        """The target of `obj.x = v` / `obj[k] = v`: attribute writes only on the code's own objects."""
        if type(obj) in (dict, list) or self.is_own(obj) or isinstance(obj, _WRITABLE):
            return obj
        return _ItemsOnly(obj)

    @staticmethod
    def getitem(obj: Any, key: object) -> Any:
        """`obj[key]`."""
        return obj[key]

    def getiter(self, obj: Iterable[Any]) -> Iterable[Any]:
        """The iterable of a `for` statement (the loop body is budgeted by its own tick)."""
        return obj

    def citer(self, obj: Iterable[Any]) -> Iterable[Any]:
        """The iterable of a comprehension: lazy or large ones are budgeted item by item."""
        if type(obj) in _SMALL_CONTAINERS or (type(obj) is range and len(obj) <= _TICK_CHUNK):
            return obj
        return self._ticking(iter(obj))

    def _ticking(self, iterator: Iterator[Any]) -> Iterator[Any]:
        tick = self.tick
        for item in iterator:
            tick()
            yield item

    def unpack_sequence(self, it: Any, spec: Any, _getiter_: Any) -> Any:
        """Tuple assignment (RestrictedPython's guard)."""
        return guarded_unpack_sequence(it, spec, self.getiter)  # type: ignore[no-untyped-call]

    def iter_unpack_sequence(self, it: Any, spec: Any, getiter: Any) -> Any:
        """Tuple targets of a `for` or comprehension (RestrictedPython's guard)."""
        return guarded_iter_unpack_sequence(it, spec, getiter)  # type: ignore[no-untyped-call]

    @staticmethod
    def apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A call with `*args` or `**kwargs`."""
        return func(*args, **kwargs)

    def metaclass(self, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> type:
        """Create a class of the code's, with the metaclass its bases call for, and remember it as the code's."""
        from sandbox._types import check_class_namespace, real_bases  # _types builds on this module

        bases = real_bases(bases)
        meta: type = type
        for base in bases:
            candidate = type(base)
            if issubclass(candidate, meta):
                meta = candidate
        check_class_namespace(namespace)
        qualname = namespace.get("__qualname__")
        if isinstance(qualname, str) and qualname.startswith(_MAIN_LOCALS):  # as if defined at module level
            namespace["__qualname__"] = qualname[len(_MAIN_LOCALS) :]
        cls: type = meta(name, bases, namespace, **kwargs)
        type.__setattr__(cls, SANDBOX_CLASS_MARK, True)
        return cls

    # -- sizes ---------------------------------------------------------------------------------------------

    def _too_big(self, what: str, size: int) -> NoReturn:
        raise SizeLimitError(f"this would create {what} of about {size:,}; the limit is {self.max_size:,}")

    def add(self, a: Any, b: Any) -> Any:
        """`a + b` that refuses to concatenate past the size limit."""
        kind = type(a)
        if kind is not int and kind is not float and isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
            self.check_length(len(a) + len(b), "a sequence of length")
        return a + b

    def iadd(self, a: Any, b: Any) -> Any:
        """`a += b`, guarded like `a + b`."""
        kind = type(a)
        if kind is int or kind is float:
            return a + b
        if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
            self.check_length(len(a) + len(b), "a sequence of length")
        return _INPLACE["+="](a, b)

    def imul(self, a: Any, b: Any) -> Any:
        """`a *= b`, guarded like `a * b`."""
        self._check_mul(a, b)
        return _INPLACE["*="](a, b)

    def ipow(self, a: Any, b: Any) -> Any:
        """`a **= b`, guarded like `a ** b`."""
        return self.pow(a, b)

    def ilshift(self, a: Any, b: Any) -> Any:
        """`a <<= b`, guarded like `a << b`."""
        return self.lshift(a, b)

    def imod(self, a: Any, b: Any) -> Any:
        """`a %= b`, guarded like `a % b`."""
        return self.mod(a, b)

    def coroutine(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap an `async def` of the code's so its coroutines are known, and closed if never awaited."""

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            coro = function(*args, **kwargs)
            if inspect.iscoroutine(coro):  # held until the run ends, so one never awaited is closed, not warned about
                self.coroutines.append(coro)
            return coro

        return call

    def close_unawaited(self) -> None:
        """Close the code's coroutines that never started (what CPython would warn about in the host)."""
        for coro in self.coroutines:
            if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
                coro.close()
        self.coroutines.clear()

    def mul(self, a: Any, b: Any) -> Any:
        """`a * b` that refuses to build huge ints, strings and sequences."""
        if type(a) is float or type(b) is float:
            return a * b
        self._check_mul(a, b)
        return a * b

    def _check_mul(self, a: Any, b: Any) -> None:
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            if a.bit_length() + b.bit_length() > self.max_size:
                self._too_big("an int with a bit length", a.bit_length() + b.bit_length())
        elif ta is int or tb is int:
            count, seq = (a, b) if ta is int else (b, a)
            if isinstance(seq, (str, bytes, bytearray, list, tuple)) and len(seq) * count > self.max_size:
                self._too_big("a sequence of length", len(seq) * count)

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
        if kind is str or kind is bytes:
            self._check_percent(a.decode("latin-1") if isinstance(a, bytes) else str(a), b)
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
            self._check_mul(x, y)
        elif op == "+=" and isinstance(x, _SEQUENCES) and isinstance(y, _SEQUENCES):
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
        method = _STR_METHODS[name] if name in _STR_METHODS else _SIZED_METHODS[name]
        if isinstance(obj, type):  # `str.format(template, ...)` and friends, unbound
            return lambda self_, *args, **kwargs: method(self, self_, *args, **kwargs)
        return lambda *args, **kwargs: method(self, obj, *args, **kwargs)

    def _int_to_bytes(self, value: int) -> Callable[..., bytes]:
        def to_bytes(length: int = 1, byteorder: Any = "big", *, signed: bool = False) -> bytes:
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

    def names(self) -> dict[str, object]:
        """The guard functions under the names the policy's rewritten code uses."""
        return {
            "_getattr_": self.getattr,
            "_getitem_": self.getitem,
            "_write_": self.write,
            "_getiter_": self.getiter,
            "_citer_": self.citer,
            "_iter_unpack_sequence_": self.iter_unpack_sequence,
            "_unpack_sequence_": self.unpack_sequence,
            "_apply_": self.apply,
            "_inplacevar_": self.inplace,
            "_tick_": self.tick,
            "_mul_": self.mul,
            "_pow_": self.pow,
            "_lshift_": self.lshift,
            "_mod_": self.mod,
            "_format_": self.format,
            "_add_": self.add,
            "_iadd_": self.iadd,
            "_imul_": self.imul,
            "_ipow_": self.ipow,
            "_ilshift_": self.ilshift,
            "_imod_": self.imod,
            "_coroutine_": self.coroutine,
            "__metaclass__": self.metaclass,
        }


def _is_tuple_or_tuple_class(obj: object) -> bool:
    return isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))


class _ItemsOnly:
    """What `_write_` returns for objects the code does not own: item writes pass, attribute writes fail."""

    __slots__ = ("_target",)
    _target: Any

    def __init__(self, target: object) -> None:
        object.__setattr__(self, "_target", target)

    def __setitem__(self, key: object, value: object) -> None:
        self._target[key] = value

    def __delitem__(self, key: object) -> None:
        del self._target[key]

    def __setattr__(self, name: str, value: object) -> None:
        forbid(f"cannot set `.{name}` on {_describe(self._target)}: only objects the code created can be changed")

    def __delattr__(self, name: str) -> None:
        forbid(f"cannot delete `.{name}` from {_describe(self._target)}")


def _describe(obj: object) -> str:
    name = getattr(obj, "__sandbox_module__", None) if type(obj).__name__ == "Module" else None
    return f"module {name!r}" if name else f"a {type(obj).__name__!r} object"


class _GuardedFormatter(string.Formatter):
    """`str.format` whose fields go through the sandbox's attribute and item guards."""

    def __init__(self, guards: Guards) -> None:
        self.guards = guards

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


def _format(guards: Guards, template: str, *args: Any, **kwargs: Any) -> str:
    return _GuardedFormatter(guards).vformat(template, args, kwargs)


def _format_map(guards: Guards, template: str, mapping: Any) -> str:
    return _GuardedFormatter(guards).vformat(template, (), mapping)


def _padded(name: str) -> Callable[..., Any]:
    def method(guards: Guards, obj: Any, width: int, *args: Any) -> Any:
        guards.check_length(width, "a string of length")
        return getattr(obj, name)(width, *args)

    return method


def _expandtabs(guards: Guards, obj: Any, tabsize: int = 8) -> Any:
    guards.check_length(len(obj) * max(tabsize, 1), "a string of length")
    return obj.expandtabs(tabsize)


def _replace(guards: Guards, obj: Any, old: Any, new: Any, count: int = -1) -> Any:
    hits = obj.count(old) if old else len(obj) + 1
    if count >= 0:
        hits = min(hits, count)
    guards.check_length(len(obj) + hits * max(len(new) - len(old), 0), "a string of length")
    return obj.replace(old, new, count)


def _join(guards: Guards, obj: Any, iterable: Any) -> Any:
    items = list(iterable)
    guards.check_length(
        sum(len(item) for item in items if isinstance(item, (str, bytes, bytearray)))
        + len(obj) * max(len(items) - 1, 0),
        "a string of length",
    )
    return obj.join(items)


_SIZED_METHODS: dict[str, Callable[..., Any]] = {
    "join": _join,
    "ljust": _padded("ljust"),
    "rjust": _padded("rjust"),
    "center": _padded("center"),
    "zfill": _padded("zfill"),
    "expandtabs": _expandtabs,
    "replace": _replace,
}
_STR_METHODS: dict[str, Callable[..., Any]] = {**_SIZED_METHODS, "format": _format, "format_map": _format_map}
