"""What reading a dunder the sandbox allows on any object gives: names, docstrings, `__class__`, a base `__init__`.

Apart from the guards because it needs the sandbox's `type` (`sandbox._runtime.classes`): the guards import this module,
never the other way (it asks them only whether an object is the code's own, through `Owner`). Which dunders are
readable, and the refusals of the rest, belong to the compile policy (`READABLE_DUNDERS`, `dunder_refusal`).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Protocol

from sandbox._compiler.compile import MAIN
from sandbox._runtime.classes import real_bases, type_of
from sandbox._runtime.signals import forbid

if TYPE_CHECKING:
    from collections.abc import Callable


class Owner(Protocol):
    """What this module asks the run's guards: whether an object is the code's own."""

    def is_own(self, obj: object) -> bool:
        """Whether `obj` is a class the code defined, an instance of one, or one of its functions."""


_MAIN_LOCALS = f"{MAIN}.<locals>."


def read_dunder(guards: Owner, obj: object, name: str) -> Any:
    """`obj.name` for a readable dunder, or a standard class's `__init__` (for `Exception.__init__(self, msg)`).

    `__class__` is the sandbox's `type(obj)`; `__name__`, `__qualname__`, `__doc__` and `__module__` are given
    only when they are a plain str or None, so none of them hands the code an object.
    """
    if name == "__class__":
        return type_of(obj)
    if name == "__init__":
        return _base_init(guards, real_bases((obj,))[0])  # the caller checked `obj` is a class
    if name == "__name__" and type(obj).__name__ == "Module" and "__sandbox_module__" in vars(obj):
        return vars(obj)["__sandbox_module__"]  # a module facade, named as its module
    value = getattr(real_bases((obj,))[0] if isinstance(obj, type) else obj, name)  # `list.__doc__`: the real one's
    if value is not None and type(value) is not str:
        forbid(f"`.{name}` of this {type(obj).__name__!r} object is not a string, so the sandbox does not show it")
    if name == "__qualname__" and value is not None and value.startswith(_MAIN_LOCALS):
        return value[len(_MAIN_LOCALS) :]  # as if defined at module level, as the code wrote it
    return value


def _base_init(guards: Owner, real: type) -> Callable[..., None]:
    """A standard class's `__init__`, for the code's own instances only: a shared object stays as it is."""

    def __init__(instance: object, /, *args: Any, **kwargs: Any) -> None:
        if not (guards.is_own(instance) and isinstance(instance, real)):
            forbid(f"`{real.__name__}.__init__(obj, ...)` works only on an instance of the code's own subclass")
        real.__init__(instance, *args, **kwargs)  # type: ignore[misc]  # the base's, as `super().__init__` calls it

    return __init__


def own_instances_only(guards: Owner, cls: type, name: str, value: Any) -> Any:
    """The dunder `name` of the code's own class `cls`: its own as is, an inherited one for its own instances only.

    An inherited `__init__` (`uuid.UUID`'s) called on a shared object (`uuid.NAMESPACE_DNS`) would change it for
    every run; bound to the class (a classmethod), or not callable, it is handed out as is.
    """
    if guards.is_own(value) or not callable(value) or (isinstance(value, types.MethodType) and value.__self__ is cls):
        return value

    def method(instance: object, /, *args: Any, **kwargs: Any) -> Any:
        if not (guards.is_own(instance) and isinstance(instance, cls)):
            forbid(f"`{cls.__name__}.{name}(obj, ...)` works only on an instance of the code's own class")
        return value(instance, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method
