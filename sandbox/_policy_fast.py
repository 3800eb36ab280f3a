"""The policy's inline fast paths: `%`, `+`, `*` and `t += v` on plain ints, without a call to their size guard.

A guard call costs about as much as a whole CPython loop body, and most arithmetic models write is on small ints.
Where an operand is a name (or a number literal), the policy compiles `i * i` to
`(i * i if _type_(i) is _int_ and -S < i < S else _mul_(i, i))`: the operator runs inline only when the checked
values are exact ints for which no guard could refuse it, and everything else goes to the guard as before. Each
name is read once for its check and once for its use with no code of the model's in between (`type`, `is` and
int comparisons are C), so what is checked is what is used. `_type_` and `_int_` are globals of the run the
model's code cannot name, rebind or reach; `_int_` is `int` only when `Limits.max_size` admits the 60-bit
products the fast paths allow, and otherwise a type no value has, so every fast path then calls its guard.
Apart from `sandbox._policy` because these rewrites must each be argued safe on their own.
"""

from __future__ import annotations

import ast
import copy
from typing import Any, Final

from sandbox._policy_names import guard_call

TYPE: Final = "_type_"
INT: Final = "_int_"
SMALL: Final = 2**30 - 1
"""The bound of the ints whose products run inline: a one-digit CPython int, compared without allocating."""
PRODUCT_BITS: Final = 60
"""The most bits a product of two ints within `SMALL` can have; a smaller `max_size` turns the fast paths off."""
_MAX_DUPLICATED = 64
"""Nodes of a `t += value` value the fast path may compile twice (once per branch, only one of which runs)."""


class _NoFastPath:
    """What `_int_` is when `max_size` is below `PRODUCT_BITS`: no value's type, so every guard is called."""


def fast_names(max_size: int) -> dict[str, Any]:
    """The globals the fast paths read, for a run with this `max_size`."""
    return {TYPE: type, INT: int if max_size >= PRODUCT_BITS else _NoFastPath}


def _is_number(node: ast.expr) -> bool:
    """An int or float literal (not a bool: `True * s` repeats `s`)."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_float(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float


def _small_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and -SMALL < node.value < SMALL


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _is_int(name: str) -> ast.expr:
    """`_type_(name) is _int_`."""
    return ast.Compare(guard_call(TYPE, _load(name)), [ast.Is()], [_load(INT)])


def _is_small_int(name: str) -> list[ast.expr]:
    """`_type_(name) is _int_` and `-SMALL < name < SMALL`, as the terms of an `and`."""
    within = ast.Compare(ast.Constant(-SMALL), [ast.Lt(), ast.Lt()], [_load(name), ast.Constant(SMALL)])
    return [_is_int(name), within]


def _choose(checks: list[ast.expr], inline: ast.expr, guarded: ast.expr) -> ast.expr:
    test = checks[0] if len(checks) == 1 else ast.BoolOp(ast.And(), checks)
    return ast.IfExp(test=test, body=inline, orelse=guarded)


def fast_binop(node: ast.BinOp, guard: str) -> ast.expr | None:
    """`node` (its operands already compiled) with its guard `guard` called only where needed; None: call it always.

    `+` refuses only sequence + sequence, `%` only a str or bytes template, and `*` sequences and over-large
    products, so a number literal on either side of `+`, a number literal on the left of `%` and a float literal
    on either side of `*` need no guard at all (the guard would run the operator unchecked).
    """
    left, right = node.left, node.right
    if guard == "_add_":
        if _is_number(left) or _is_number(right):
            return node
        return _checked_left(node, guard)
    if guard == "_mod_":
        return node if _is_number(left) else _checked_left(node, guard)
    if guard == "_mul_":
        if _is_float(left) or _is_float(right):
            return node
        return _fast_mul(node)
    return None


def _checked_left(node: ast.BinOp, guard: str) -> ast.expr | None:
    """`l op r` inline when the name `l` is an int (`+` and `%` of an int build nothing bigger than a number)."""
    left, right = node.left, node.right
    if not isinstance(left, ast.Name) or not (isinstance(right, ast.Name) or _is_number(right)):
        return None
    return _choose([_is_int(left.id)], node, guard_call(guard, _load(left.id), copy.copy(right)))


def _fast_mul(node: ast.BinOp) -> ast.expr | None:
    """`a * b` inline when each side is a name holding a small int, or a small int literal."""
    left, right = node.left, node.right
    checks: list[ast.expr] = []
    for side in (left, right):
        if isinstance(side, ast.Name):
            if not (checks and isinstance(left, ast.Name) and side.id == left.id):  # `i * i`: checked once
                checks += _is_small_int(side.id)
        elif not _small_literal(side):
            return None
    if not checks:
        return None  # two int literals: the policy folds those before asking
    return _choose(checks, node, guard_call("_mul_", copy.copy(left), copy.copy(right)))


def fast_iadd(target: str, value: ast.expr) -> ast.stmt | None:
    """`target += value` for a name target, with `_iadd_` called only when `target` is not an int.

    A number literal needs no guard (`+=` of a number concatenates nothing), so the statement stays as written.
    Otherwise `target = target + value if _type_(target) is _int_ else _iadd_(target, value)`: an int has no
    `__iadd__`, so this is what `+=` does; `value` is compiled into both branches, so only a small one is.
    """
    if _is_number(value):
        return ast.AugAssign(target=ast.Name(target, ast.Store()), op=ast.Add(), value=value)
    if sum(1 for _ in ast.walk(value)) > _MAX_DUPLICATED:
        return None
    inline = ast.BinOp(_load(target), ast.Add(), value)
    chosen = _choose([_is_int(target)], inline, guard_call("_iadd_", _load(target), copy.deepcopy(value)))
    return ast.Assign(targets=[ast.Name(target, ast.Store())], value=chosen)
