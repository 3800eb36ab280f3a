"""The pre-flight check: the calls in the model's code that are certain to fail, found before any tool runs.

A script that fails at its third call has already made two (an email may have gone out). Much of what makes a call
fail is plain from the code's text: `tools.<name>(...)` or `tools["name"](...)` with a name the catalog lacks, a
keyword the tool does not take, a required argument left out, a literal value of the wrong type, a helper
(`tools.search`, `tools.describe`, `tools.list`) called against its signature. This module reads the syntax tree
and judges those calls with the runtime's own rules (`_runtime`, `_helpers`), so a refused call
is one the run would refuse too. What it cannot judge it leaves to the run: a name or value computed at run time,
`**kwargs`, `*args`, and any code that binds `tools` itself (an assignment, a parameter, an import).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from codemode.errors import ERROR_NAME
from codemode.run._helpers import HELPERS, bind
from codemode.run._runtime import find_tool, search_problem, unknown_tool
from codemode.schema._argument_errors import call_message, missing_argument, named_arguments, validation_details
from codemode.schema._validator import checked_schema
from codemode.schema.stubs import render_signature
from sandbox import FunctionError, RunError, RunResult

if TYPE_CHECKING:
    from codemode.catalog import Catalog
    from codemode.run._runtime import StubCache
    from codemode.tools import Tool
    from sandbox import JsonObject, JsonValue

NAMESPACE: Final = "tools"
_COMBINED: Final = ("$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies")
"""Top-level keywords whose verdict can depend on arguments whose values are known only at run time."""
_BINDERS: Final = frozenset(
    {
        ast.Name,
        ast.arg,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.alias,
        ast.ExceptHandler,
        ast.MatchAs,
        ast.MatchStar,
        ast.MatchMapping,
        ast.Global,
        ast.Nonlocal,
    }
)
"""The nodes that can bind a name."""
_LEAVES: Final = frozenset(
    {ast.Constant, ast.Load, ast.Store, ast.Del, *ast.operator.__subclasses__(), *ast.cmpop.__subclasses__()}
    | {*ast.boolop.__subclasses__(), *ast.unaryop.__subclasses__()}
)
"""Nodes with nothing below them that binds or calls: skipped unread."""
_CATCHING: Final = frozenset({ERROR_NAME, "Exception", "BaseException"})
"""Classes an `except` names that catch a failed call's `ToolError`."""
_LITERAL_ERRORS: Final = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)
_LAMBDA: Final = "<lambda>"
"""The scope of a lambda's body: its calls are awaited wherever the lambda goes, never judged."""


class _Computed:
    """A value known only at run time."""


_COMPUTED: Final = _Computed()


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One call certain to fail, with what to do about it."""

    line: int
    """The line of the call in the model's code."""
    message: str
    """What the run would have said, as the model reads it."""
    tool: str | None = None
    """The original name of the tool called, when the catalog has it (its stub is announced)."""


def check(code: str, catalog: Catalog, cache: StubCache) -> list[Problem]:
    """Every call in `code` certain to fail, in the order of the code; empty when none is (or nothing is certain)."""
    if NAMESPACE not in code:  # most of the cost is reading the tree: code that never names `tools` needs none
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the run reports it (or finds fenced code)
        return []
    calls = _unguarded_calls(tree)
    problems: list[Problem] = []
    for call in sorted(calls or (), key=lambda c: (c.lineno, c.col_offset)):
        name = _called_name(call.func)
        if name is not None:
            problems.extend(_judged(call, name, catalog, cache))
    return problems


def _unguarded_calls(tree: ast.Module) -> list[ast.Call] | None:
    """The calls whose failure would stop the run; None if the code binds `tools` anywhere.

    Not those in a `try` that may catch their error, nor in `gather(..., return_exceptions=...)`, which hands it
    back as a value: there the code may fail on purpose (a probe for a signature, a batch that goes on). Nor those
    in a function called (or named) there, or in a lambda, whose call may be awaited anywhere.
    """
    calls: list[tuple[ast.Call, str | None]] = []
    # the names each function's body reads, by the function's name (None: the top level), and those read where a
    # failure is caught: a function named there may fail on purpose too
    uses: dict[str | None, set[str]] = {}
    guarded_uses: set[str] = set()
    stack: list[tuple[ast.AST, bool, str | None]] = [(tree, False, None)]
    while stack:
        node, guarded, scope = stack.pop()
        if type(node) in _BINDERS and _binds_namespace(node):
            return None
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            (guarded_uses if guarded else uses.setdefault(scope, set())).add(name)
            if isinstance(node, ast.Name):
                continue
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            scope = node.name if not isinstance(node, ast.Lambda) else _LAMBDA
        elif isinstance(node, ast.Call):
            guarded = guarded or any(keyword.arg == "return_exceptions" for keyword in node.keywords)
            if not guarded:
                calls.append((node, scope))
        elif isinstance(node, (ast.Try, ast.TryStar)) and _catches_tool_errors(node):
            stack.extend((child, True, scope) for child in node.body)
            stack.extend((child, guarded, scope) for child in [*node.handlers, *node.orelse, *node.finalbody])
            continue
        for field in node._fields:  # `ast.iter_child_nodes`, without its leaves: the walk is most of the cost
            value = getattr(node, field, None)
            if isinstance(value, list):
                stack.extend((item, guarded, scope) for item in value if type(item) not in _LEAVES)
            elif value is not None and type(value) not in _LEAVES and isinstance(value, ast.AST):
                stack.append((value, guarded, scope))
    excused = _called_from(guarded_uses, uses) | {_LAMBDA}
    return [call for call, scope in calls if scope not in excused]


def _called_from(names: set[str], uses: dict[str | None, set[str]]) -> set[str]:
    """The functions named in `names`, and those their bodies name in turn."""
    found: set[str] = set()
    frontier = names
    while frontier:
        new = {name for name in frontier if name in uses and name not in found}
        found |= new
        frontier = {used for name in new for used in uses[name]}
    return found


def refusal(problems: list[Problem]) -> RunResult:
    """The run's result for code refused before it ran: every problem, each with its line.

    One problem reads as the run's own `ToolError` for it would; the text adds that nothing ran.
    """
    first = problems[0]
    if len(problems) == 1:
        message = f"{ERROR_NAME}: {first.message} (line {first.line})"
        note = "The code did not run, and no tool was called: fix this call, then run the code again."
    else:
        message = "\n".join(
            [
                (
                    f"{ERROR_NAME}: {len(problems)} calls in the code would fail, so it did not run, and no tool "
                    "was called. Fix them all, then run the code again:"
                ),
                *(f"  line {problem.line}: {problem.message}" for problem in problems),
            ]
        )
        note = ""
    text = f"{message}\n{note}" if note else message
    return RunResult(
        error=RunError(kind="runtime", message=message, line=first.line, type_name=ERROR_NAME, traceback=text)
    )


def _catches_tool_errors(node: ast.Try | ast.TryStar) -> bool:
    """Whether one of the `except` clauses may catch a failed call's `ToolError` (an unknown class may)."""
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if caught is None or any(not isinstance(name, ast.Name) or name.id in _CATCHING for name in names):
            return True
    return False


def _binds_namespace(node: ast.AST) -> bool:
    """Whether `node` binds the name `tools` (then the code's `tools` may not be the catalog's)."""
    match node:
        case ast.Name(id=name, ctx=ast.Store() | ast.Del()):
            return name == NAMESPACE
        case ast.arg(arg=name) | ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
            return name == NAMESPACE
        case ast.alias(name=name, asname=asname):
            return (asname or name.split(".")[0]) == NAMESPACE
        case ast.ExceptHandler(name=name) | ast.MatchAs(name=name) | ast.MatchStar(name=name):
            return name == NAMESPACE
        case ast.MatchMapping(rest=name):
            return name == NAMESPACE
        case ast.Global(names=names) | ast.Nonlocal(names=names):
            return NAMESPACE in names
    return False


def _called_name(func: ast.expr) -> str | None:
    """The name `tools.<name>`, `tools["name"]` or `tools.a.b.c` (as `a.b.c`) calls; None for any other callee."""
    parts: list[str] = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Subscript) and not parts:
        if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return None
        parts.append(node.slice.value)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == NAMESPACE) or not parts:
        return None
    if any(part.startswith("_") for part in parts):  # the sandbox refuses these names itself
        return None
    return ".".join(reversed(parts))


def _judged(call: ast.Call, name: str, catalog: Catalog, cache: StubCache) -> list[Problem]:
    if name in HELPERS:
        message = _helper_problem(call, name, catalog)
        return [] if message is None else [Problem(line=call.lineno, message=message)]
    tool = find_tool(catalog, name)
    if tool is None:
        return [Problem(line=call.lineno, message=unknown_tool(catalog, name))]
    message = _tool_problem(call, tool, cache)
    return [] if message is None else [Problem(line=call.lineno, message=message, tool=tool.name)]


def _helper_problem(call: ast.Call, name: str, catalog: Catalog) -> str | None:
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None for kw in call.keywords):
        return None
    args = [_literal(arg) for arg in call.args]
    kwargs = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg is not None}
    tool = catalog.get(name)
    note = f" (the catalog's tool {name!r} is `tools.{tool.alias}`)" if tool is not None else ""
    placeholders: list[JsonValue] = [None] * len(args)
    try:
        bind(HELPERS[name], placeholders, dict.fromkeys(kwargs), note)
    except FunctionError as error:
        return str(error)
    values = dict(zip(HELPERS[name].parameters, args, strict=False)) | kwargs
    known = {key: value for key, value in values.items() if not isinstance(value, _Computed)}
    if name == "search":  # a value known only at run time stands in as a valid one
        return search_problem(known.get("query", "x"), known.get("max_results", 5))
    given = known.get("name")
    if name == "describe" and isinstance(given, str) and catalog.get(given) is None:
        return unknown_tool(catalog, given)  # as a call to it would fail
    return None


def _tool_problem(call: ast.Call, tool: Tool, cache: StubCache) -> str | None:
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    if call.args:
        return f"tools.{tool.alias}() takes keyword arguments only: {render_signature(tool)}"
    splat = any(kw.arg is None for kw in call.keywords)
    values = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg is not None}
    validator, names = cache.validator(tool)
    # a value known only at run time stands in as a string: its name is checked, its value is not
    standing: dict[str, JsonValue] = {k: "" if isinstance(v, _Computed) else v for k, v in values.items()}
    named, unexpected = named_arguments(tool, names, standing)
    computed = {names.get(key, key) for key, value in values.items() if isinstance(value, _Computed)}
    known: JsonObject = {key: value for key, value in named.items() if key not in computed}
    details = list(unexpected.details)
    if validator.problem is None:
        if splat or computed:
            details += validation_details(_partial_errors(tool, known), names)
        else:
            details += validation_details(validator.errors(known), names, meant=unexpected.meant)
    if not splat and (computed or validator.problem is not None):
        details += _missing(tool, names, {names.get(key, key) for key in values}, unexpected.meant)
    return call_message(tool, details) if details else None


def _partial_errors(tool: Tool, known: JsonObject) -> list[object]:
    """The errors of the known arguments alone, under the schema's per-property rules only.

    The top level's `required` and combinations are left out: they may depend on the arguments computed at run
    time. Dropping rules from a conjunction only drops errors, so each error left is one the run would meet.
    """
    partial = {key: value for key, value in tool.parameters.items() if key not in _COMBINED and key != "required"}
    errors = checked_schema(partial).errors(known)
    return [error for error in errors if list(error.absolute_path)]


def _missing(tool: Tool, names: dict[str, str], given: set[str], meant: set[str]) -> list[str]:
    required = tool.parameters.get("required")
    stub_names = {original: stub for stub, original in names.items()}
    if not isinstance(required, list):
        return []
    missing = [stub_names.get(key, key) for key in required if isinstance(key, str) and key not in given]
    return [missing_argument(name) for name in missing if name not in meant]


def _literal(node: ast.expr) -> JsonValue | _Computed:
    """The value of a literal as it crosses into the host (tuples as lists, keys as strings), else `_COMPUTED`."""
    if not isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.UnaryOp)):
        return _COMPUTED
    try:
        value = ast.literal_eval(node)
        data: JsonValue = json.loads(json.dumps(value, allow_nan=False))
    except _LITERAL_ERRORS:
        return _COMPUTED
    return data
