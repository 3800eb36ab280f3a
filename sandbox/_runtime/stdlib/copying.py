"""`copy.copy` and `copy.deepcopy` as the sandbox offers them: the standard algorithms, hooks from classes only.

The real ones ask the new object for `__setstate__` and the original for `__deepcopy__` by attribute, so a
class of the code's with `__getattr__` receives the original's real `__dict__` (a standard base's state: an
asyncio primitive's loop) or the memo, which keeps the originals of everything copied so far (the sandbox's
own state among them). Here every hook is looked up on the class, never through the object: the
code's classes cannot define `__deepcopy__`, `__reduce__` or `__setstate__`, so they copy by their state,
and the standard library's hooks get a fresh memo of their own. The sandbox's own objects (host function
proxies, module facades, task handles) are not copied: they hold the run's machinery, not data.
"""

from __future__ import annotations

import copyreg
import types
from typing import TYPE_CHECKING, Any

from sandbox._runtime.signals import forbid

if TYPE_CHECKING:
    from collections.abc import Callable

_ATOMIC: tuple[type, ...] = (
    type(None),
    int,
    float,
    bool,
    complex,
    bytes,
    str,
    types.CodeType,
    type,
    range,
    types.BuiltinFunctionType,
    types.FunctionType,
    types.EllipsisType,
    types.NotImplementedType,
    property,
)


class _Memo:
    """Copies made so far by id, and the originals kept alive so that no id is reused during the copy."""

    __slots__ = ("alive", "copies")

    def __init__(self) -> None:
        self.copies: dict[int, Any] = {}
        self.alive: list[Any] = []

    def remember(self, original: Any, copied: Any) -> None:
        self.copies[id(original)] = copied
        self.alive.append(original)


def copy(x: Any) -> Any:
    """A shallow copy of `x`, as `copy.copy` makes it."""
    cls = type(x)
    if cls in _ATOMIC or cls in (tuple, frozenset) or issubclass(cls, type) or _is_sandbox_object(cls):
        return x
    if cls in (list, dict, set, bytearray):
        return cls.copy(x)
    hook = _class_attribute(cls, "__copy__", x)
    if hook is not None:
        return hook()
    reduced = _reduced(x)
    if isinstance(reduced, str):
        return x
    return _rebuild(reduced, lambda item: item)


def deepcopy(x: Any, memo: Any = None) -> Any:
    """A deep copy of `x`, as `copy.deepcopy` makes it; the `memo` argument is refused."""
    if memo is not None:
        forbid("`copy.deepcopy(x, memo)` is not allowed in the sandbox; call `copy.deepcopy(x)`")
    return _copy(x, _Memo())


def _class_attribute(cls: type, name: str, obj: Any) -> Any:
    """`name` from the namespaces of `cls` and its bases, bound to `obj`; never through `__getattr__`."""
    for base in cls.__mro__:
        namespace = vars(base)
        if name in namespace:
            found = namespace[name]
            return found.__get__(obj, cls) if hasattr(type(found), "__get__") else found
    return None


def _is_sandbox_object(cls: type) -> bool:
    module = vars(cls).get("__module__")
    return isinstance(module, str) and str.startswith(module, "sandbox.")


def _copy(x: Any, memo: _Memo) -> Any:
    found = memo.copies.get(id(x), memo)
    if found is not memo:
        return found
    cls = type(x)
    if cls in _ATOMIC or issubclass(cls, type) or _is_sandbox_object(cls):
        return x
    if cls is list:
        y: Any = []
        memo.remember(x, y)
        y.extend(_copy(item, memo) for item in x)
        return y
    if cls is dict:
        y = {}
        memo.remember(x, y)
        for key, value in x.items():
            y[_copy(key, memo)] = _copy(value, memo)
        return y
    if cls is tuple:
        return _copy_tuple(x, memo)
    if cls is types.MethodType:
        y = cls(x.__func__, _copy(x.__self__, memo))
    else:
        hook = _class_attribute(cls, "__deepcopy__", x)
        if hook is None:
            return _reconstruct(x, memo)
        y = hook({})  # a fresh memo: the standard library's hooks never see the run's
    memo.remember(x, y)
    return y


def _copy_tuple(x: tuple[Any, ...], memo: _Memo) -> Any:
    items = [_copy(item, memo) for item in x]
    found = memo.copies.get(id(x), memo)  # a cycle through the tuple copied it already
    if found is not memo:
        return found
    y = x if all(a is b for a, b in zip(items, x, strict=True)) else tuple(items)
    memo.remember(x, y)  # unchanged ones too: a tuple shared many times (a DAG) is copied once, not once per path
    return y


def _reduced(x: Any) -> Any:
    cls = type(x)
    # by identity: a lookup by hash and `==` would let a class pose as `re.Pattern` and get its reductor
    reductor = next((found for key, found in copyreg.dispatch_table.items() if key is cls), None)
    if reductor is not None:
        return reductor(x)
    reduce_ex = _class_attribute(cls, "__reduce_ex__", x)
    if reduce_ex is None:
        raise TypeError(f"cannot copy a {cls.__name__!r} object")
    return reduce_ex(4)


def _reconstruct(x: Any, memo: _Memo) -> Any:
    reduced = _reduced(x)
    if isinstance(reduced, str):
        return x
    return _rebuild(reduced, lambda item: _copy(item, memo), lambda y: memo.remember(x, y))


def _rebuild(reduced: Any, copied: Callable[[Any], Any], made: Callable[[Any], None] = lambda _: None) -> Any:
    """The object a `__reduce_ex__` value describes, its parts passed through `copied` (a deep copy, or as they are)."""
    func, args, *rest = reduced
    state, listiter, dictiter = (*rest, None, None, None)[:3]
    y = func(*copied(args))
    made(y)
    if state is not None:
        state = copied(state)
        setstate = _class_attribute(type(y), "__setstate__", y)
        if setstate is not None:
            setstate(state)
        else:
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                y.__dict__.update(state)
            for key, value in (slots or {}).items():
                setattr(y, key, value)
    if listiter is not None:
        for item in listiter:
            y.append(copied(item))
    if dictiter is not None:
        for key, value in dictiter:
            y[copied(key)] = copied(value)
    return y
