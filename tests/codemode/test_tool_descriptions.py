"""A tool made from a `functools.partial` or a callable object is described by what calling it does."""

from __future__ import annotations

import functools

from inline_snapshot import snapshot

from codemode import Catalog, CodeMode


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


class Doubler:
    """A service object (its class docstring says what it is, not what a call does)."""

    def __call__(self, text: str) -> str:
        """Repeat a text twice."""
        return text * 2


class Undocumented:
    """Echo service."""

    def __call__(self, text: str) -> str:
        return text


async def test_partials_and_callable_objects_get_their_callables_docstrings() -> None:
    """`partial(add, b=10)` is described by `add`'s docstring, an object by its `__call__`'s, else by its class's."""
    catalog = Catalog()
    catalog.tool(functools.partial(add, b=10), name="add10")
    catalog.tool(Doubler(), name="double")
    catalog.tool(Undocumented(), name="echo")

    async with CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute(
            'return [await tools.describe(n) for n in ("add10", "double", "echo")]', cm.new_state()
        )

    assert result.run.value == snapshot(
        [
            '''\
async def add10(*, a: int, b: int = 10) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    ...
''',
            '''\
async def double(*, text: str) -> str:
    """Repeat a text twice."""
    ...
''',
            '''\
async def echo(*, text: str) -> str:
    """Echo service."""
    ...
''',
        ]
    )
