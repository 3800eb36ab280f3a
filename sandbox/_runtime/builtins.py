"""The builtins of runs: a curated set, with guarded `getattr`, `pow`, `format`, `print` and `__import__`.

Missing on purpose: `open`, `input`, `exec`, `eval`, `compile`, `globals`, `locals`, `breakpoint`,
`memoryview`, `help` and `id`. Everything here is either a plain value type or guarded (`vars(obj)` is a copy of an
instance's attributes, for the code's own classes only).
"""

from __future__ import annotations

import builtins
import collections
import functools
from typing import TYPE_CHECKING, Any, Final, cast

from sandbox._runtime.awaiting import anext_
from sandbox._runtime.classes import SIZE_GUARDS, SIZED, SafeType, sorted_for
from sandbox._runtime.guards import rules_for
from sandbox._runtime.signals import ForbiddenError, exit_run
from sandbox._runtime.ticking import ticking_builtins
from sandbox._runtime.ticks import Budget
from sandbox.limits import around_cut, output_message

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._runtime.guards import Guards

_PLAIN = """
abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict divmod enumerate filter float
frozenset hash hex int isinstance issubclass iter len list map max min next object oct ord property range repr
reversed round set slice sorted staticmethod str sum super tuple zip aiter
ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup EOFError Exception ExceptionGroup
GeneratorExit ImportError IndexError KeyError KeyboardInterrupt LookupError MemoryError ModuleNotFoundError
NameError NotImplementedError OSError OverflowError PermissionError FileNotFoundError ConnectionError
RecursionError RuntimeError StopAsyncIteration StopIteration SystemExit TimeoutError TypeError UnboundLocalError
UnicodeDecodeError UnicodeEncodeError UnicodeError ValueError ZeroDivisionError
NotImplemented Ellipsis __build_class__
""".split()
PLAIN_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in _PLAIN}


class Output:
    """Printed output of one run: its head and tail kept within `limit` characters, the run stopped past `flood`."""

    def __init__(self, limit: int, flood: int, guards: Guards) -> None:
        self.head_room = limit - limit // 2
        self.tail_room = limit // 2
        self.flood = flood
        self.guards = guards
        self.head: list[str] = []
        self.tail: collections.deque[str] = collections.deque()
        self.head_size = 0
        self.tail_size = 0
        self.printed = 0
        """Characters printed in all, the cut ones included."""

    def print(
        self, *args: object, sep: str | None = " ", end: str | None = "\n", file: object = None, flush: bool = False
    ) -> None:
        """The model's `print`: same formatting as CPython's, written to the run's output."""
        if file is not None:
            raise TypeError("print(file=...) is not available in the sandbox; printed output is captured as is")
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        if type(sep) is not str or type(end) is not str:
            raise TypeError("sep and end must be None or a string")
        texts = [str(arg) for arg in args]
        if sum(map(len, texts)) + len(sep) * len(texts) + len(end) <= max(
            self.head_room - self.head_size, self.tail_room
        ):
            self.write(sep.join(texts) + end)  # joined, it is no longer than what is kept of it
            return
        for part in [*_between(texts, sep), end]:  # never joined: a few references to one big string would be huge
            self.write(part)

    def write(self, text: str) -> None:
        """Add text: the head fills first, then the tail keeps the latest; past the flood limit the run stops."""
        self.printed += len(text)
        room = self.head_room - self.head_size
        if room > 0:
            taken = text if len(text) <= room else text[:room]
            self.head.append(taken)
            self.head_size += len(taken)
            text = text[len(taken) :]
        if text and self.tail_room:
            kept = text if len(text) <= self.tail_room else text[-self.tail_room :]
            self.tail.append(kept)
            self.tail_size += len(kept)
            while self.tail_size - len(self.tail[0]) >= self.tail_room:
                self.tail_size -= len(self.tail.popleft())
        if self.printed > self.flood:
            self.guards.stop("output_limit", output_message(self.flood))

    def text(self) -> str:
        """Everything printed, or its head and tail with a marker saying how much was cut between them."""
        head, tail = "".join(self.head), "".join(self.tail)
        tail = tail[len(tail) - self.tail_room :] if len(tail) > self.tail_room else tail
        cut = self.printed - self.head_size - len(tail)
        return head + tail if cut <= 0 else around_cut(head, cut, tail)


def _between(texts: list[str], sep: str) -> list[str]:
    """`texts` with `sep` between each two."""
    parts: list[str] = []
    for index, text in enumerate(texts):
        if index:
            parts.append(sep)
        parts.append(text)
    return parts


def _dir(obj: object = None) -> list[str]:
    if obj is None:
        raise TypeError("dir() without an argument is not available in the sandbox; call dir(obj)")
    return [name for name in dir(obj) if not name.startswith("_")]


_SHARED: dict[str, Any] = {
    **PLAIN_BUILTINS,
    "type": SafeType,
    **{real.__name__: sized for real, sized in SIZED.items()},
    "anext": anext_,
    "dir": _dir,
    "exit": exit_run,
    "quit": exit_run,
}
"""The builtins that hold no state of a run: the same objects in every run's dict (a fresh dict each run)."""
_IMPLICIT = frozenset({"__build_class__"})
"""Shared builtins the interpreter looks up by itself (a `class` statement), never by a name in the code."""
TICKING: Final = frozenset(ticking_builtins(cast("Guards", Budget(operations=0, deadline=0.0, timeout=0.0))))
"""The builtins that take the run's ticks (`map`, `sum`, ...): bound to each run, never shared."""


@functools.lru_cache(maxsize=64)
def _rule_builtins(max_size: int) -> dict[str, Any]:
    """The guarded builtins that hold nothing of a run, bound to the rules of runs with this `max_size`."""
    rules = rules_for(max_size)

    def vars_(*obj: object) -> dict[str, Any]:
        if len(obj) != 1:
            raise TypeError("vars() without an argument is not available in the sandbox; call vars(obj)")
        if isinstance(obj[0], type) or not rules.is_own(obj[0]) or not hasattr(obj[0], "__dict__"):
            raise ForbiddenError("`vars(x)` works on instances of the code's own classes only; read attributes by name")
        # a copy; `_private` names only where no standard-library base keeps its state in the instance
        hidden = "__" if all(rules.is_own(c) or c.__module__ == "builtins" for c in type(obj[0]).__mro__) else "_"
        return {k: v for k, v in obj[0].__dict__.items() if type(k) is str and not k.startswith(hidden)}

    def getattr_(obj: object, name: str, *default: object) -> Any:
        try:
            return rules.getattr(obj, name)
        except ForbiddenError:
            raise  # a refusal is never quietly replaced by the default
        except AttributeError:
            if default:
                return default[0]
            raise

    return {
        "sorted": sorted_for(rules),
        "getattr": getattr_,
        "hasattr": rules.hasattr,
        "setattr": rules.setattr,
        "delattr": rules.delattr,
        "pow": rules.pow,
        "format": rules.builtin_format,
        "repr": rules.repr,
        "ascii": rules.ascii,
        "vars": vars_,
    }


def shared_builtins(names: frozenset[str], max_size: int) -> dict[str, Any]:
    """The builtins that hold nothing of a run, for code that refers to `names`: only those among them.

    The code reaches builtins only by name (no `globals()`, frames or `__builtins__`), so a builtin it never names
    is one it cannot use; copying fewer touches less memory in a run that starts cold. A run adds its own
    (`run_builtins`); the ticking ones are never here, so one a run did not add is missing, not unticked.
    """
    every = {**_SHARED, **_rule_builtins(max_size)}
    shared = {
        name: value for name, value in every.items() if (name in names or name in _IMPLICIT) and name not in TICKING
    }
    shared[SIZE_GUARDS] = rules_for(max_size)  # what the sized constructors check against (`sandbox._runtime.classes`)
    return shared


def run_builtins(
    shared: dict[str, Any],
    guards: Guards,
    *,
    importer: Callable[..., Any],
    output: Output | None,
    ticking: frozenset[str],
) -> dict[str, Any]:
    """One run's builtins: `shared` (`shared_builtins`), its importer and `print`, and the ticking ones it names."""
    made = shared.copy()
    made["__import__"] = importer
    if output is not None:
        made["print"] = output.print
    if ticking:
        made.update({name: value for name, value in ticking_builtins(guards).items() if name in ticking})
    return made
