"""The default BM25F index of a large catalog, kept on disk so the next start with the same tools skips tokenizing.

Tokenizing is most of the cost of indexing (about two thirds at 10,000 tools), and its result depends only on
each tool's four field texts (`field_texts`) and on the tokenizer's code. The file is named by a hash of both
(for a catalog read from JSONL files only, of its `fingerprint`: the files themselves), so a catalog, a tool or
a tokenizer that changed simply finds no file. It holds the index's postings (term ->
tools and counts, per field, as text) and each tool's field lengths, as JSON (never pickle): a header line
(format, key, count, a BLAKE2 digest of the payload) and the payload line; read back, they are what `add` builds.
A file that is unreadable, truncated, for other tools, not owned by the user or writable by others is ignored
and rebuilt, never an error; a folder that cannot be written costs the next start its speed only. The newest
few files are kept, so several catalogs can each have theirs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

from codemode.catalog import Catalog, _definitions, _jsonl
from codemode.catalog._bulk import collector_paused
from codemode.search import _bm25, _fields, _tokenize
from codemode.search._bm25 import BM25Params, SearchIndex
from codemode.search._fields import field_terms, field_texts

if TYPE_CHECKING:
    from collections.abc import Iterable

    from codemode.tools import Tool

__all__ = ["cached_index"]

FORMAT: Final = 1
"""Bumped when the file's layout changes."""
MIN_TOOLS: Final = 1_000
"""Smaller catalogs index in tens of milliseconds: a file would cost more than it saves."""
KEEP_FILES: Final = 8
"""How many index files (the most recently used) a cache folder keeps."""

FlatPostings = tuple[dict[str, str], ...]
_FIELDS: Final = 4
"""Name, description, parameter names, parameter descriptions."""


def cached_index(
    tools: Iterable[Tool], *, folder: Path | None, params: BM25Params | None = None, min_tools: int = MIN_TOOLS
) -> SearchIndex:
    """A `SearchIndex` of `tools`, read from `folder` when the same tools were indexed there before.

    Args:
        tools: The tools, in registration order.
        folder: The cache folder; None builds the index without reading or writing a file.
        params: The BM25F parameters (they weigh terms at search time; the file holds only postings).
        min_tools: Catalogs smaller than this are indexed without a file.
    """
    fingerprint = tools.fingerprint if isinstance(tools, Catalog) else None
    tools = list(tools)
    if folder is None or len(tools) < min_tools or len({tool.name for tool in tools}) < len(tools):
        return SearchIndex(tools, params=params)  # repeated names replace each other: the plain path's job
    with collector_paused():
        # A catalog read from JSONL files names its definitions by a hash of the files: no schema is walked.
        texts = None if fingerprint else [field_texts(tool) for tool in tools]
        key = _key(fingerprint, texts)
        path = folder / f"bm25-{key}.json"
        saved = _read(path, key, len(tools))
        if saved is not None:
            return SearchIndex._restored(tools, *saved, params)  # the postings `add` would have made
        index = SearchIndex(params=params)
        for tool, row in zip(tools, texts or [field_texts(tool) for tool in tools], strict=True):
            index._add_terms(tool, field_terms(row))  # as `add`, each schema walked once
        _write(path, key, index)
    return index


def _key(fingerprint: str | None, texts: list[tuple[str, str, str, str]] | None) -> str:
    """A hash of the code that turns definitions into terms, and of the catalog's fingerprint or every field text."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(_code_version())
    if fingerprint:
        digest.update(b"fingerprint:" + fingerprint.encode())
    else:
        digest.update(b"texts:" + json.dumps(texts).encode())  # ASCII escapes keep every string exact
    return digest.hexdigest()


def _code_version() -> bytes:
    """The format and the source of the modules that make terms of a definition: a change to one is a new key."""
    parts = [str(FORMAT).encode()]
    for module in (_tokenize, _fields, _bm25, _jsonl, _definitions):  # the last two: how a JSONL line becomes a tool
        try:
            parts.append(Path(module.__file__ or "").read_bytes())
        except OSError:  # no source beside the module (a frozen app): the format alone
            parts.append(module.__name__.encode())
    return hashlib.blake2b(b"\0".join(parts), digest_size=16).digest()


def _read(path: Path, key: str, count: int) -> tuple[FlatPostings, list[tuple[int, ...]]] | None:
    """The postings and field lengths saved under `key` for `count` tools, or None when not to be trusted."""
    try:
        with path.open("rb") as file:
            status = os.fstat(file.fileno())
            if status.st_uid != _user() or status.st_mode & 0o022:
                return None  # someone else could have written it
            header, payload = file.read().split(b"\n", 1)
        meta = json.loads(header)
        if meta != {"format": FORMAT, "key": key, "count": count, "digest": _digest(payload)}:
            return None
        flat, flat_lengths = json.loads(payload)
        numbers = list(map(int, flat_lengths.split()))
        if len(flat) != _FIELDS or not all(isinstance(field, dict) for field in flat):
            return None
    except (OSError, ValueError, TypeError, AttributeError):  # unreadable, not JSON, or not the shape written
        return None
    if len(numbers) != count * _FIELDS:
        return None
    lengths = list(zip(*[iter(numbers)] * _FIELDS, strict=True))
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: kept when the folder is pruned
    return tuple(flat), lengths  # the digest vouches that each posting is the `"doc count ..."` `_write` wrote


def _write(path: Path, key: str, index: SearchIndex) -> None:
    """Save the index's postings and lengths atomically (readers see the old file or the new one), then prune."""
    # Text, not JSON numbers: a posting is parsed only when a search needs its term, and strings load fast.
    postings = [
        {term: " ".join(f"{doc_id} {count}" for doc_id, count in posting.items()) for term, posting in field.items()}
        for field in index._postings
    ]
    lengths = " ".join(str(length) for doc_id in sorted(index._lengths) for length in index._lengths[doc_id])
    payload = json.dumps([postings, lengths], separators=(",", ":")).encode()
    header = json.dumps({"format": FORMAT, "key": key, "count": len(index), "digest": _digest(payload)}).encode()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".bm25-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(header + b"\n" + payload)
        Path(temporary).replace(path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        return
    _prune(path.parent)


def _prune(folder: Path) -> None:
    with contextlib.suppress(OSError):
        files = sorted(folder.glob("bm25-*.json"), key=lambda file: file.stat().st_mtime, reverse=True)
        for old in files[KEEP_FILES:]:
            old.unlink(missing_ok=True)


def _user() -> int:
    """The effective user id (-1 where there is none, which no file matches)."""
    geteuid = getattr(os, "geteuid", None)
    return int(geteuid()) if geteuid is not None else -1


def _digest(payload: bytes) -> str:
    return hashlib.blake2b(payload, digest_size=16).hexdigest()
