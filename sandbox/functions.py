"""Host functions as the model's code sees them: plain awaitable callables, and namespaces of them.

`functions={"fetch": fetch}` makes `await fetch(...)` available. `functions={"tools": Namespace(resolve)}` makes
`await tools.anything(...)`, `tools["anything"]` and `getattr(tools, "anything")` available, with the name resolved
by the host at call time, so the set of names can grow during a run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

HostFunction = Callable[..., Any | Awaitable[Any]]
"""A sync or async callable that takes and returns JSON data."""


class Namespace:
    """Host functions looked up by name when the model's code calls them.

    Example:
        ```python
        def resolve(name: str) -> HostFunction:
            if name not in registry:
                raise FunctionError(f"no function {name!r}", type_name="LookupError")
            return registry[name]

        await sb.run("return await ns.add(a=1, b=2)", functions={"ns": Namespace(resolve)})
        ```
    """

    def __init__(self, resolve: Callable[[str], HostFunction], *, names: Callable[[], Iterable[str]] | None = None):
        self.resolve = resolve
        """Returns the host function for a name, or raises `FunctionError` to tell the model why not."""
        self.names = names
        """Lists the names, for `dir(namespace)` in the model's code; optional."""
