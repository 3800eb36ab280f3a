"""What the BM25F index reads of a tool: the texts of its four fields, and the term counts of each.

The fields are the tool's name, its description, its parameter names, and its parameter descriptions with their
string enum values, nested schemas included down to a few levels. Term counts are memoised by text, so the
texts many tools share (`owner: Repository owner` in every GitHub tool) are counted once. Apart from `_bm25`
because the index cache (`_index_cache`) stores these texts and counts and must change its key when they do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from codemode.search._tokenize import iter_terms

if TYPE_CHECKING:
    from collections.abc import Iterable

    from codemode.tools import Tool
    from sandbox import JsonValue

__all__ = ["field_terms", "field_texts"]

try:
    from collections import _count_elements  # type: ignore[attr-defined]  # CPython's C helper behind Counter
except ImportError:  # pragma: no cover  # other Pythons: the same loop in Python

    def _count_elements(mapping: dict[str, int], iterable: Iterable[str]) -> None:
        for element in iterable:
            mapping[element] = mapping.get(element, 0) + 1


_MAX_SCHEMA_DEPTH: Final = 4
_CHILD_KEYS: Final = frozenset({"items", "additionalProperties", "anyOf", "oneOf", "allOf"})
_NESTED_KEYS: Final = _CHILD_KEYS | {"properties"}


def _counts(text: str) -> dict[str, int]:
    """Term counts of a text; shared texts (`owner: Repository owner` in every GitHub tool) are counted once."""
    counts = _COUNTS.get(text)
    if counts is None:
        if len(_COUNTS) > _MAX_COUNTS:
            _COUNTS.clear()
        counts = _COUNTS[text] = {}
        _count_elements(counts, iter_terms(text))  # Counter's own C loop, without Counter()'s per-call cost
    return counts


_COUNTS: dict[str, dict[str, int]] = {}
_MAX_COUNTS: Final = 50_000


def field_texts(tool: Tool) -> tuple[str, str, str, str]:
    """The texts of the four fields: the name, the description, the parameter names, the parameter descriptions.

    The alias is left out: it respells the name (`math.factorial` -> `math_factorial`) and matches exactly.
    """
    names: list[str] = []
    texts: list[str] = []
    _walk_schema(tool.parameters, names, texts, 0)
    return (tool.name, tool.description, " ".join(names), " ".join(texts))


def field_terms(texts: tuple[str, ...]) -> tuple[dict[str, int], ...]:
    """Term counts of each field's text (shared, never to be changed: equal texts get the same dict)."""
    return tuple(_counts(text) for text in texts)


def _walk_schema(schema: JsonValue, names: list[str], texts: list[str], depth: int) -> None:
    """Collect property names, descriptions and string enum values of a JSON Schema, nested ones included."""
    if not isinstance(schema, dict) or depth > _MAX_SCHEMA_DEPTH:
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        names.extend(properties)
        for sub in properties.values():
            if not isinstance(sub, dict):
                continue
            description = sub.get("description")
            if isinstance(description, str):
                texts.append(description)
            enum = sub.get("enum")
            if isinstance(enum, list):
                texts.extend(value for value in enum if isinstance(value, str))
            if not _NESTED_KEYS.isdisjoint(sub):
                _walk_schema(sub, names, texts, depth + 1)
    if not _CHILD_KEYS.isdisjoint(schema):
        for key in ("items", "additionalProperties"):
            _walk_schema(schema.get(key), names, texts, depth + 1)
        for key in ("anyOf", "oneOf", "allOf"):
            variants = schema.get(key)
            if isinstance(variants, list):
                for variant in variants:
                    _walk_schema(variant, names, texts, depth + 1)
