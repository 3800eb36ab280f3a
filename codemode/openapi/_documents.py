"""OpenAPI documents: read from a file or URL (JSON or YAML), and `$ref`s resolved across them.

A description may spread over several files (`$ref: "schemas.yaml#/Pet"`), each read once. Non-schema objects
(parameters, request bodies, responses, path items) are dereferenced in place (`Documents.deref`); schemas keep
their references, bundled into each tool's own definitions by `codemode.openapi._bundle`.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote, urljoin, urlsplit

import httpx2

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from sandbox import JsonObject, JsonValue

_MAX_HOPS: Final = 32
"""References followed from one object before it is taken for a cycle."""


class DocumentError(Exception):
    """A document cannot be read, or a reference leads nowhere; the message says which."""


def is_url(location: str) -> bool:
    """Whether `location` is an http(s) URL rather than a file path."""
    return urlsplit(location).scheme in ("http", "https")


def read_location(location: str, *, headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> str:
    """The text of a file or of an http(s) URL."""
    if is_url(location):
        try:
            response = httpx2.get(location, headers=dict(headers or {}), timeout=timeout, follow_redirects=True)
            response.raise_for_status()
        except httpx2.HTTPError as e:
            raise DocumentError(f"cannot fetch {location!r}: {e}") from e
        return response.text
    try:
        return Path(location).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DocumentError(f"cannot read {location!r}: {e}") from e


def parse_document(text: str, location: str) -> JsonObject:
    """A JSON or YAML document as plain JSON data (YAML needs PyYAML: `pip install "codemode[openapi]"`)."""
    try:
        data: object = json.loads(text)
    except json.JSONDecodeError as json_error:
        if text.lstrip().startswith(("{", "[")):
            raise DocumentError(f"{location}: not valid JSON: {json_error}") from json_error
        data = _parse_yaml(text, location)
    if not isinstance(data, dict):
        raise DocumentError(f"{location}: expected an object at the top, got {type(data).__name__}")
    plain = _plain(data)
    assert isinstance(plain, dict)
    return plain


def _parse_yaml(text: str, location: str) -> object:
    try:
        import yaml  # type: ignore[import-untyped]  # the optional `openapi` extra; no stubs in dev deps
    except ImportError as e:
        raise DocumentError(
            f'{location} is YAML: install the `openapi` extra to read it: pip install "codemode[openapi]"'
        ) from e
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise DocumentError(f"{location}: neither JSON nor valid YAML: {e}") from e


def _plain(value: object) -> JsonValue:
    """YAML's extra types as JSON: keys as strings (`200:` is an int in YAML), dates as ISO 8601."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


class Documents:
    """The documents of one description, by absolute location, each read once.

    Args:
        root: The root document, already parsed.
        location: Where it came from (absolute path or URL); relative references resolve against it.
        read: Reads another document's text by location.
    """

    def __init__(self, root: JsonObject, location: str, *, read: Callable[[str], str] = read_location) -> None:
        self.root = root
        self.location = location
        self._read = read
        self._cache: dict[str, JsonObject] = {location: root}

    def document(self, location: str) -> JsonObject:
        """The document at an absolute location."""
        if location not in self._cache:
            self._cache[location] = parse_document(self._read(location), location)
        return self._cache[location]

    def target(self, ref: str, base: str) -> tuple[str, str]:
        """The absolute location and the JSON pointer (without `#`) that `ref`, found in `base`, names."""
        where, _, pointer = ref.partition("#")
        if not where:
            return base, unquote(pointer)
        if is_url(base) or is_url(where):
            return urljoin(base, where), unquote(pointer)
        return str((Path(base).parent / unquote(where)).resolve()), unquote(pointer)

    def lookup(self, location: str, pointer: str) -> JsonValue:
        """The value at `pointer` in the document at `location`."""
        node: JsonValue = self.document(location)
        for part in pointer.split("/")[1:] if pointer else []:
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise DocumentError(f"the reference {location_name(location)}#{pointer} leads nowhere")
        return node

    def deref(self, node: JsonValue, base: str) -> tuple[JsonObject, str]:
        """A non-schema object with its `$ref` chain followed, and the location it was found in.

        Siblings of `$ref` (a `description` beside it, as OpenAPI 3.1 allows) win over the target's keys.
        """
        extra: JsonObject = {}
        for _ in range(_MAX_HOPS):
            if not isinstance(node, dict):
                raise DocumentError(f"expected an object, got {json.dumps(node)[:80]}")
            ref = node.get("$ref")
            if not isinstance(ref, str):
                return {**node, **extra}, base
            extra = {**{key: value for key, value in node.items() if key != "$ref"}, **extra}
            base, pointer = self.target(ref, base)
            node = self.lookup(base, pointer)
        raise DocumentError(f"the references from {base!r} go round in a cycle")


def location_name(location: str) -> str:
    """A short name for a location in messages: the file name, or the URL."""
    return location if is_url(location) else Path(location).name
