"""The compile-time policy: RestrictedPython's transformer, extended for the Python models actually write.

RestrictedPython refuses `async`, `nonlocal`, `match`, augmented assignment of items and attributes, and every
name with a leading underscore. This subclass allows them with guards, and adds what a budgeted sandbox needs:
a tick for every loop iteration and function call, a gate between two statements (`gate_statements`), size
guards on the operators that can create huge values from small ones (`*`, `**`, `<<`, `%`), guarded f-string
format specs, and no jumps out of `finally`.
Its `match` half is `sandbox._compiler.patterns`, and the names it reserves and hides are in `sandbox._compiler.names`.
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import cast

from RestrictedPython.transformer import IOPERATOR_TO_STR

from sandbox._compiler.names import (
    ALLOWED_DUNDER_METHODS,
    FORBIDDEN_ATTRIBUTES,
    READABLE_DUNDERS,
    dunder_refusal,
    guard_call,
    located,
)
from sandbox._compiler.patterns import PatternPolicy

_FOLDABLE = frozenset({"_add_", "_mul_", "_mod_"})  # on two number literals these stay within the source's size
_INPLACE_GUARDS: dict[type[ast.operator], str] = {
    ast.Add: "_iadd_",
    ast.Mult: "_imul_",
    ast.Pow: "_ipow_",
    ast.LShift: "_ilshift_",
    ast.Mod: "_imod_",
}
_GROWING_CONVERSIONS = frozenset({ord("r"), ord("a")})
"""`!r` and `!a`: `repr`/`ascii` of a string can be ten times as long."""
_TEMP_NAME = re.compile(r"^_tmp\d+$")
_SIZE_GUARDED_OPS: dict[type[ast.operator], str] = {
    ast.Add: "_add_",
    ast.Mult: "_mul_",
    ast.Pow: "_pow_",
    ast.LShift: "_lshift_",
    ast.Mod: "_mod_",
}


_BODIES = ("body", "orelse", "finalbody")
"""The fields of a node that hold a list of statements (a handler's and a `case`'s are `body` too)."""


def gate_statements(tree: ast.AST) -> None:
    """Put `_gate_()` between each two statements of `tree`'s bodies, so a stop is seen between any two statements.

    Straight-line code takes no tick, and one statement may be one long C call (a scan of a long list), so without
    a gate a run halted by its deadline would go on to its last statement. A body's first statement needs none:
    what comes before it is a gate or a tick already (a loop's item, a function's entry), or the compound
    statement's own header, so at most a header and one statement run back to back. A statement right after a
    tick needs none either (a tick also raises a stop). So a loop whose body is one statement takes no gate.
    """
    for node in ast.walk(tree):
        for field in _BODIES:
            body = getattr(node, field, None)
            if not isinstance(body, list) or len(body) < 2 or not isinstance(body[0], ast.stmt):
                continue
            gated: list[ast.stmt] = [body[0]]
            for previous, statement in itertools.pairwise(body):
                if not (_is_tick(statement) or _is_tick(previous)):
                    gated.append(cast("ast.stmt", located(ast.Expr(guard_call("_gate_")), statement)))
                gated.append(statement)
            setattr(node, field, gated)


def _is_tick(statement: ast.stmt) -> bool:
    """`_tick_()`, put by the policy at a function's entry and at the top of a loop's body."""
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id == "_tick_"
    )


def _is_reserved(name: str) -> bool:
    """Names the sandbox keeps for itself: dunders, guard names like `_getattr_`, and RestrictedPython temps."""
    if name == "_":
        return False
    return name.startswith("__") or (name.startswith("_") and name.endswith("_")) or bool(_TEMP_NAME.match(name))


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


class SandboxPolicy(PatternPolicy):
    """Transforms the model's module; `errors` lists what the policy refuses, with line numbers."""

    def __init__(self) -> None:
        super().__init__()
        self._class_depth = 0

    # -- names ------------------------------------------------------------------------------------------

    def check_name(self, node: ast.AST, name: str | None, allow_magic_methods: bool = False) -> None:
        """Refuse reserved names; allow `_private` names and, in class bodies, the safe dunder methods."""
        if name is None or not _is_reserved(name):
            return
        if allow_magic_methods and self._class_depth and name in ALLOWED_DUNDER_METHODS:
            return
        self.error(
            node, f"`{name}` is a reserved name: names starting with `__` or shaped like `_x_` belong to the sandbox"
        )

    def visit_Name(self, node: ast.Name) -> ast.AST:
        """Check the name; `print` is an ordinary function here, not RestrictedPython's collector."""
        if node.id == "__name__" and isinstance(node.ctx, ast.Load):
            return node  # `if __name__ == "__main__":` reads the run's `"__main__"`
        self.check_name(node, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """Refuse dunder and frame attributes at compile time; the runtime guard checks the rest."""
        if node.attr in READABLE_DUNDERS and not isinstance(node.ctx, ast.Load):
            self.error(
                node, f"`.{node.attr}` can be read but not set or deleted in the sandbox; keep your own attribute"
            )
        elif node.attr.startswith("__") and node.attr not in ALLOWED_DUNDER_METHODS | READABLE_DUNDERS:
            self.error(node, dunder_refusal(node.attr))
        elif node.attr in FORBIDDEN_ATTRIBUTES:
            self.error(node, f"`.{node.attr}` is not allowed: frames, code and the class hierarchy are hidden")
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            return located(guard_call("_getattr_", node.value, ast.Constant(node.attr)), node)
        node.value = cast("ast.expr", located(guard_call("_write_", node.value), node.value))
        return node

    def check_import_names(self, node: ast.Import | ast.ImportFrom) -> ast.AST:
        """Refuse importing private modules or names (`_strptime`, `from x import _y`)."""
        module = getattr(node, "module", None) or ""
        for part in [*module.split("."), *(alias.name for alias in node.names)]:
            if part.startswith("_"):
                self.error(node, f"`{part}` cannot be imported: names starting with `_` are private in the sandbox")
        return super().check_import_names(node)

    # -- async, scopes, classes -------------------------------------------------------------------------

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        """Check names, then budget each call with a tick."""
        return self._visit_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        """Allow `async def`; its coroutines are tracked so one never awaited is closed when the run ends."""
        node = cast("ast.AsyncFunctionDef", self._visit_function(node))
        node.decorator_list.append(ast.Name("_coroutine_", ast.Load()))  # innermost: applied first
        return located(node, node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        depth, self._class_depth = self._class_depth, 0
        try:
            node = self.node_contents_visit(node)
        finally:
            self._class_depth = depth
        first = node.body[0]
        docstring = (
            isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and type(first.value.value) is str
        )
        node.body.insert(int(docstring), cast("ast.stmt", located(ast.Expr(guard_call("_tick_")), node)))  # after it
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        """Allow lambdas, checked like a function, with a tick at entry: `lambda x: _tick_() and body`.

        A tick is an int from 1 up, so `and` always goes on to the body; without it a recursive lambda, or one
        that C calls per item (`sorted(key=...)`, `re.sub`), ran past every budget and, inline, every deadline.
        """
        self.check_function_argument_names(node)
        node = self.node_contents_visit(node)
        ticked = ast.BoolOp(op=ast.And(), values=[guard_call("_tick_"), node.body])
        node.body = cast("ast.expr", located(ticked, node.body))
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        """Allow classes (keywords kept), created through the sandbox's `__metaclass__` hook."""
        self.check_name(node, node.name)
        if any(keyword.arg == "metaclass" for keyword in node.keywords):
            self.error(node, "the `metaclass=` keyword is not allowed")
        self._class_depth += 1
        try:
            node = self.node_contents_visit(node)
        finally:
            self._class_depth -= 1
        node.keywords.append(ast.keyword(arg="metaclass", value=ast.Name("__metaclass__", ast.Load())))
        return located(node, node)

    def visit_Await(self, node: ast.Await) -> ast.AST:
        """Allow `await`."""
        return self.node_contents_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        """Allow `async for`, with a tick at the top of its body (a `for` ticks through its iterable)."""
        node = self.node_contents_visit(node)
        self._tick_body(node)
        return node

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        """Allow `async with`."""
        return self.node_contents_visit(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> ast.AST:
        """Allow `nonlocal`; the names are checked like any other."""
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        """Allow `global`; the names are checked like any other."""
        for name in node.names:
            self.check_name(node, name)
        return node

    # -- loops and try ---------------------------------------------------------------------------------

    def _tick_body(self, node: ast.AsyncFor | ast.While) -> None:
        node.body.insert(0, cast("ast.stmt", located(ast.Expr(guard_call("_tick_")), node)))

    def guard_iter(self, node: ast.For | ast.comprehension) -> ast.AST:
        """`for x in _getiter_(it)`, whatever the target: `_getiter_` takes a tick per item, unpacking is CPython's."""
        node = self.node_contents_visit(node)
        node.iter = cast("ast.expr", located(guard_call("_getiter_", node.iter), node.iter))
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        """Budget each iteration through the guarded iterable."""
        return self.guard_iter(node)

    def visit_While(self, node: ast.While) -> ast.AST:
        """Budget each iteration."""
        node = self.node_contents_visit(node)
        self._tick_body(node)
        return node

    def visit_YieldFrom(self, node: ast.YieldFrom) -> ast.AST:
        """`yield from _yieldfrom_(it)`: a builtin iterable's items are budgeted, a generator is delegated to."""
        node = self.node_contents_visit(node)
        node.value = cast("ast.expr", located(guard_call("_yieldfrom_", node.value), node.value))
        return node

    def visit_Starred(self, node: ast.Starred) -> ast.AST:
        """`[*x]`, `{*x}` and `f(*x)` unpack through `_star_`, which checks a range's (or a collection's) size."""
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = cast("ast.expr", located(guard_call("_star_", node.value), node.value))
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        """Iterate comprehensions through `_citer_`, which budgets iterations over lazy or long iterables."""
        if node.is_async:  # `async for` in a comprehension: async iterators are budgeted by the loop's awaits
            return self.node_contents_visit(node)
        node = cast("ast.comprehension", self.guard_iter(node))
        cast("ast.Name", cast("ast.Call", node.iter).func).id = "_citer_"
        return node

    def visit_Try(self, node: ast.Try) -> ast.AST:
        """Allow `try`, but no `return`/`break`/`continue` that leaves a `finally` (it would swallow limits)."""
        for statement in node.finalbody:
            self._refuse_jumps(statement, in_loop=False)
        return self.node_contents_visit(node)

    def _refuse_jumps(self, node: ast.AST, *, in_loop: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(node, ast.Return) or (isinstance(node, (ast.Break, ast.Continue)) and not in_loop):
            keyword = type(node).__name__.lower()
            self.error(node, f"`{keyword}` inside `finally` is not allowed; move it after the `try` statement")
        loop = isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        for child in ast.iter_child_nodes(node):
            self._refuse_jumps(child, in_loop=in_loop or loop)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        """Check the bound name of an `except ... as name`."""
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    # -- operators and formatting ------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        """Route the operators that can build huge values from small ones through size guards."""
        node = self.node_contents_visit(node)
        guard = _SIZE_GUARDED_OPS.get(type(node.op))
        if guard is None or (guard in _FOLDABLE and _is_number(node.left) and _is_number(node.right)):
            return node
        return located(guard_call(guard, node.left, node.right), node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        """Assignments; tuple targets are unpacked by CPython, which evaluates the value once (`a, b = c, d = f()`).

        RestrictedPython's `_unpack_sequence_` would copy the items into a list (an endless iterator forever) and
        compile the value once per target; the targets' items and attributes are still written through `_write_`.
        `x[a:b] = v` alone is one call, `_setslice_(v, x, slice(a, b))`: CPython's order, and no proxy to make.
        """
        node = self.node_contents_visit(node)
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Call):
            writer = target.value
            if isinstance(writer.func, ast.Name) and writer.func.id == "_writeslice_":
                return located(ast.Expr(guard_call("_setslice_", node.value, writer.args[0], target.slice)), node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        """Allow annotated assignments (`x: int = 1`)."""
        return self.node_contents_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        """`x[a:b] = v` through `_writeslice_`, which refuses growing a list past the size cap; the rest as before."""
        sliced = isinstance(node.slice, ast.Slice) and isinstance(node.ctx, ast.Store)
        visited = cast("ast.AST", super().visit_Subscript(node))
        if sliced and isinstance(visited, ast.Subscript) and isinstance(visited.value, ast.Call):
            visited.value.func = ast.copy_location(ast.Name("_writeslice_", ast.Load()), visited.value.func)
        return visited

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST | list[ast.stmt]:
        """`x op= y` through `_inplacevar_`, for names, items (`d[k] += 1`) and attributes (`o.n += 1`)."""
        node = self.node_contents_visit(node)
        operator = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        target = node.target
        if isinstance(target, ast.Name):
            guard = _INPLACE_GUARDS.get(type(node.op))
            if guard is None:  # `-=`, `|=`, ...: cannot build a value much larger than their operands
                return node
            value = guard_call(guard, ast.Name(target.id, ast.Load()), node.value)
            return [
                cast("ast.stmt", located(ast.Assign(targets=[ast.Name(target.id, ast.Store())], value=value), node))
            ]
        # The target was already rewritten to `_write_(obj)[key]` / `_write_(obj).attr`; unwrap it once.
        write_call = cast("ast.Call", target.value)
        owner = self.gen_tmp_name()
        statements: list[ast.stmt] = [ast.Assign(targets=[ast.Name(owner, ast.Store())], value=write_call.args[0])]
        temps = [owner]
        if isinstance(target, ast.Subscript):
            key = self.gen_tmp_name()
            temps.append(key)
            statements.append(ast.Assign(targets=[ast.Name(key, ast.Store())], value=target.slice))
            current = guard_call("_getitem_", ast.Name(owner, ast.Load()), ast.Name(key, ast.Load()))
            writer = cast("ast.Name", write_call.func).id  # `_writeslice_` for `x[a:b] += v`
            store: ast.expr = ast.Subscript(
                guard_call(writer, ast.Name(owner, ast.Load())), ast.Name(key, ast.Load()), ast.Store()
            )
        else:
            assert isinstance(target, ast.Attribute)
            current = guard_call("_getattr_", ast.Name(owner, ast.Load()), ast.Constant(target.attr))
            store = ast.Attribute(guard_call("_write_", ast.Name(owner, ast.Load())), target.attr, ast.Store())
        statements.append(ast.Assign(targets=[store], value=guard_call("_inplacevar_", operator, current, node.value)))
        statements.append(ast.Delete(targets=[ast.Name(temp, ast.Del()) for temp in temps]))
        return [cast("ast.stmt", located(statement, node)) for statement in statements]

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        """`f"{x!r:{spec}}"` formats through `_format_`, which caps widths, precisions and `!r`/`!a` growth."""
        node = self.node_contents_visit(node)
        if node.format_spec is None and node.conversion not in _GROWING_CONVERSIONS:
            return node
        spec = node.format_spec or ast.Constant("")
        node.value = guard_call("_format_", node.value, ast.Constant(node.conversion), spec)
        node.conversion = -1
        node.format_spec = None
        return located(node, node)

    def visit_TryStar(self, node: ast.AST) -> ast.AST:
        """Refuse `except*`: exception groups could carry the sandbox's own stop signals."""
        self.error(node, "`except*` is not allowed; catch the exception group with `except ExceptionGroup as e`")
        return node
