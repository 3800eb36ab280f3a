"""The compile-time policy: RestrictedPython's transformer, extended for the Python models actually write.

RestrictedPython refuses `async`, `nonlocal`, `match`, augmented assignment of items and attributes, and every
name with a leading underscore. This subclass allows them with guards, and adds what a budgeted sandbox needs:
a `_tick_()` at the top of every loop body and function, size guards on the operators that can create huge
values from small ones (`*`, `**`, `<<`, `%`), guarded f-string format specs, and no jumps out of `finally`.
"""

from __future__ import annotations

import ast
import re
from typing import cast

from RestrictedPython.transformer import INSPECT_ATTRIBUTES, IOPERATOR_TO_STR, RestrictingNodeTransformer

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

FORBIDDEN_ATTRIBUTES = INSPECT_ATTRIBUTES | {"mro", "f_lineno", "tb_lineno", "tb_lasti", "cr_suspended"}
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


_FOLDABLE = frozenset({"_add_", "_mul_", "_mod_"})  # on two number literals these stay within the source's size
_INPLACE_GUARDS: dict[type[ast.operator], str] = {
    ast.Add: "_iadd_",
    ast.Mult: "_imul_",
    ast.Pow: "_ipow_",
    ast.LShift: "_ilshift_",
    ast.Mod: "_imod_",
}
_TEMP_NAME = re.compile(r"^_tmp\d+$")
_SIZE_GUARDED_OPS: dict[type[ast.operator], str] = {
    ast.Add: "_add_",
    ast.Mult: "_mul_",
    ast.Pow: "_pow_",
    ast.LShift: "_lshift_",
    ast.Mod: "_mod_",
}


def _is_reserved(name: str) -> bool:
    """Names the sandbox keeps for itself: dunders, guard names like `_getattr_`, and RestrictedPython temps."""
    if name == "_":
        return False
    return name.startswith("__") or (name.startswith("_") and name.endswith("_")) or bool(_TEMP_NAME.match(name))


def _located(new: ast.AST, old: ast.AST) -> ast.AST:
    # New child nodes get their positions from this one in the single fix_missing_locations at the end.
    return ast.copy_location(new, old)


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(func, ast.Load()), args=list(args), keywords=[])


class SandboxPolicy(RestrictingNodeTransformer):
    """Transforms the model's module; `errors` lists what the policy refuses, with line numbers."""

    def __init__(self) -> None:
        super().__init__()
        self._class_depth = 0
        self._pattern_lookups: tuple[str, list[ast.expr]] | None = None  # of the `match` being compiled

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
            return _located(_call("_getattr_", node.value, ast.Constant(node.attr)), node)
        node.value = cast("ast.expr", _located(_call("_write_", node.value), node.value))
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
        return _located(node, node)

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
        node.body.insert(int(docstring), cast("ast.stmt", _located(ast.Expr(_call("_tick_")), node)))  # after it
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        """Allow lambdas; their parameter names are checked like a function's."""
        self.check_function_argument_names(node)
        return self.node_contents_visit(node)

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
        return _located(node, node)

    def visit_Await(self, node: ast.Await) -> ast.AST:
        """Allow `await`."""
        return self.node_contents_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        """Allow `async for`, budgeted like `for`."""
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

    def _tick_body(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        node.body.insert(0, cast("ast.stmt", _located(ast.Expr(_call("_tick_")), node)))

    def visit_For(self, node: ast.For) -> ast.AST:
        """Guard the iterable and budget each iteration."""
        node = cast("ast.For", self.guard_iter(node))
        self._tick_body(node)
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        """Budget each iteration."""
        node = self.node_contents_visit(node)
        self._tick_body(node)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        """Iterate comprehensions through `_citer_`, which budgets iterations over lazy iterables."""
        if node.is_async:  # `async for` in a comprehension: async iterators are budgeted by the loop's awaits
            return self.node_contents_visit(node)
        node = cast("ast.comprehension", self.guard_iter(node))
        call = cast("ast.Call", node.iter)
        if isinstance(call.func, ast.Name) and call.func.id == "_getiter_":
            call.func.id = "_citer_"
        elif isinstance(call.func, ast.Name):  # `_iter_unpack_sequence_(it, spec, _getiter_)`
            call.args[2] = ast.Name("_citer_", ast.Load())
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

    # -- match -----------------------------------------------------------------------------------------
    # A pattern's dotted names and class attributes are looked up in C; they are compiled to go through
    # `_match_`/`_match_class_` (sandbox/_matching.py), which use the guarded getattr.

    def visit_Match(self, node: ast.Match) -> ast.AST | list[ast.stmt]:
        """Allow `match`; the dotted names of its patterns are evaluated lazily through the guards."""
        outer = self._pattern_lookups
        self._pattern_lookups = (self.gen_tmp_name(), [])
        try:
            node = self.node_contents_visit(node)
            holder, lookups = self._pattern_lookups
        finally:
            self._pattern_lookups = outer
        if not lookups:
            return node
        empty = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        thunks = [ast.Lambda(args=empty, body=lookup) for lookup in lookups]
        made = ast.Assign(targets=[ast.Name(holder, ast.Store())], value=_call("_match_", *thunks))
        return [cast("ast.stmt", _located(made, node)), node]

    def _pattern_lookup(self, value: ast.expr) -> ast.expr:
        """`holder.pN`, a dotted name the pattern reads from the holder, which evaluates `value` when read."""
        assert self._pattern_lookups is not None, "patterns occur only inside `match`"
        holder, lookups = self._pattern_lookups
        lookups.append(value)
        return ast.Attribute(ast.Name(holder, ast.Load()), f"p{len(lookups) - 1}", ast.Load())

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        """Allow `case` clauses."""
        return self.node_contents_visit(node)

    def visit_MatchValue(self, node: ast.MatchValue) -> ast.AST:
        """Allow value patterns; a dotted name (`case Color.RED`) is read through the guarded getattr."""
        if isinstance(node.value, ast.Attribute):
            node.value = self._pattern_lookup(cast("ast.expr", self.visit(node.value)))
        return node  # otherwise a literal (`-1`, `1+2j`), which no size guard may rewrite into a call

    def visit_MatchSingleton(self, node: ast.MatchSingleton) -> ast.AST:
        """Allow `None`/`True`/`False` patterns."""
        return node

    def visit_MatchSequence(self, node: ast.MatchSequence) -> ast.AST:
        """Allow sequence patterns."""
        return self.node_contents_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> ast.AST:
        """Allow `*rest` patterns with a checked name."""
        self.check_name(node, node.name)
        return node

    def visit_MatchMapping(self, node: ast.MatchMapping) -> ast.AST:
        """Allow mapping patterns with a checked `**rest` name; dotted keys are read through the guards."""
        self.check_name(node, node.rest)
        node.keys = [
            self._pattern_lookup(cast("ast.expr", self.visit(key))) if isinstance(key, ast.Attribute) else key
            for key in node.keys
        ]
        node.patterns = [cast("ast.pattern", self.visit(pattern)) for pattern in node.patterns]
        return node

    def visit_MatchClass(self, node: ast.MatchClass) -> ast.AST:
        """Allow class patterns, matched through `_match_class_`, which reads their attributes with the guards."""
        for attr in node.kwd_attrs:
            if attr.startswith("_") or attr in FORBIDDEN_ATTRIBUTES:
                self.error(node, f"`{attr}=` is not allowed in a class pattern: that attribute is private")
        node.patterns = [cast("ast.pattern", self.visit(pattern)) for pattern in node.patterns]
        node.kwd_patterns = [cast("ast.pattern", self.visit(pattern)) for pattern in node.kwd_patterns]
        cls = cast("ast.expr", self.visit(node.cls))
        shape = (ast.Constant(len(node.patterns)), ast.Constant(tuple(node.kwd_attrs)))  # type: ignore[arg-type]  # compiles
        node.cls = self._pattern_lookup(_call("_match_class_", cls, *shape))
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.AST:
        """Allow capture patterns with a checked name."""
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node: ast.MatchOr) -> ast.AST:
        """Allow `|` patterns."""
        return self.node_contents_visit(node)

    # -- operators and formatting ------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        """Route the operators that can build huge values from small ones through size guards."""
        node = self.node_contents_visit(node)
        guard = _SIZE_GUARDED_OPS.get(type(node.op))
        if guard is None or (guard in _FOLDABLE and _is_number(node.left) and _is_number(node.right)):
            return node
        return _located(_call(guard, node.left, node.right), node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        """Allow annotated assignments (`x: int = 1`)."""
        return self.node_contents_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST | list[ast.stmt]:
        """`x op= y` through `_inplacevar_`, for names, items (`d[k] += 1`) and attributes (`o.n += 1`)."""
        node = self.node_contents_visit(node)
        operator = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        target = node.target
        if isinstance(target, ast.Name):
            guard = _INPLACE_GUARDS.get(type(node.op))
            if guard is None:  # `-=`, `|=`, ...: cannot build a value much larger than their operands
                return node
            value = _call(guard, ast.Name(target.id, ast.Load()), node.value)
            return [
                cast("ast.stmt", _located(ast.Assign(targets=[ast.Name(target.id, ast.Store())], value=value), node))
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
            current = _call("_getitem_", ast.Name(owner, ast.Load()), ast.Name(key, ast.Load()))
            store: ast.expr = ast.Subscript(
                _call("_write_", ast.Name(owner, ast.Load())), ast.Name(key, ast.Load()), ast.Store()
            )
        else:
            assert isinstance(target, ast.Attribute)
            current = _call("_getattr_", ast.Name(owner, ast.Load()), ast.Constant(target.attr))
            store = ast.Attribute(_call("_write_", ast.Name(owner, ast.Load())), target.attr, ast.Store())
        statements.append(ast.Assign(targets=[store], value=_call("_inplacevar_", operator, current, node.value)))
        statements.append(ast.Delete(targets=[ast.Name(temp, ast.Del()) for temp in temps]))
        return [cast("ast.stmt", _located(statement, node)) for statement in statements]

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        """`f"{x!r:{spec}}"` formats through `_format_`, which caps widths and precisions."""
        node = self.node_contents_visit(node)
        if node.format_spec is None:
            return node
        spec = node.format_spec
        node.value = _call("_format_", node.value, ast.Constant(node.conversion), spec)
        node.conversion = -1
        node.format_spec = None
        return _located(node, node)

    def visit_TryStar(self, node: ast.AST) -> ast.AST:
        """Refuse `except*`: exception groups could carry the sandbox's own stop signals."""
        self.error(node, "`except*` is not allowed; catch the exception group with `except ExceptionGroup as e`")
        return node
