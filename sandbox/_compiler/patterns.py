"""The compile policy's `match` statements: patterns allowed, their dotted names and class attributes guarded.

A pattern's dotted names and class attributes are looked up in C; they are compiled to go through
`_match_`/`_match_class_` (`sandbox/_runtime/matching.py`), which use the guarded getattr. Apart from the rest of the
policy (`sandbox._compiler.policy`, which builds on this class) because patterns are their own small language.
"""

from __future__ import annotations

import ast
from typing import cast

from RestrictedPython.transformer import RestrictingNodeTransformer

from sandbox._compiler.names import FORBIDDEN_ATTRIBUTES, guard_call, located


class PatternPolicy(RestrictingNodeTransformer):
    """The policy's visitors of `match` statements and their patterns."""

    def __init__(self) -> None:
        super().__init__()
        self._pattern_lookups: tuple[str, list[ast.expr]] | None = None  # of the `match` being compiled

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
        made = ast.Assign(targets=[ast.Name(holder, ast.Store())], value=guard_call("_match_", *thunks))
        return [cast("ast.stmt", located(made, node)), node]

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
        node.cls = self._pattern_lookup(guard_call("_match_class_", cls, *shape))
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.AST:
        """Allow capture patterns with a checked name."""
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node: ast.MatchOr) -> ast.AST:
        """Allow `|` patterns."""
        return self.node_contents_visit(node)
