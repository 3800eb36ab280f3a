"""Attributes of `super` objects, through the same guard as the object's own: a super object skips methods.

`super(C, x).name` is `x.name` looked up past `C` in the class order, so what it skips must be the code's own
classes only: skipping a standard class's or a facade's method would bypass the checks that method makes
(`super(Timeout, t).reschedule`, `super(ChainMap, m).__getitem__`). What it finds is then handed out as the
guard hands out `x.name`: the size-checked `str.format`, a copy of a shared table, a base `__init__` that works on
the code's own instances only.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from sandbox._compiler.names import READABLE_DUNDERS
from sandbox._runtime.classes import SANDBOX_CLASS_MARK
from sandbox._runtime.dunders import own_instances_only, read_dunder
from sandbox._runtime.signals import forbid

if TYPE_CHECKING:
    from sandbox._runtime.guards import Rules


def super_attribute(guards: Rules, sup: super, name: str, *default: object) -> Any:
    """`sup.name`, with the rules of `name` on the object `sup` is bound to."""
    if name in READABLE_DUNDERS:
        return read_dunder(guards, sup, name)
    target: Any = getattr(sup, "__self__")  # noqa: B009  # typeshed does not know super's attributes
    cls: type | None = getattr(sup, "__self_class__")  # noqa: B009
    if target is None or cls is None:
        forbid("`super(C)` without an object is not available in the sandbox; write `super()` inside a method")
    order = cls.__mro__
    start = getattr(sup, "__thisclass__")  # noqa: B009
    skipped = order[: order.index(start) + 1] if start in order else order
    if not all(SANDBOX_CLASS_MARK in vars(kind) for kind in skipped):
        forbid(
            "`super(...)` works in the sandbox only inside the code's own classes: it would skip a standard "
            "class's own method; call the method on the object itself"
        )
    guards.check_attribute(target, name)
    value = getattr(sup, name, *default)
    if isinstance(value, types.MethodType) and guards.is_own(value.__func__):
        return value  # an override in one of the code's own classes
    if name.startswith("__"):
        return own_instances_only(guards, target, name, value) if isinstance(target, type) else value
    return guards.wrapped(target, name, value)
