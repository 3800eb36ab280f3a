"""The helpers on the model's `tools` namespace beside the tools: their signatures, argument errors and listings.

`tools.search`, `tools.describe` and `tools.list` are called by the model with whatever arguments it guesses,
so their arguments are bound here, by hand, to give errors in the helper's own terms (`max_results`, not
`limit`; never an internal class or method name). `list_page` is the compact browse listing, and
`weak_matches` the closest tools of a small catalog when a search finds nothing by its words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from codemode._naming import close_matches, too_long
from codemode.errors import tool_error
from codemode.schema.stubs import first_sentence

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from codemode.tools import Tool
    from sandbox import JsonObject, JsonValue

PAGE_SIZE: Final = 50
"""Tools on one page of `tools.list()`."""
WEAK_MATCH_CATALOG: Final = 30
"""A catalog of at most this many tools answers a search that matches nothing with its closest tools."""
SYNONYMS: Final = {
    "max_results": ("limit", "k", "n", "top_k", "top_n", "count", "num_results", "max", "size", "results"),
    "query": ("q", "text", "queries", "search", "term", "keywords", "prompt"),
    "name": ("tool", "tool_name", "alias", "id"),
    "prefix": ("namespace", "starts_with", "startswith"),
    "page": ("page_number", "offset"),
    "page_size": ("per_page", "limit"),
}
"""Keywords models write for a helper's parameters, mapped to the real one."""


@dataclass(frozen=True, kw_only=True)
class Helper:
    """One helper: its name, parameters in order with defaults, and the signature shown in errors."""

    name: str
    parameters: tuple[str, ...]
    required: int
    """How many leading parameters have no default."""
    signature: str


HELPERS: Final = {
    "search": Helper(
        name="search", parameters=("query", "max_results"), required=1, signature="tools.search(query, max_results=5)"
    ),
    "describe": Helper(name="describe", parameters=("name",), required=1, signature="tools.describe(name)"),
    "list": Helper(
        name="list",
        parameters=("prefix", "page", "page_size"),
        required=0,
        signature=f'tools.list(prefix="", page=1, page_size={PAGE_SIZE})',
    ),
}


def bind(helper: Helper, args: Sequence[JsonValue], kwargs: Mapping[str, JsonValue], note: str = "") -> JsonObject:
    """The helper's arguments by parameter name, or a `ToolError` in the helper's own terms.

    Args:
        helper: The helper called.
        args: Its positional arguments.
        kwargs: Its keyword arguments.
        note: Appended to the error (say, that a catalog tool of the same name is `tools.search_tool`).
    """
    if len(args) > len(helper.parameters):
        raise tool_error(f"{helper.signature} takes at most {len(helper.parameters)} arguments, got {len(args)}{note}")
    bound: JsonObject = dict(zip(helper.parameters, args, strict=False))
    for key, value in kwargs.items():
        long = too_long(key, "an argument name")
        if long is not None:
            raise tool_error(f"{helper.signature}: {long}{note}")
        if key not in helper.parameters:
            raise tool_error(f"{helper.signature} has no argument `{key}`{_did_you_mean(key, helper)}{note}")
        if key in bound:
            raise tool_error(f"{helper.signature} got `{key}` twice{note}")
        bound[key] = value
    missing = [name for name in helper.parameters[: helper.required] if name not in bound]
    if missing:
        raise tool_error(f"{helper.signature} needs `{missing[0]}`{note}")
    return bound


def _did_you_mean(key: str, helper: Helper) -> str:
    for real, words in SYNONYMS.items():
        if real in helper.parameters and key.lower() in words:
            return f"; did you mean `{real}`?"
    matches = close_matches(key, helper.parameters, limit=1)
    return f"; did you mean `{matches[0]}`?" if matches else f"; it takes {', '.join(helper.parameters)}"


def list_page(tools: Iterable[Tool], *, prefix: JsonValue, page: JsonValue, page_size: JsonValue) -> JsonObject:
    """One page of the catalog's tools as `{"tools": [{"name", "description"}], "page", "pages", "total"}`."""
    if not isinstance(prefix, str):
        raise tool_error('tools.list(prefix=...) takes a string, e.g. `await tools.list(prefix="github")`')
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        raise tool_error("tools.list(page=...) takes a page number from 1")
    if not isinstance(page_size, int) or isinstance(page_size, bool) or not 1 <= page_size <= 200:
        raise tool_error("tools.list(page_size=...) takes an int from 1 to 200")
    wanted = prefix.lower()
    matching = [tool for tool in tools if tool.name.lower().startswith(wanted) or tool.alias.lower().startswith(wanted)]
    pages = max(1, -(-len(matching) // page_size))
    shown = matching[(page - 1) * page_size : page * page_size]
    return {
        "tools": [{"name": tool.alias, "description": first_sentence(tool.description)} for tool in shown],
        "page": page,
        "pages": pages,
        "total": len(matching),
    }


def weak_matches(query: str, tools: Sequence[Tool], k: int) -> list[Tool]:
    """The `k` tools of a small catalog sharing the most word beginnings with `query`, for a search that found none.

    Words are compared by their first four letters, so `dollars` meets `dollar` and `converting` meets
    `convert`; ties keep catalog order.
    """
    if len(tools) > WEAK_MATCH_CATALOG:
        return []
    stems = {_stem(word) for word in _words(query)}

    def overlap(tool: Tool) -> int:
        text = f"{tool.name} {tool.description}"
        return len(stems & {_stem(word) for word in _words(text)})

    return sorted(tools, key=lambda tool: -overlap(tool))[:k]


def _words(text: str) -> list[str]:
    return ["".join(c for c in word if c.isalnum()) for word in text.replace("_", " ").replace(".", " ").split()]


def _stem(word: str) -> str:
    return word.lower()[:4]
