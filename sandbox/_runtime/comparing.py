"""What a class of the code's may define to compare and hash: plain `def`s, and nothing on a metaclass.

Apart from `sandbox._runtime.classes` because it is one rule with its own reason. The process keeps tables keyed by
classes and strings (the ABC caches, copyreg's reductors, `re`'s and `urlsplit`'s caches, typing's), and looks
its keys up with `__hash__` and `__eq__`, during a run and long after it. A metaclass of the code's with its own
`__hash__`/`__eq__` made a class pose as `re.Pattern` or `int` there, and a lambda (or a decorator's object, or
an `async def` whose coroutine is truthy) answers without a tick, so it kept answering after its run.
"""

from __future__ import annotations

import inspect
import types
from typing import Any, Final

from sandbox._compiler.compile import FILENAME
from sandbox._runtime.signals import forbid

_COMPARISONS: Final = frozenset("__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__".split())
"""What the process-wide tables (the ABC caches, `re`'s, `lru_cache`s, copyreg's) call on their keys, later too."""
_NOT_PLAIN: Final = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def check_comparisons(bases: tuple[type, ...], namespace: dict[str, Any]) -> None:
    """Refuse comparisons on a metaclass, and comparisons that are not a plain `def` (one that ticks).

    Classes are keys in process-wide tables (the ABC caches, copyreg's), so a class hashing and comparing as the
    code likes would answer the host's lookups (`isinstance(5, Iterable)` True). A lambda takes no tick, so it
    answers after its run too; a plain `def` stops there.
    """
    if _COMPARISONS.isdisjoint(namespace):  # most classes: one set operation
        return
    names = [name for name in namespace if name in _COMPARISONS]  # in order: the same refusal every time
    for base in bases:
        if issubclass(base, type):
            forbid(
                f"a metaclass cannot define `{names[0]}` in the sandbox: classes are keys in tables the whole "
                "process shares, so they compare by identity; compare an attribute of the class instead"
            )
    for name in names:
        value = namespace[name]
        if not (_is_plain_def(value) or (name == "__hash__" and value is None)):
            forbid(
                f"`{name}` must be a plain `def` in the sandbox (not a lambda, a generator, an `async def`, or "
                "another object a decorator returned): objects are compared after their run too"
            )


def _is_plain_def(value: object) -> bool:
    """Whether `value` is a function the code wrote with `def`, which takes a tick when called."""
    if type(value) is not types.FunctionType:
        return False
    code = value.__code__
    return code.co_filename == FILENAME and code.co_name != "<lambda>" and not code.co_flags & _NOT_PLAIN
