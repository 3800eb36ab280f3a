"""The numbers behind the demo's summary: prompt reuse, and what declaring tools some other way would cost.

The alternatives are every definition declared up front, and discovery that edits the tool list.

Tokens are estimated as bytes/4 of the serialized prompt. The two alternatives are modelled on the same
messages (without codemode's announcements, whose stubs they would carry in `tools` instead):
- up front: every catalog definition is in `tools` in every request; the prompt is stable, so only the new
  messages of each request miss the cache;
- editing the tool list: `tools` holds the definitions discovered so far; a request whose tool list changed
  misses the cache entirely, since tools come first in the cached prefix.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codemode.testing import BYTES_PER_TOKEN, prompt_text, shared_prefix

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemode.catalog import Catalog
    from sandbox import JsonObject


@dataclass(frozen=True, kw_only=True)
class Costs:
    """Input tokens of a whole conversation."""

    total: int
    """All input tokens."""
    uncached: int
    """Input tokens that missed the prompt cache."""

    @property
    def relative_cost(self) -> float:
        """Input cost in units of an uncached token, at Anthropic's prices: cache reads 0.1x, writes 1.25x."""
        return 0.1 * (self.total - self.uncached) + 1.25 * self.uncached


@dataclass(frozen=True, kw_only=True)
class Report:
    """What the demo's summary shows."""

    requests: int
    """Requests sent."""
    tools_constant: bool
    """Whether the `tools` field had the same bytes in every request."""
    reuse: tuple[float, ...]
    """For each request after the first, the share of the previous prompt that is a prefix of it."""
    codemode: Costs
    """This conversation."""
    up_front: Costs
    """The same with every catalog definition declared in `tools`."""
    edited: Costs
    """The same with discovered definitions added to `tools` as they are found."""


def _tokens(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False)) // BYTES_PER_TOKEN


def _definition(tool_name: str, catalog: Catalog) -> JsonObject:
    tool = catalog.get(tool_name)
    assert tool is not None
    return {"name": tool.alias, "description": tool.description, "input_schema": tool.parameters}


def build_report(
    requests: Sequence[JsonObject], catalog: Catalog, discovered: Sequence[Sequence[str]], announced: Sequence[int]
) -> Report:
    """The demo's numbers.

    Args:
        requests: Every request sent, in order.
        catalog: The catalog behind the conversation.
        discovered: For each request, the original names of tools announced before it.
        announced: For each request, the bytes of announcement text in its messages.
    """
    prompts = [prompt_text(request) for request in requests]
    reuse = tuple(shared_prefix(a, b) / len(a) for a, b in itertools.pairwise(prompts))
    cached = [0] + [shared_prefix(a, b) // BYTES_PER_TOKEN for a, b in itertools.pairwise(prompts)]
    totals = [len(prompt) // BYTES_PER_TOKEN for prompt in prompts]
    code_tool = [_tokens(request.get("tools")) for request in requests]
    all_tools = sum(_tokens(_definition(tool.name, catalog)) for tool in catalog)
    up_total = up_uncached = ed_total = ed_uncached = 0
    previous_messages = 0
    previous_tools: tuple[str, ...] | None = None
    for index, total in enumerate(totals):
        messages = total - code_tool[index] - announced[index] // BYTES_PER_TOKEN
        fresh = messages - previous_messages if index else messages + all_tools
        up_total += all_tools + messages
        up_uncached += fresh
        names = tuple(discovered[index])
        tools = sum(_tokens(_definition(name, catalog)) for name in names if catalog.get(name) is not None)
        ed_total += tools + messages
        ed_uncached += tools + messages if names != previous_tools else messages - previous_messages
        previous_tools, previous_messages = names, messages
    return Report(
        requests=len(requests),
        tools_constant=len({json.dumps(request.get("tools")) for request in requests}) <= 1,
        reuse=reuse,
        codemode=Costs(total=sum(totals), uncached=sum(t - c for t, c in zip(totals, cached, strict=True))),
        up_front=Costs(total=up_total, uncached=up_uncached),
        edited=Costs(total=ed_total, uncached=ed_uncached),
    )
