"""The names of the compile policy, shared by its two halves and by the runtime guards.

The dunders a class body may define, the dunders any object's may be read, the attributes hidden, and the words of a
refusal (`sandbox/_compiler/policy.py` refuses at compile time, `sandbox/_runtime/guards.py` at run time, in the same
words); with the two node builders every rewrite of the policy uses, the main one (`sandbox/_compiler/policy.py`) and
the `match` one (`sandbox/_compiler/patterns.py`).
"""

from __future__ import annotations

import ast

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

# Dunder methods a class body may define; each runs only as sandbox code.
ALLOWED_DUNDER_METHODS = frozenset(
    """__init__ __post_init__ __repr__ __str__ __format__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__
    __bool__ __len__ __iter__ __next__ __aiter__ __anext__ __reversed__ __contains__ __getitem__ __setitem__
    __delitem__ __missing__ __call__ __enter__ __exit__ __aenter__ __aexit__ __add__ __radd__ __iadd__ __sub__
    __rsub__ __isub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ __mod__
    __rmod__ __pow__ __rpow__ __neg__ __pos__ __abs__ __invert__ __and__ __rand__ __or__ __ror__ __xor__
    __rxor__ __matmul__ __int__ __float__ __index__ __round__ __getattr__""".split()
)

# Dunders any object's may be read: each yields a str or None, or (`__class__`) exactly what the sandbox's `type(x)`
# yields, so none leads further than code could already go (tests/sandbox/test_dunders.py).
READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__", "__module__", "__class__"})

# A real Future's or Task's loop, coroutine and frames: refused on any object, so no leaked Future leads further.
_LOOP_ATTRIBUTES = {"get_loop", "get_coro", "get_stack", "print_stack"}
FORBIDDEN_ATTRIBUTES = (
    INSPECT_ATTRIBUTES | {"mro", "f_lineno", "tb_lineno", "tb_lasti", "cr_suspended"} | _LOOP_ATTRIBUTES
)
_CALL_INSTEAD = {
    "__len__": "len(x)",
    "__str__": "str(x)",
    "__repr__": "repr(x)",
    "__format__": "format(x, spec)",
    "__iter__": "iter(x)",
    "__next__": "next(x)",
    "__contains__": "`k in x`",
    "__getitem__": "`x[k]`",
    "__setitem__": "`x[k] = v`",
    "__delitem__": "`del x[k]`",
    "__eq__": "`x == y`",
    "__hash__": "hash(x)",
    "__bool__": "bool(x)",
    "__call__": "x(...)",
    "__init__": "the class itself, `C(...)`",
    "__getattr__": "getattr(x, name)",
}
_INSTEAD = {
    "__dict__": "use `vars(x)` for a copy of an object's attributes and `setattr(x, name, value)` to set one",
    "__dataclass_fields__": "use `dataclasses.fields(x)`",
    "__annotations__": "annotations are not readable; pass what you need explicitly",
    "__traceback__": "use `type(e).__name__` and `str(e)` to describe an error",
    "__cause__": "catch the original error where it is raised",
    "__context__": "catch the original error where it is raised",
    **dict.fromkeys(
        ("__mro__", "__bases__", "__base__", "__subclasses__"), "use `isinstance(x, C)` or `issubclass(C, B)`"
    ),
}


def dunder_refusal(name: str) -> str:
    """Why `.name` (a dunder) is refused, and what to write instead."""
    if name in _CALL_INSTEAD:
        instead = f"call {_CALL_INSTEAD[name]} instead"
    elif name in _INSTEAD:
        instead = _INSTEAD[name]
    else:
        instead = "only `__name__`, `__qualname__`, `__doc__`, `__module__` and `__class__` can be read"
    return f"`.{name}` is not allowed: dunder attributes are private in the sandbox; {instead}"


def located(new: ast.AST, old: ast.AST) -> ast.AST:
    """`new`, placed where `old` is in the source."""
    # New child nodes get their positions from this one in the single fix_missing_locations at the end.
    return ast.copy_location(new, old)


def guard_call(func: str, *args: ast.expr) -> ast.Call:
    """A call of the guard named `func` with `args`."""
    return ast.Call(func=ast.Name(func, ast.Load()), args=list(args), keywords=[])
