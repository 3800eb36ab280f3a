"""`asyncio.run(main())` at the top level of a run, as every script ends: rewritten at compile time to `await main()`.

The run's code already runs on an event loop, where the real `asyncio.run` cannot start another. At the top level
(the body of the run's own coroutine, outside any function, class, lambda or comprehension) the call means "run
this coroutine to its end and give its value", which `await` does on the run's loop. Only a call through a name
the code's own top-level `import asyncio` (or `from asyncio import run`) binds is rewritten, with one argument;
every other `asyncio.run` reaches the facade's, which says to write `await main()`.
"""

from __future__ import annotations

import ast
from typing import Final

_SCOPES: Final = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
"""Nodes whose insides are not the run's own coroutine: an `await` there would mean something else, or nothing."""


def await_top_level_runs(module: ast.Module) -> None:
    """Rewrite each top-level `asyncio.run(coro)` of `module` to `await coro`, in place."""
    modules, functions = _asyncio_names(module)
    if not modules and not functions:
        return
    _Rewriter(modules, functions).visit(module)


def _asyncio_names(module: ast.Module) -> tuple[set[str], set[str]]:
    """The names the top level binds to the `asyncio` module, and to its `run`."""
    modules: set[str] = set()
    functions: set[str] = set()
    for node in _top_level(module):
        if isinstance(node, ast.Import):
            modules.update(alias.asname or alias.name for alias in node.names if alias.name == "asyncio")
        elif isinstance(node, ast.ImportFrom) and node.module == "asyncio" and not node.level:
            functions.update(alias.asname or alias.name for alias in node.names if alias.name == "run")
    return modules, functions


def _top_level(module: ast.Module) -> list[ast.AST]:
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return found


class _Rewriter(ast.NodeTransformer):
    def __init__(self, modules: set[str], functions: set[str]) -> None:
        self.modules = modules
        self.functions = functions

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, _SCOPES):
            return node
        return super().generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not self._is_run(node.func) or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            return node
        if any(keyword.arg != "debug" for keyword in node.keywords):
            return node
        return ast.copy_location(ast.Await(value=node.args[0]), node)

    def _is_run(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id in self.functions
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "run"
            and isinstance(func.value, ast.Name)
            and func.value.id in self.modules
        )
