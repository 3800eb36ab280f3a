"""`Catalog`: the tools a host offers, by name and portable alias, with change events.

The catalog checks every definition when it is registered (an object schema for the arguments, a portable alias
no other tool uses), so that mistakes in the host's setup raise here, at startup, rather than reach the model.
Whether a schema is valid JSON Schema costs about a millisecond a tool to learn, so only `add` (a definition the
host wrote) asks at registration; definitions from elsewhere (`extend`, `load_jsonl`) are read under the draft
they are valid under when first called, kept with relaxed validation when valid under none, and `check()` lists
those for a person (`codemode check`). Each change (tools added, removed or replaced) bumps `version` and is sent to
subscribers as one `CatalogChange`, which lets a search index or a discovery state follow it incrementally.

Beside it: `_definitions` (what a definition must be to enter a catalog), `_jsonl` (one JSONL definition),
`_sources` (what every source of tools shares) and `_bulk` (the garbage collector paused while loading many).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, overload

from codemode._naming import close_matches, portable_alias
from codemode.catalog._bulk import collector_paused
from codemode.catalog._definitions import check_definition, collision_message, numbered_aliases, renamed
from codemode.catalog._jsonl import tool_from_json_line
from codemode.errors import CatalogError
from codemode.schema._validator import checked_schema
from codemode.tools import Handler, Tool, tool_from_function

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from codemode.policy import ApprovalRule, ToolLimits
    from sandbox import JsonObject

F = TypeVar("F", bound="Callable[..., Any]")


class _ToolDecorator(Protocol):
    """What `@catalog.tool(...)` with options returns: a decorator that gives back the function it gets."""

    def __call__(self, fn: F, /) -> F: ...


@dataclass(frozen=True, kw_only=True)
class CatalogChange:
    """One change to a catalog; a replaced definition appears in both `removed` (old) and `added` (new)."""

    added: tuple[Tool, ...] = ()
    """Tools registered by this change, in registration order."""
    removed: tuple[Tool, ...] = ()
    """Tools that left the catalog in this change."""


@dataclass(frozen=True, kw_only=True)
class SchemaCheck:
    """How one of a tool's schemas is read: under which JSON Schema draft, or relaxed, and why."""

    tool: str
    """The tool's name."""
    field: Literal["parameters", "returns"]
    """Which schema: the arguments' or the result's."""
    draft: str
    """The draft it is read under (`"draft-2020-12"`, `"draft-04"`), or `"relaxed"` when valid under none."""
    problem: str | None
    """Why it is valid under no draft; `None` when it is valid under `draft`."""


class Catalog:
    """The tools a host offers, in registration order.

    Example:
        ```python
        catalog = Catalog()


        @catalog.tool
        async def get_weather(city: str) -> dict[str, float]:
            \"\"\"Get the weather forecast for a city.\"\"\"


        catalog.add(name="math.factorial", description="n!", parameters={"type": "object", "properties": {}})
        catalog.get("math_factorial")  # the alias finds it too
        ```
    """

    def __init__(self, tools: Iterable[Tool] = (), *, check_schemas: bool = True) -> None:
        """Make a catalog, optionally filled with `tools`.

        Args:
            tools: Definitions to register first.
            check_schemas: Refuse a definition given to `add` whose schema is valid under no JSON Schema draft.
                Other ways in (`extend`, `load_jsonl`, sources from the wild) keep such a tool and check it
                lazily; `check()` lists them.
        """
        self._tools: dict[str, Tool] = {}
        self._by_key: dict[str, Tool] = {}
        self._version = 0
        self._fingerprint: bytes | None = b""  # None once a tool came from anywhere but a JSONL file
        self._subscribers: list[Callable[[CatalogChange], None]] = []
        self._check_schemas = check_schemas
        self.extend(tools)

    @property
    def fingerprint(self) -> str | None:
        """A hash of the JSONL files (and prefixes and aliases) every tool came from, or None if not all did.

        Two catalogs with the same fingerprint hold the same definitions in the same order, so what is derived
        from them (the search index on disk) can be cached under it without reading every definition. Any
        other change (`add`, `extend`, `replace`, `remove`, `@tool`) makes it None for good.
        """
        return None if self._fingerprint is None else self._fingerprint.hex()

    @property
    def version(self) -> int:
        """A number that grows by one on every change."""
        return self._version

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        deferred: bool = True,
        approval: ApprovalRule = False,
        limits: ToolLimits | None = None,
    ) -> _ToolDecorator: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        deferred: bool = True,
        approval: ApprovalRule = False,
        limits: ToolLimits | None = None,
    ) -> Any:
        """Register a sync or async function as a tool (see `tool_from_function`); the function is returned as is.

        Use it bare (`@catalog.tool`) or with options (`@catalog.tool(name="weather.get", approval=True)`).
        """

        def register(function: F) -> F:
            tool = tool_from_function(
                function, name=name, description=description, deferred=deferred, approval=approval, limits=limits
            )
            self.extend([tool])
            return function

        return register if fn is None else register(fn)

    def add(
        self,
        *,
        name: str,
        description: str,
        parameters: JsonObject,
        handler: Handler | None = None,
        returns: JsonObject | None = None,
        deferred: bool = True,
        approval: ApprovalRule = False,
        limits: ToolLimits | None = None,
    ) -> Tool:
        """Register a raw definition: a JSON Schema for the arguments and, optionally, a handler.

        `approval` (`True`, or a rule on the validated arguments) makes calls wait for a person's decision;
        `limits` bounds their time, concurrency and rate (see `codemode.policy`).
        """
        tool = Tool(
            name=name,
            description=description,
            parameters=parameters,
            returns=returns,
            handler=handler,
            deferred=deferred,
            approval=approval,
            limits=limits,
        )
        if self._check_schemas:
            check_definition(tool)
            for field, schema in (("parameters", parameters), ("returns", returns)):
                problem = _schema_draft(schema)[1] if schema is not None else None
                if problem:
                    raise CatalogError(f"Tool {tool.name!r}: `{field}` is not a valid JSON Schema: {problem}")
        self.extend([tool])
        return tool

    def check(self) -> dict[str, str]:
        """The tools whose argument or result schema is valid under no JSON Schema draft, with the reason.

        Such tools stay searchable and callable; only what their schema can say is checked in their arguments.
        It takes about a millisecond a tool (each distinct schema once); `check_schemas` says more.
        """
        problems: dict[str, str] = {}
        for check in self.check_schemas():
            if check.problem and check.tool not in problems:
                problems[check.tool] = f"`{check.field}`: {check.problem}"
        return problems

    def check_schemas(self) -> list[SchemaCheck]:
        """Each tool's argument schema, and result schema if it has one, read as its first call will read it."""
        checks: list[SchemaCheck] = []
        fields: tuple[Literal["parameters", "returns"], ...] = ("parameters", "returns")
        for tool in self:
            for field, schema in zip(fields, (tool.parameters, tool.returns), strict=True):
                if schema is not None:
                    draft, problem = _schema_draft(schema)
                    checks.append(SchemaCheck(tool=tool.name, field=field, draft=draft, problem=problem))
        return checks

    def extend(
        self, tools: Catalog | Iterable[Tool], *, prefix: str = "", aliases: Mapping[str, str] | None = None
    ) -> None:
        """Register several tools (another catalog's, say) as one change; if one is refused, none is added.

        Args:
            tools: The tools; a catalog is copied as it is now, later changes to it are not followed.
            prefix: Prepended to each name (`"gh."` makes `create_issue` into `gh.create_issue`); aliases
                are derived again from the new names.
            aliases: Hand-made aliases by (prefixed) name, for names whose derived aliases clash
                (`{"car.rental": "car_rental_dotted"}` beside a tool named `car_rental`).
        """
        pending: dict[str, Tool] = {}
        batch = numbered_aliases([renamed(tool, prefix, aliases) for tool in tools], self.__contains__)
        added = [self._check_new(tool, pending) for tool in batch]
        self._commit(added=added, removed=[])

    def replace(self, tool: Tool) -> Tool:
        """Put a new definition in place of the tool with the same name; returns the old one."""
        old = self._tools.get(tool.name)
        if old is None:
            raise CatalogError(
                f"Cannot replace tool {tool.name!r}: it is not in the catalog. Register it with `catalog.add` "
                "or `catalog.extend` first."
            )
        holder = self._by_key.get(tool.alias)
        if holder is not None and holder is not old and tool.alias == portable_alias(tool.name):
            tool = dataclasses.replace(tool, alias=old.alias)  # a numbered alias (`car_rental_2`) stays
        self._check_new(tool, {}, replacing=old)
        self._commit(added=[tool], removed=[old])
        return old

    def remove(self, name: str) -> Tool:
        """Remove a tool by its name or alias; returns it."""
        tool = self._by_key.get(name)
        if tool is None:
            raise CatalogError(f"Cannot remove tool {name!r}: it is not in the catalog.{self._hint(name)}")
        self._commit(added=[], removed=[tool])
        return tool

    def get(self, name: str) -> Tool | None:
        """The tool with this original name or alias, or `None`."""
        return self._by_key.get(name)

    def similar(self, name: str, *, limit: int = 3) -> list[Tool]:
        """Tools whose name or alias is close to `name` (an unknown name), best first."""
        found: dict[str, Tool] = {}
        for key in close_matches(name, self._by_key, limit=2 * limit):
            tool = self._by_key[key]
            found.setdefault(tool.name, tool)
        return list(found.values())[:limit]

    def subscribe(self, callback: Callable[[CatalogChange], None]) -> Callable[[], None]:
        """Call `callback` after every change; returns a function that unsubscribes it."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def load_jsonl(self, path: str | Path, *, prefix: str = "", aliases: Mapping[str, str] | None = None) -> list[Tool]:
        """Register the definitions in a JSONL file (tools without handlers) as one change.

        Each line is an object with `name`, `description` and `parameters`, optionally `returns`, `deferred`
        and `approval` (true: every call needs a person's approval); blank lines are skipped.

        Args:
            path: The file.
            prefix: Prepended to each name, to keep several sets apart (`"bfcl."`).
            aliases: Hand-made aliases by (prefixed) name, for names whose derived aliases clash.

        Raises:
            CatalogError: The file cannot be read, or a line is not a valid definition (the message names the
                file and line number); nothing is registered then.
        """
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise CatalogError(f"Cannot read tool definitions from {str(path)!r}: {e}") from e
        pending: dict[str, Tool] = {}
        read: list[tuple[int, Tool]] = []
        with collector_paused():
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    read.append((number, tool_from_json_line(line, prefix=prefix, aliases=aliases)))  # checked
                except CatalogError as e:
                    raise CatalogError(f"{path}:{number}: {e}") from e
        added = numbered_aliases([tool for _, tool in read], self.__contains__)
        for (number, _), tool in zip(read, added, strict=True):
            try:
                self._check_new(tool, pending, checked=True)
            except CatalogError as e:
                raise CatalogError(f"{path}:{number}: {e}") from e
        # One JSON line (no raw newline in it) before the text keeps the two apart without re-encoding the text.
        header = json.dumps([prefix, sorted((aliases or {}).items())], ensure_ascii=False) + "\n"
        source = (header + text).encode("utf-8", "surrogatepass")
        self._commit(added=added, removed=[], source=source)
        return added

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._by_key

    def __repr__(self) -> str:
        return f"<Catalog of {len(self)} tools, version {self._version}>"

    def _check_new(
        self, tool: Tool, pending: dict[str, Tool], *, replacing: Tool | None = None, checked: bool = False
    ) -> Tool:
        """Check a tool (its definition too, unless `checked`) against the catalog and its batch; keep it."""
        if not checked:
            check_definition(tool)
        for key in (tool.name,) if tool.name == tool.alias else (tool.name, tool.alias):
            other = pending.get(key) or self._by_key.get(key)
            if other is not None and other is not replacing:
                raise CatalogError(collision_message(tool, other, key))
            pending[key] = tool
        return tool

    def _commit(self, *, added: list[Tool], removed: list[Tool], source: bytes | None = None) -> None:
        """Apply one change and tell the subscribers; `source` is what a JSONL load read (for `fingerprint`)."""
        if not added and not removed:
            return
        if source is None or self._fingerprint is None:
            self._fingerprint = None
        else:
            self._fingerprint = hashlib.blake2b(self._fingerprint + source, digest_size=16).digest()
        replaced = {tool.name for tool in added}
        for tool in removed:
            if tool.name not in replaced:  # a replaced definition keeps its place in the order
                del self._tools[tool.name]
            self._by_key.pop(tool.name, None)
            self._by_key.pop(tool.alias, None)
        for tool in added:
            self._tools[tool.name] = tool
            self._by_key[tool.name] = self._by_key[tool.alias] = tool
        self._version += 1
        change = CatalogChange(added=tuple(added), removed=tuple(removed))
        for callback in list(self._subscribers):
            callback(change)

    def _hint(self, name: str) -> str:
        names = [tool.name for tool in self.similar(name)]
        return f" Did you mean {', '.join(repr(n) for n in names)}?" if names else ""


def _schema_draft(schema: JsonObject) -> tuple[str, str | None]:
    checked = checked_schema(schema)
    problem = checked.problem
    return checked.draft, f"{problem}." if problem and problem.startswith("it is not plain JSON") else problem
