"""From source text to a code object: size checks, the top-level wrapper, the policy, and a cache.

The model's module body becomes the body of `async def _main_()`, so top-level `await` and `return` work and a final
bare expression becomes the returned value. Names bound at top level are locals of `_main_`, so a `global x` inside a
function, for such an `x`, is rewritten to `nonlocal x` to keep CPython's meaning. A run that keeps variables gets two
more wrapper statements: the kept names bound first, and `locals()` handed back when the body ends, however it ends.
Code sent inside a markdown fence runs as the code inside it (`sandbox._compiler.fence`).
"""

from __future__ import annotations

import ast
import hashlib
import opcode
import types
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, cast

from sandbox._compiler.asyncio_run import await_top_level_runs
from sandbox._compiler.fence import unfence
from sandbox._compiler.policy import SandboxPolicy, gate_statements
from sandbox.result import RunError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import CodeType

FILENAME = "<code>"
MAIN = "_main_"
VARIABLES: Final = "_vars_"
"""Global of a keeping run: the values to bind at top level (the model's code cannot name `_`-prefixed names)."""
KEEP: Final = "_keep_"
"""Global of a keeping run: called with the top-level names when the run's body ends, however it ends."""
LOCALS: Final = "_locals_"
"""Global of a keeping run: the real `locals`, called only by the wrapper statements added here."""
MAX_DEPTH = 100
_CACHE_SIZE = 256
_TEXT_KEY = 8_192
"""Characters of source up to which the cache is keyed by the text itself."""
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_IMPORT_NAME = opcode.opmap["IMPORT_NAME"]


@dataclass(frozen=True, kw_only=True)
class Compiled:
    """A compiled run: the coroutine function `_main_`'s code, and what a run and its errors need to know of it."""

    code: CodeType
    """The `_main_` coroutine function's code object: a run makes the function in its own globals."""
    lines: tuple[str, ...]
    """The model's source lines, for tracebacks."""
    assigned: tuple[str, ...] = ()
    """The names the code binds at top level, sorted."""
    names: frozenset[str] = frozenset()
    """Every name its code objects refer to (globals and attributes), and `__import__` if one imports: a run binds
    only the guards and builtins it uses (`sandbox._runtime.namespace`)."""


_Key = tuple[str, tuple[str, ...] | None] | tuple[int, str, tuple[str, ...] | None]
_cache: OrderedDict[_Key, Compiled | RunError] = OrderedDict()
"""Compiled code by its source and kept names: the only inputs of a compile (the policy is fixed)."""


def compile_code(source: str, *, max_source: int, variables: Iterable[str] | None = None) -> Compiled | RunError:
    """Compile the model's source under the sandbox policy, or say why not.

    Args:
        source: The model's code.
        max_source: The most characters accepted.
        variables: For a run that keeps variables, the names bound before the body runs (from `_vars_`);
            the body then ends by calling `_keep_(locals())`.
    """
    if len(source) > max_source:
        return RunError(
            kind="forbidden",
            message=f"the code is {len(source):,} characters; the limit is {max_source:,}. Send less code per run.",
        )
    names = None if variables is None else tuple(sorted(set(variables)))
    key: _Key = (source, names)  # the text itself: hashed once per string, compared on a hit; a digest costs more
    if len(source) > _TEXT_KEY:  # a long text is held by its digest, so the cache never holds much
        key = (len(source), hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest(), names)
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return cached
    compiled = _compile_uncached(source, names)
    _cache[key] = compiled
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return compiled


def _parse(source: str, *, unfenced: bool = False) -> tuple[ast.Module, str] | RunError:
    """The module and the source it came from: as sent, or else the code inside its markdown fence."""
    try:
        return ast.parse(source, FILENAME), source
    except SyntaxError as error:
        fences = unfence(source)
        if unfenced or fences.code is None:
            return _syntax_error(error, fenced_blocks=fences.blocks)
        return _parse(fences.code, unfenced=True)
    except (RecursionError, MemoryError, ValueError) as error:
        return RunError(kind="syntax", message=f"the code cannot be parsed ({type(error).__name__}); simplify it")


def _compile_uncached(source: str, variables: tuple[str, ...] | None) -> Compiled | RunError:
    parsed = _parse(source)
    if isinstance(parsed, RunError):
        return parsed
    module, source = parsed
    if _depth(module) > MAX_DEPTH:
        return RunError(kind="syntax", message=f"the code is nested more than {MAX_DEPTH} levels deep; flatten it")
    await_top_level_runs(module)
    _return_final_expression(module)
    assigned = _top_level_names(module)
    _globals_to_nonlocals(module, assigned | set(variables or ()))
    policy = SandboxPolicy()
    module = policy.visit(module)
    if policy.errors:
        return _policy_error(policy.errors)
    gate_statements(module)
    main = cast("ast.AsyncFunctionDef", ast.parse(f"async def {MAIN}(): pass").body[0])
    main.body = module.body or [ast.Pass()]
    if variables is not None:
        main.body = _keeping(main.body, variables)
    wrapped = ast.fix_missing_locations(
        ast.Module(body=[ast.copy_location(main, module.body[0]) if module.body else main], type_ignores=[])
    )
    if not module.body:
        ast.fix_missing_locations(main)
        main.lineno = main.end_lineno = 1
    try:
        code = compile(wrapped, FILENAME, "exec", dont_inherit=True)
    except SyntaxError as error:
        return _syntax_error(error)
    except (RecursionError, MemoryError) as error:
        return RunError(kind="syntax", message=f"the code cannot be compiled ({type(error).__name__}); simplify it")
    main_code = next(const for const in code.co_consts if isinstance(const, types.CodeType))  # the module's one def
    return Compiled(
        code=main_code, lines=tuple(source.splitlines()), assigned=tuple(sorted(assigned)), names=_names(main_code)
    )


def _names(code: CodeType) -> frozenset[str]:
    """The names `code`'s code objects use, and `__import__` if one has an `import` (the interpreter looks it up)."""
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        if _IMPORT_NAME in current.co_code[::2]:  # the opcodes: an argument or cache word may hold any byte
            names.add("__import__")
        stack.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return frozenset(names)


def _keeping(body: list[ast.stmt], variables: tuple[str, ...]) -> list[ast.stmt]:
    """`body` with the kept names bound first and `locals()` handed to `_keep_` when it ends.

    Added after the policy ran, so these statements may use `_`-prefixed globals the model's code cannot name.
    """
    bind = [ast.parse(f"{name} = {VARIABLES}[{name!r}]").body[0] for name in variables]
    keep = ast.parse(f"try:\n    pass\nfinally:\n    {KEEP}({LOCALS}())").body[0]
    assert isinstance(keep, ast.Try)
    for node in (*bind, *keep.finalbody):  # the model's first line: these never raise, so it is never shown
        for child in ast.walk(node):
            ast.copy_location(child, body[0])
    ast.copy_location(keep, body[0])
    keep.body = body
    return [*bind, keep]


def _depth(tree: ast.AST) -> int:
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _return_final_expression(module: ast.Module) -> None:
    if module.body and isinstance(module.body[-1], ast.Expr):
        last = module.body[-1]
        module.body[-1] = ast.copy_location(ast.Return(value=last.value), last)


def _top_level_names(module: ast.Module) -> set[str]:
    names: set[str] = set()
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, _COMPREHENSIONS):  # its loop variables are its own; only `:=` binds out here
            names.update(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif (isinstance(node, ast.ExceptHandler) and node.name) or (
            isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name
        ):
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _globals_to_nonlocals(module: ast.Module, top: set[str]) -> None:
    declared_global = {name for node in module.body if isinstance(node, ast.Global) for name in node.names}
    local = top - declared_global
    for node in ast.walk(module):
        if not isinstance(node, _SCOPES) or isinstance(node, ast.Lambda):
            continue
        for index, statement in enumerate(node.body):
            if isinstance(statement, ast.Global) and set(statement.names) <= local:
                node.body[index] = ast.copy_location(ast.Nonlocal(names=statement.names), statement)


def _syntax_error(error: SyntaxError, *, fenced_blocks: int = 0) -> RunError:
    line = error.lineno
    where = f" (line {line})" if line else ""
    text = (error.text or "").strip()
    shown = f": `{text}`" if text and len(text) < 120 else ""
    hint = f"; the code holds {fenced_blocks} fenced blocks: send one" if fenced_blocks > 1 else ""
    return RunError(kind="syntax", message=f"SyntaxError: {error.msg}{where}{shown}{hint}", line=line)


def _policy_error(errors: list[str]) -> RunError:
    first = errors[0]
    line: int | None = None
    if first.startswith("Line "):
        number, _, rest = first[5:].partition(": ")
        line = int(number) if number.isdigit() else None
        first = f"{rest} (line {line})" if line else rest
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return RunError(kind="forbidden", message=f"{first}{more}", line=line)
