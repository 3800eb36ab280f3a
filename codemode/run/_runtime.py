"""The bridge between a catalog and the sandbox: what `tools.<name>(...)`, `tools.search` and `tools.describe` do.

Everything the model gets wrong comes back as a `ToolError` it can read and act on: unknown names (with close
matches), arguments that do not fit the schema (the parameter, what was expected, what was given), handlers
that raise, results that are not JSON or are too large. A handler's result is converted, encoded and measured
here, once: the sandbox gets its `JsonText` and does not check it again.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import pydantic

from codemode._naming import portable_alias, too_long
from codemode._results import ResultTooLargeError, to_json
from codemode.errors import ERROR_NAME, ToolError
from codemode.errors import tool_error as tool_error  # noqa: PLC0414  # re-exported: OpenAPI sources import it here
from codemode.run._helpers import HELPERS, PAGE_SIZE, bind, list_page, weak_matches
from codemode.schema._argument_errors import call_message, given_text, named_arguments, validation_details
from codemode.schema._validator import CheckedSchema, checked_schema, report_problem
from codemode.schema.stubs import first_sentence, parameter_names, render_line, render_signature, render_stub
from codemode.search import merge_rankings
from sandbox import FunctionError, JsonText, Namespace

if TYPE_CHECKING:
    from codemode.approvals._ledger import Ledger
    from codemode.catalog import Catalog
    from codemode.events import ToolCall
    from codemode.tools import Arguments, Tool
    from sandbox import JsonObject, JsonValue

DIR_TOOLS = 100
"""`dir(tools)` lists the tools' names too in a catalog of at most this many."""
MAX_QUERIES = 10
"""The most queries one `tools.search([...])` call may merge."""
MAX_QUERY = 1_000
"""The longest query `tools.search` takes, in characters: a capability in words, not a document to match."""
_FIND = 'Find tools with `await tools.search("what you need")`.'
SearchFunction = Callable[[str, int], Awaitable[list["Tool"]]]
MAY_HAVE_ACTED: Final = "it may still have taken effect: check before you repeat it"
"""What the model is told of a call cut off before it answered (a time limit, a lost connection)."""


class CutOffError(FunctionError):
    """A tool's `ToolError` when its call was cut off before it answered (a timeout, a lost connection).

    The call may have taken effect, so the run's record marks it `in_flight`, as it does a call still running when
    the run stopped. Raised by the MCP and OpenAPI sources; it reaches the sandbox as a plain `ToolError`.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, type_name=ERROR_NAME)


MAX_ARGUMENT_VALUES = 100_000
"""The most values one call's arguments may hold (every item of their lists and objects): checked before validation."""
ON_LOOP_VALUES = 1_000
"""Arguments of at most this many values are validated on the host's loop; larger ones in a worker thread."""
_VALIDATORS = 2
"""Worker threads validating large arguments at once, per `CodeMode`."""
_SLACK = 16
"""How far over `max_result` a result is still written out, to say its exact size; past that, the walk stops."""


@dataclass(frozen=True, slots=True)
class Converted:
    """A handler's result, converted and measured once: the data the host keeps, and the text the code is given."""

    value: JsonValue
    """The result as JSON data: what the ledger records and `after` hooks see."""
    text: JsonText
    """The same, encoded: what the sandbox hands to the code, unchecked, if no hook saw `value`."""


class StubCache:
    """Stubs and validators per tool, rendered once per definition (a tool replaced by a new one re-renders)."""

    def __init__(self) -> None:
        self._stubs: dict[str, tuple[Tool, str]] = {}
        self._lines: dict[str, tuple[Tool, str]] = {}
        self._validators: dict[str, tuple[Tool, CheckedSchema, dict[str, str]]] = {}
        self._limiter: anyio.CapacityLimiter | None = None

    def limiter(self) -> anyio.CapacityLimiter:
        """The threads that validate large arguments: a few at once, so a run's many calls queue rather than pile up."""
        if self._limiter is None:  # made in the loop that first needs it
            self._limiter = anyio.CapacityLimiter(_VALIDATORS)
        return self._limiter

    def stub(self, tool: Tool) -> str:
        """The tool's full stub."""
        cached = self._stubs.get(tool.name)
        if cached is None or cached[0] is not tool:
            cached = (tool, render_stub(tool))
            self._stubs[tool.name] = cached
        return cached[1]

    def line(self, tool: Tool) -> str:
        """The tool's one-line stub."""
        cached = self._lines.get(tool.name)
        if cached is None or cached[0] is not tool:
            cached = (tool, render_line(tool))
            self._lines[tool.name] = cached
        return cached[1]

    def validator(self, tool: Tool) -> tuple[CheckedSchema, dict[str, str]]:
        """The tool's argument validator and its stub-name -> schema-name map.

        A schema valid under no draft is logged once, here, at its first call: its tool is still called, with
        only the arguments its schema can check checked.
        """
        cached = self._validators.get(tool.name)
        if cached is None or cached[0] is not tool:
            checked = checked_schema(tool.parameters)
            if checked.problem is not None:
                report_problem(tool.name, checked.problem)
            cached = (tool, checked, parameter_names(tool.parameters))
            self._validators[tool.name] = cached
        return cached[1], cached[2]


class CatalogStubs(Mapping[str, str]):
    """The current stub of every catalog tool by original name (its one-line stub with `lines`), rendered on lookup."""

    def __init__(self, catalog: Catalog, cache: StubCache, *, lines: bool = False) -> None:
        self.catalog = catalog
        self.cache = cache
        self.lines = lines

    def __getitem__(self, name: str) -> str:
        tool = self.catalog.get(name)
        if tool is None or tool.name != name:
            raise KeyError(name)
        return self.cache.line(tool) if self.lines else self.cache.stub(tool)

    def __iter__(self) -> Any:
        return (tool.name for tool in self.catalog)

    def __len__(self) -> int:
        return len(self.catalog)


class ToolRuntime:
    """One `execute`'s view of the catalog: resolves `tools.<name>`, and records discoveries and calls."""

    def __init__(
        self,
        *,
        catalog: Catalog,
        search: SearchFunction,
        cache: StubCache,
        hide_errors: bool,
        max_result: int,
        ledger: Ledger,
    ) -> None:
        self.catalog = catalog
        self.search_tools = search
        self.cache = cache
        self.hide_errors = hide_errors
        self.max_result = max_result
        self.ledger = ledger
        self.discovered: dict[str, None] = {}
        """Tools the code found, described or called, by original name, in order."""
        self.used: set[str] = set()
        """Tools the code described or called: announced in full, where a tool only found is one line."""

    @property
    def calls(self) -> list[ToolCall]:
        """Completed calls, in the order they ended (replayed ones included)."""
        return self.ledger.calls

    def record(self) -> tuple[ToolCall, ...]:
        """Every call: the completed ones in the order they ended, then those still in flight, as they started."""
        return self.ledger.so_far()

    def namespace(self) -> Namespace:
        """The sandbox namespace the model's code sees as `tools`; `dir(tools)` shows the helpers (and tools)."""
        return Namespace(self.resolve, names=self.names)

    def names(self) -> list[str]:
        """What `dir(tools)` shows: the helpers, and each tool's alias in a catalog of at most `DIR_TOOLS`."""
        tools = [tool.alias for tool in self.catalog] if len(self.catalog) <= DIR_TOOLS else []
        return [*HELPERS, *tools]

    def resolve(self, name: str) -> Callable[..., Awaitable[JsonValue | JsonText]]:
        """The host function behind `tools.<name>`."""
        long = too_long(name, "a tool name")
        if long is not None:
            raise tool_error(f"{long}. {_FIND}")
        if name in HELPERS:
            helper = HELPERS[name]
            method = getattr(self, "list_tools" if name == "list" else name)
            tool = self.catalog.get(name)  # a catalog tool of the same name has another alias (`search_tool`)
            note = f" (the catalog's tool {name!r} is `tools.{tool.alias}`)" if tool is not None else ""

            async def call_helper(*args: JsonValue, **kwargs: JsonValue) -> JsonValue:
                result: JsonValue = await method(**bind(helper, args, kwargs, note))
                return result

            return call_helper
        tool = find_tool(self.catalog, name)
        if tool is None:
            raise tool_error(unknown_tool(self.catalog, name))

        async def call(*args: JsonValue, **kwargs: JsonValue) -> JsonValue | JsonText:
            return await self.call(tool, args, kwargs)

        return call

    async def list_tools(
        self, prefix: JsonValue = "", page: JsonValue = 1, page_size: JsonValue = PAGE_SIZE
    ) -> JsonValue:
        """`tools.list(prefix="", page=1)`: names and one-line descriptions, a page at a time; announces nothing."""
        return list_page(self.catalog, prefix=prefix, page=page, page_size=page_size)

    async def search(self, query: str | list[str], max_results: int = 5) -> list[JsonValue]:
        """`tools.search(query, max_results=5)`: the best matching tools, as name/description/signature.

        A list of queries (one per capability a task needs) is searched query by query and the rankings are
        merged by reciprocal rank, so each query's best tools come first and tools found by several rise.
        """
        problem = search_problem(query, max_results)
        if problem is not None:
            raise tool_error(problem)
        queries = query if isinstance(query, list) else [query]
        rankings = [await self.search_tools(q, max_results) for q in queries if isinstance(q, str)]
        found = rankings[0] if len(rankings) == 1 else merge_rankings(rankings)[:max_results]
        weak = not found
        if weak:  # nothing shares a word with the query: a small catalog still shows its closest tools
            found = weak_matches(" ".join(q for q in queries if isinstance(q, str)), list(self.catalog), max_results)
        for tool in found:
            self.discovered.setdefault(tool.name)
        return [
            {
                "name": tool.alias,
                "description": first_sentence(tool.description),
                "signature": render_signature(tool),
                **({"match": "weak"} if weak else {}),
            }
            for tool in found
        ]

    async def describe(self, name: str) -> str:
        """`tools.describe(name)`: one tool's full stub (by alias or original name)."""
        text = name if isinstance(name, str) else str(name)
        long = too_long(text, "a tool name")
        if long is not None:
            raise tool_error(f"{long}. {_FIND}")
        tool = self.catalog.get(name) if isinstance(name, str) else None
        if tool is None:
            raise tool_error(unknown_tool(self.catalog, text))
        self.discovered.setdefault(tool.name)
        self.used.add(tool.name)
        return self.cache.stub(tool)

    async def call(self, tool: Tool, args: tuple[JsonValue, ...], kwargs: dict[str, JsonValue]) -> JsonValue | JsonText:
        """Validate the arguments, run the handler under the policy, and return its result as JSON."""
        self.discovered.setdefault(tool.name)
        self.used.add(tool.name)
        prepare = functools.partial(self._checked, tool, args)  # run by the ledger, in the order calls are issued
        return await self.ledger.call(tool, kwargs, prepare=prepare, invoke=functools.partial(self._invoke, tool))

    async def _checked(self, tool: Tool, args: tuple[JsonValue, ...], kwargs: dict[str, JsonValue]) -> JsonObject:
        """The validated arguments; `ToolError` if they do not fit the schema.

        Schema validation is pure Python (tens of microseconds a value): arguments of more than `ON_LOOP_VALUES`
        are checked in a worker thread, so the host's loop goes on, and more than `MAX_ARGUMENT_VALUES` are refused.
        """
        if args:
            raise tool_error(f"tools.{tool.alias}() takes keyword arguments only: {render_signature(tool)}")
        for key in kwargs:
            long = too_long(key, "an argument name")
            if long is not None:
                raise tool_error(f"tools.{tool.alias}(): {long}. Signature: {render_signature(tool)}")
        validator, names = self.cache.validator(tool)
        arguments, unexpected = named_arguments(tool, names, kwargs)
        values = count_values(arguments, stop=MAX_ARGUMENT_VALUES)
        if values > MAX_ARGUMENT_VALUES:
            raise tool_error(
                f"tools.{tool.alias}(): the arguments hold more than {MAX_ARGUMENT_VALUES:,} values (the items "
                "of every list and object, counted together); pass the data in batches, over several calls"
            )
        if values <= ON_LOOP_VALUES:
            errors = validator.errors(arguments)
        else:  # abandoned on a timeout: the thread's work is bounded by `MAX_ARGUMENT_VALUES`
            errors = await anyio.to_thread.run_sync(
                validator.errors, arguments, abandon_on_cancel=True, limiter=self.cache.limiter()
            )
        details = [*unexpected.details, *validation_details(errors, names, meant=unexpected.meant)]
        if details:
            raise tool_error(call_message(tool, details))
        return arguments

    async def _invoke(self, tool: Tool, validated: JsonObject) -> Converted:
        if tool.handler is None:
            raise tool_error(f"tools.{tool.alias}() has no handler here (its definition was loaded without one)")
        arguments: dict[str, Any] = validated
        if tool.arguments is not None:
            arguments = self._converted(tool, tool.arguments, arguments)
        handler = tool.handler
        try:
            if inspect.iscoroutinefunction(handler):
                result = await handler(**arguments)
            else:  # a sync handler may block: run it in a worker thread; a timeout abandons it rather than wait
                call = functools.partial(handler, **arguments)
                result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
            if inspect.isawaitable(result):
                result = await result
        except FunctionError:
            raise
        except ToolError as error:  # written for the model: shown as it is, whatever `hide_errors` says
            raise tool_error(_message(error)) from None
        except BaseException as error:  # a tool's failure, `SystemExit` too, is the model's to read, not the host's
            if _passes_through(error):
                raise
            message = "" if self.hide_errors else _message(error)
            detail = f"{type(error).__name__}: {message}" if message else type(error).__name__
            if isinstance(error, SystemExit):
                detail += " (the tool exited, as a command-line parser does on arguments it rejects)"
            elif isinstance(error, asyncio.CancelledError):
                detail += " (raised inside the tool: something it waited on was cancelled)"
            raise tool_error(detail) from None
        return self._json_result(tool, result)

    def _converted(self, tool: Tool, owner: Arguments, arguments: JsonObject) -> dict[str, Any]:
        """The arguments as the handler's annotated types; a value that does not convert fails the call here."""
        try:
            return owner.convert(arguments)
        except pydantic.ValidationError as error:
            details: dict[str, str] = {}
            for problem in error.errors(include_url=False):  # one per argument: its first problem
                where = ".".join(str(part) for part in problem["loc"])
                details.setdefault(
                    str(problem["loc"][0]) if problem["loc"] else "",
                    f"argument `{where}`: {problem['msg']} (given {given_text(problem.get('input'))})",
                )
            raise tool_error(call_message(tool, list(details.values()))) from None

    def _json_result(self, tool: Tool, result: object) -> Converted:
        """The one conversion and size check of a result: `ToolError` if it is not JSON or over `max_result`."""
        stop = _SLACK * self.max_result
        try:
            data = to_json(result, stop=stop)
            text = JsonText(data)
        except ResultTooLargeError:
            raise tool_error(self._too_large(tool, f"more than {stop:,}")) from None
        except (TypeError, ValueError, RecursionError) as error:
            raise tool_error(
                f"tools.{tool.alias}() returned data that is not JSON ({error}); "
                "this is a bug in the tool, not in your code"
            ) from None
        if text.size > self.max_result:
            raise tool_error(self._too_large(tool, f"{text.size:,}"))
        return Converted(value=data, text=text)

    def _too_large(self, tool: Tool, size: str) -> str:
        return (
            f"tools.{tool.alias}() returned {size} bytes, over the {self.max_result:,} "
            "byte limit; ask for less (filters, pagination, fewer fields)"
        )


def search_problem(query: object, max_results: object) -> str | None:
    """What is wrong with the arguments of `tools.search(query, max_results)`, or None."""
    queries = query if isinstance(query, list) else [query]
    if isinstance(query, list) and not 1 <= len(query) <= MAX_QUERIES:
        return f"tools.search([...]) takes a list of 1 to {MAX_QUERIES} query strings"
    if not all(isinstance(q, str) and q.strip() for q in queries):
        return 'tools.search() needs a query string, e.g. `await tools.search("send an email")`'
    if not isinstance(max_results, int) or not 1 <= max_results <= 50:
        return "tools.search(max_results=...) must be an int from 1 to 50"
    longest = max(len(q) for q in queries if isinstance(q, str))
    if longest > MAX_QUERY:  # refused before any tokenizing: the search runs on the host's loop
        return (
            f"a tools.search() query is at most {MAX_QUERY:,} characters (the longest given has {longest:,}): "
            'name what you need in a few words, e.g. `await tools.search("send an email")`, '
            "or pass a list of short queries, one per capability"
        )
    return None


def find_tool(catalog: Catalog, name: str) -> Tool | None:
    """The tool `tools.<name>` calls: by original name or alias, and a dotted guess (`crm.notes.add`) by its alias."""
    tool = catalog.get(name)
    if tool is None and "." in name:
        tool = catalog.get(portable_alias(name))
    return tool


def unknown_tool(catalog: Catalog, name: str) -> str:
    """What the model reads of a tool name the catalog does not have: the closest names, and how to find tools."""
    matches = [tool.alias for tool in catalog.similar(name, limit=3)]
    hint = f" Did you mean: {', '.join(matches)}?" if matches else ""
    return f"there is no tool named {name!r}.{hint} {_FIND}"


def _passes_through(error: BaseException) -> bool:
    """Whether `error` is (or holds) the person's Ctrl-C or the run's own cancellation: not the tool's failure.

    A `CancelledError` is the run's only while this task is being cancelled; otherwise the tool raised its own
    (it awaited a future something else cancelled, as a client library does when its connection resets).
    """
    cancelled = anyio.get_cancelled_exc_class()

    def passes(leaf: BaseException) -> bool:
        return isinstance(leaf, (KeyboardInterrupt, GeneratorExit)) or (isinstance(leaf, cancelled) and _cancelling())

    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(passes) is not None
    return passes(error)


def _cancelling() -> bool:
    """Whether the running task has a cancellation pending (always so off asyncio, where none can be told apart)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not asyncio: its cancellation exception is its own, never a tool's
        return True
    return task is None or task.cancelling() > 0


def _message(error: BaseException) -> str:
    """`str(error)`, or a stand-in when the exception's own `__str__` fails."""
    try:
        return str(error)
    except Exception:  # noqa: BLE001  # a broken `__str__` must not turn the call's failure into the host's
        return f"(the {type(error).__name__}'s message could not be read)"


def count_values(value: JsonValue, *, stop: int) -> int:
    """How many values `value` holds below its top (items of lists, values of objects), counted up to past `stop`."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        count += len(children)
        if count > stop:
            break
        stack.extend(children)
    return count
