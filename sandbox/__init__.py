"""Run model-written Python safely: RestrictedPython policy, runtime guards, limits, and a process per run.

The root's modules are the public face (`sandbox`, `limits`, `result`, `functions`, `errors`, `jsonvalue`,
`probe`); the packages under it are the sandbox's own, by side of the process boundary: `_shared` (what both sides
use), `_host`, `_worker` (the processes that run the code, and their confinement), `_compiler` and `_runtime`
(what runs beside the model's code, in a worker or inline in the host).

Example:
    ```python
    from sandbox import Limits, Sandbox

    async with Sandbox(limits=Limits(timeout=5.0)) as sb:
        result = await sb.run("return 1 + 1")
    assert result.ok and result.value == 2
    ```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox._host.jsontext import JsonText as JsonText
    from sandbox._shared.confinement import Confinement as Confinement
    from sandbox._shared.confinement import Layers as Layers
    from sandbox.errors import ConfinementError as ConfinementError
    from sandbox.errors import FunctionError as FunctionError
    from sandbox.errors import SandboxClosedError as SandboxClosedError
    from sandbox.errors import SandboxError as SandboxError
    from sandbox.functions import HostFunction as HostFunction
    from sandbox.functions import Namespace as Namespace
    from sandbox.jsonvalue import JsonObject as JsonObject
    from sandbox.jsonvalue import JsonValue as JsonValue
    from sandbox.limits import Limits as Limits
    from sandbox.result import ErrorKind as ErrorKind
    from sandbox.result import RunError as RunError
    from sandbox.result import RunResult as RunResult
    from sandbox.sandbox import Isolation as Isolation
    from sandbox.sandbox import Sandbox as Sandbox

# The one table of public names: each name's module, imported at first use, so `import sandbox.limits` (codemode's
# text cuts, on commands that never run code) loads the limits alone. Type checkers cannot read a table, so the
# imports above repeat it for them; a test keeps the two equal.
_MODULES: dict[str, str] = {
    "Confinement": "sandbox._shared.confinement",
    "ConfinementError": "sandbox.errors",
    "ErrorKind": "sandbox.result",
    "FunctionError": "sandbox.errors",
    "HostFunction": "sandbox.functions",
    "Isolation": "sandbox.sandbox",
    "JsonObject": "sandbox.jsonvalue",
    "JsonText": "sandbox._host.jsontext",
    "JsonValue": "sandbox.jsonvalue",
    "Layers": "sandbox._shared.confinement",
    "Limits": "sandbox.limits",
    "Namespace": "sandbox.functions",
    "RunError": "sandbox.result",
    "RunResult": "sandbox.result",
    "Sandbox": "sandbox.sandbox",
    "SandboxClosedError": "sandbox.errors",
    "SandboxError": "sandbox.errors",
}

# Ruff reads only a literal list; this one is the table's names, so it cannot drift from it.
__all__ = sorted(_MODULES)  # noqa: PLE0605


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
