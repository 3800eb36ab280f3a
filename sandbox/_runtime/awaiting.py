"""Awaitables the code may only `await`, never drive by hand (`send`, `throw`, `next()`, iteration).

Driving an awaitable by hand hands out what it waits on, and for anything that reaches asyncio that is the
event loop's own Future (its `get_loop()` is the real loop). Coroutines have `send`/`throw`; the awaitables
an async generator makes (`asend`, `athrow`, `aclose`, `anext()`) are iterators as well. So the code gets the
latter wrapped in a `Lazy`, which only `await` can use, and `send`/`throw` are allowed only where driving by
hand is ordinary Python: plain generators and the code's own objects. Every other type that defines them is
refused, whatever it is (an allow-list: a new awaitable type is refused until it is known to be safe).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Generator

DRIVING = frozenset({"send", "throw"})
"""The methods that drive a generator or an awaitable by hand."""
ASYNC_GENERATOR_AWAITABLES = frozenset({"asend", "athrow", "aclose"})
"""An async generator's methods that make an awaitable (an iterator too, so `next()` would drive it)."""


class Lazy:
    """An awaitable that makes its coroutine only when awaited, so a forgotten `await` leaves nothing behind."""

    __slots__ = ("_factory",)

    def __init__(self, factory: Callable[[], Awaitable[Any]]) -> None:
        self._factory = factory

    def __await__(self) -> Generator[Any, None, Any]:
        return self._factory().__await__()

    def __repr__(self) -> str:
        return "<awaitable: use `await`>"


def may_drive(obj: object, *, own: bool) -> bool:
    """Whether the code may call `obj.send`/`obj.throw`: a plain generator, its own object, or no such method."""
    if own or isinstance(obj, types.GeneratorType):
        return True
    return not any(hasattr(type(obj), name) for name in DRIVING)  # a proxy answering any name is not driven


def awaited_only(method: Callable[..., Any]) -> Callable[..., Lazy]:
    """`method`, with the awaitable it returns usable only by `await`."""

    def call(*args: Any, **kwargs: Any) -> Lazy:
        awaitable = method(*args, **kwargs)
        return Lazy(lambda: awaitable)

    return call


def anext_(iterator: Any, *default: Any) -> Lazy:
    """The `anext` builtin, whose awaitable only `await` can use."""
    awaitable = anext(iterator, *default)
    return Lazy(lambda: awaitable)
