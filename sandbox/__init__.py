"""Run model-written Python safely: RestrictedPython policy, runtime guards, limits, and a process per run.

The root's modules are the public face (`sandbox`, `limits`, `result`, `functions`, `errors`, `jsonvalue`,
`probe`); the packages under it are the sandbox's own, by side of the process boundary: `shared` (what both sides
use), `host`, `worker` (the processes that run the code, and their confinement), `compiler` and `runtime` (what
runs beside the model's code, in a worker or inline in the host).

Example:
    ```python
    from sandbox import Limits, Sandbox

    async with Sandbox(limits=Limits(timeout=5.0)) as sb:
        result = await sb.run("return 1 + 1")
    assert result.ok and result.value == 2
    ```
"""

from __future__ import annotations

from sandbox.errors import ConfinementError as ConfinementError
from sandbox.errors import FunctionError as FunctionError
from sandbox.errors import SandboxClosedError as SandboxClosedError
from sandbox.errors import SandboxError as SandboxError
from sandbox.functions import HostFunction as HostFunction
from sandbox.functions import Namespace as Namespace
from sandbox.host.jsontext import JsonText as JsonText
from sandbox.jsonvalue import JsonObject as JsonObject
from sandbox.jsonvalue import JsonValue as JsonValue
from sandbox.limits import Limits as Limits
from sandbox.result import ErrorKind as ErrorKind
from sandbox.result import RunError as RunError
from sandbox.result import RunResult as RunResult
from sandbox.sandbox import Isolation as Isolation
from sandbox.sandbox import Sandbox as Sandbox
from sandbox.shared.confinement import Confinement as Confinement
from sandbox.shared.confinement import Layers as Layers

__all__ = [
    "Confinement",
    "ConfinementError",
    "ErrorKind",
    "FunctionError",
    "HostFunction",
    "Isolation",
    "JsonObject",
    "JsonText",
    "JsonValue",
    "Layers",
    "Limits",
    "Namespace",
    "RunError",
    "RunResult",
    "Sandbox",
    "SandboxClosedError",
    "SandboxError",
]
