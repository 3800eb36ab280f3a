"""The `typing` module as the code sees it, and what a typing subscription may take.

`typing` keeps process-wide state. Its subscriptions (`Optional[X]`, `Literal[...]`, `Box[T]`) are cached by
their arguments, so an argument whose `__hash__`/`__eq__` are the code's (an instance, or a class whose
metaclass is the code's) would answer for everyone's later lookups: afterwards `Optional[complex]` would be
the code's object in the host. Such arguments are refused. `@overload` keeps every overloaded function in a
registry for the life of the process, so the facade's `overload` registers nothing; `runtime_checkable`
changes the class it is given, so it takes only the code's own.
"""

from __future__ import annotations

import types
import typing
from typing import TYPE_CHECKING, Any

from sandbox._runtime.classes import SANDBOX_CLASS_MARK
from sandbox._runtime.signals import forbid

if TYPE_CHECKING:
    from sandbox._runtime.guards import Guards

_NAMES = (
    "Any Optional Union List Dict Tuple Set FrozenSet Iterable Iterator Callable Literal TypedDict NamedTuple "
    "Protocol TypeVar Generic cast Sequence Mapping MutableMapping MutableSequence Awaitable Coroutine "
    "AsyncIterator AsyncIterable AsyncGenerator Generator ClassVar Final Annotated Type DefaultDict Deque "
    "NotRequired Required Self TypeAlias Hashable Sized NoReturn Never LiteralString ParamSpec"
).split()
_MEMBERS = {name: getattr(typing, name) for name in _NAMES if hasattr(typing, name)}


def _overloaded(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "You should not call an overloaded function. A series of @typing.overload-decorated functions "
        "outside a stub module should always be followed by an implementation that is not @overload-ed."
    )


def overload(func: Any) -> Any:
    """`typing.overload`: marks a signature; the overload registry is left alone (it is process-wide)."""
    return _overloaded


def make_typing(guards: Guards) -> dict[str, Any]:
    """The `typing` facade of one run."""

    def runtime_checkable(cls: Any) -> Any:
        if not guards.is_own(cls):
            forbid("`typing.runtime_checkable` works only on the code's own protocols")
        return typing.runtime_checkable(cls)

    return {**_MEMBERS, "overload": overload, "runtime_checkable": runtime_checkable, "TYPE_CHECKING": False}


def _is_typing(obj: object) -> bool:
    """Whether `obj[key]` goes through a typing cache: a typing object, or a class built on `Generic`."""
    if isinstance(obj, type):
        module = vars(obj).get("__module__")
        return (type(module) is str and module == "typing") or any(base is typing.Generic for base in obj.__mro__)
    module = vars(type(obj)).get("__module__")
    return type(module) is str and module == "typing"


def _hashes_by_the_code(item: object) -> bool:
    """Whether `item`'s `__hash__` or `__eq__` is a method of a class the code defined."""
    for base in type(item).__mro__:
        namespace = vars(base)
        if SANDBOX_CLASS_MARK in namespace and ("__hash__" in namespace or "__eq__" in namespace):
            return True
    return False


def _check_arguments(key: object) -> None:
    items, seen = [key], set()
    while items:
        item = items.pop()
        if id(item) in seen:  # a list that holds itself
            continue
        seen.add(id(item))
        kind = type(item)  # by identity: a class's metaclass could answer `==` as it likes
        if kind is types.GenericAlias or kind is types.UnionType:  # `list[X]` hashes and compares by its arguments
            items.extend(kind.__dict__["__args__"].__get__(item))
        elif isinstance(item, tuple | frozenset | list):  # a subclass's hash is its items' too: read them in C
            base: Any = tuple if isinstance(item, tuple) else frozenset if isinstance(item, frozenset) else list
            items.extend(base.__iter__(item))
        if _hashes_by_the_code(item):
            forbid(
                "a typing subscription cannot take an object whose `__hash__` or `__eq__` the code defined: "
                "typing's caches are shared by the whole process"
            )


def check_subscription(obj: object, key: object) -> None:
    """Refuse `obj[key]` when it would put an object hashed by the code's methods into a typing cache."""
    if _is_typing(obj):
        _check_arguments(key)
