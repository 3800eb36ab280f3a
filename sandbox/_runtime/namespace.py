"""The globals of one run: what holds nothing of a run is put together once per code and `max_size`.

The code reaches its globals and builtins only by name (no `globals()`, frames or `__builtins__`), so a run gets
only the guards and builtins among the names its code objects use (`Compiled.names`), plus what the interpreter
looks up by itself (`__builtins__`, `__name__`, `__build_class__`, `__import__`). Most of those are the same
objects in every run with the same `max_size`: the shared builtins and the guards that hold nothing of a run
(`Rules`). They make a `Template`, once; a run copies its two dicts and adds its own: the guards bound to its
budget, its importer and `print`, the ticking builtins, its host functions.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sandbox._runtime.builtins import TICKING, run_builtins, shared_builtins
from sandbox._runtime.calls import FunctionProxy, NamespaceProxy
from sandbox._runtime.classes import make_class
from sandbox._runtime.guards import RUN_GUARDS, rule_names, rules_for
from sandbox._runtime.matching import match_names
from sandbox._runtime.signals import ForbiddenImportError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from sandbox._runtime.builtins import Output
    from sandbox._runtime.calls import CallState
    from sandbox._runtime.guards import Guards

IMPORTS: Final = "__import__"
"""In `Compiled.names` when the code has an `import` statement (the interpreter looks `__import__` up itself)."""

FunctionKinds = dict[str, "list[str] | None"]  # name -> None for a function, a namespace's names for `dir()`


@dataclass(frozen=True, kw_only=True)
class Template:
    """What the runs of one compiled code with one `max_size` share; never changed once made."""

    globals: dict[str, Any]
    """The globals that hold nothing of a run; a run's copy gets its builtins and its own guards."""
    builtins: dict[str, Any]
    """The builtins that hold nothing of a run (`shared_builtins`)."""
    run_guards: tuple[tuple[str, str], ...]
    """The guards bound to the run the code names: (name, `Guards` attribute)."""
    ticking: frozenset[str]
    """The ticking builtins the code names."""
    imports: bool
    """Whether the code has an `import` statement: only then is it given modules (and `decimal`'s context)."""
    prints: bool
    """Whether the run needs its printed output: the code names `print`, or imports (`sys.stdout` finds it)."""


@functools.lru_cache(maxsize=256)
def template(names: frozenset[str], max_size: int) -> Template:
    """The shared part of the globals of a run whose code uses `names`, with this `max_size`."""
    rules = rules_for(max_size)
    shared = {**rule_names(rules), **match_names(rules), "__metaclass__": make_class}
    imports = IMPORTS in names
    return Template(
        globals={"__name__": "__main__", **{name: value for name, value in shared.items() if name in names}},
        builtins=shared_builtins(names, max_size),
        run_guards=tuple((name, attribute) for name, attribute in RUN_GUARDS.items() if name in names),
        ticking=TICKING & names,
        imports=imports,
        prints=imports or "print" in names,
    )


def run_globals(
    shared: Template,
    guards: Guards,
    *,
    output: Output | None,
    importer: Callable[..., Any] | None,
    calls: CallState | None,
    functions: FunctionKinds,
    error_names: Iterable[str],
) -> dict[str, Any]:
    """The globals of one run: `shared`'s, with the run's builtins, guards and host functions."""
    namespace = shared.globals.copy()
    namespace["__builtins__"] = run_builtins(
        shared.builtins, guards, importer=importer or _no_import, output=output, ticking=shared.ticking
    )
    if shared.run_guards:
        namespace.update(guards.own_guards(shared.run_guards))
    if calls is not None:
        for name, names in functions.items():
            namespace[name] = FunctionProxy(calls, name) if names is None else NamespaceProxy(calls, name, names)
        for name in error_names:
            namespace[name] = calls.error_class(name)
    return namespace


def _no_import(name: str, *_: object, **__: object) -> Any:
    """The `__import__` of code with no `import` statement: only C code the code called could ask for a module."""
    raise ForbiddenImportError(f"`import {name}` is not allowed in the sandbox here: import it in the code first")
