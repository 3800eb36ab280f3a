"""Text embeddings for the hybrid search: the `semantic` extra's one home, and the disk cache of tool vectors.

The default model is WordLlama's `l2_supercat` static embeddings (MIT), whose 256-dimension weights and
tokenizer ship inside the `wordllama` wheel: a text's vector is the mean of its tokens' rows, so embedding a
query costs microseconds on a CPU and nothing is downloaded at run time. Only numpy, `safetensors` and
`tokenizers` run here; the files are read from the installed package without importing it (its own loader
looks for the tokenizer in the wrong folder and would try the network).

`EmbeddingCache` keeps the vectors of tool definitions on disk, keyed by the model and a hash of the embedded
text, so a 10,000-tool catalog embeds once and loads in milliseconds on the next start.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

try:
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError('Install the `semantic` extra: pip install "codemode[semantic]"') from error

from codemode._cachedir import default_cache_dir as default_cache_dir  # noqa: PLC0414  # re-exported for `hybrid`

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

__all__ = ["Embedder", "EmbeddingCache", "Nearest", "StaticEmbedder", "VectorIndex", "default_cache_dir"]

_MAX_TOKENS: Final = 512
_DIGEST: Final = 16
_BATCH: Final = 512
_REFRESH_DAYS: Final = 7
"""A cached vector's last-used day is rewritten once it is this many days old."""


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    @property
    def model_id(self) -> str:
        """Names the model and its settings; vectors cached under one id are never mixed with another's."""
        ...

    def __call__(self, texts: Sequence[str], /) -> NDArray[np.float32]:
        """An array of shape `(len(texts), dimensions)` whose rows have unit length (or are zero)."""
        ...


class StaticEmbedder:
    """Mean-pooled static token embeddings (WordLlama `l2_supercat`, 256 dimensions, MIT licence).

    Example:
        ```python
        embed = StaticEmbedder()
        vectors = embed(["send an email", "create a calendar event"])  # shape (2, 256)
        ```
    """

    def __init__(self, *, weights: Path | None = None, tokenizer: Path | None = None) -> None:
        if weights is None or tokenizer is None:
            root = _package_dir("wordllama")
            weights = weights or root / "weights" / "l2_supercat_256.safetensors"
            tokenizer = tokenizer or root / "tokenizers" / "l2_supercat_tokenizer_config.json"
        self._table = load_file(str(weights))["embedding.weight"].astype(np.float32)
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self._id = f"wordllama-l2_supercat-{self._table.shape[1]}"

    @property
    def model_id(self) -> str:
        """The model name and dimensions."""
        return self._id

    def __call__(self, texts: Sequence[str], /) -> NDArray[np.float32]:
        """Mean of each text's token rows, normalised to unit length (zero for a text with no tokens)."""
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            if encoding.ids:
                out[row] = self._table[encoding.ids].mean(axis=0)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


def _package_dir(name: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f'The `semantic` extra is incomplete ({name!r} is missing): pip install "codemode[semantic]"')
    return Path(next(iter(spec.submodule_search_locations)))


class EmbeddingCache:
    """Vectors of texts embedded by one model, in memory and (unless `folder` is None) in one file on disk.

    The file holds 16-byte BLAKE2 digests of the texts, their vectors and the day each was last used; it is
    read on first use and rewritten atomically by `save`, so readers never see a half-written file. Vectors
    unused for `max_age_days`, and the least recently used beyond `max_entries`, are dropped when it is written.

    Args:
        model_id: The embedder's `model_id`; it names the file.
        folder: Where the file lives; None keeps vectors in memory only.
        max_entries: The most vectors the file keeps.
        max_age_days: Vectors not used for this many days are dropped.
        clock: Seconds since the epoch (tests pass a fake one).
    """

    def __init__(
        self,
        model_id: str,
        folder: Path | None,
        *,
        max_entries: int = 200_000,
        max_age_days: int = 90,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = None if folder is None else folder / f"embeddings-{_safe(model_id)}.npz"
        self.max_entries = max_entries
        self.max_age_days = max_age_days
        self._today = int(clock() // 86_400)
        self._rows: dict[bytes, NDArray[np.float32]] = {}
        self._used: dict[bytes, int] = {}
        self._dirty = False
        if self.path is not None:
            self._load(self.path)

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, text: str) -> NDArray[np.float32] | None:
        """The cached vector of `text`, or None."""
        key = digest(text)
        vector = self._rows.get(key)
        if vector is not None:
            if self._used[key] < self._today - _REFRESH_DAYS:
                self._dirty = True  # write the new date within days, not on every start
            self._used[key] = self._today
        return vector

    def put(self, text: str, vector: NDArray[np.float32]) -> None:
        """Remember `vector` for `text` (written by the next `save`)."""
        key = digest(text)
        self._rows[key] = vector
        self._used[key] = self._today
        self._dirty = True

    def save(self) -> None:
        """Write the cache file if it changed; a cache folder that cannot be written is skipped."""
        if self.path is None or not self._dirty:
            return
        self._prune()
        if not self._rows:
            return
        keys = np.frombuffer(b"".join(self._rows), dtype=np.uint8).reshape(-1, _DIGEST)
        vectors = np.stack(list(self._rows.values())).astype(np.float32)
        used = np.fromiter(self._used.values(), dtype=np.int32, count=len(self._used))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as file:
                np.savez(file, keys=keys, vectors=vectors, used=used)
            Path(temporary).replace(self.path)
        except OSError:
            return  # a read-only or full disk costs the next start its speed, not its correctness
        self._dirty = False

    def _prune(self) -> None:
        oldest = self._today - self.max_age_days
        keep = [key for key, day in self._used.items() if day >= oldest]
        if len(keep) > self.max_entries:
            keep.sort(key=self._used.__getitem__, reverse=True)
            del keep[self.max_entries :]
        if len(keep) < len(self._rows):
            self._rows = {key: self._rows[key] for key in keep}
            self._used = {key: self._used[key] for key in keep}

    def _load(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, vectors, used = data["keys"], data["vectors"], data["used"]
        except (OSError, ValueError, KeyError):
            return  # missing or damaged: start empty and rewrite it
        if keys.ndim != 2 or keys.shape[1] != _DIGEST or not len(keys) == len(vectors) == len(used):
            return
        digests = [key.tobytes() for key in keys]
        self._rows.update(zip(digests, vectors.astype(np.float32), strict=True))
        self._used.update(zip(digests, (int(day) for day in used), strict=True))


def digest(text: str) -> bytes:
    """The cache key of a text."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=_DIGEST).digest()


def _safe(model_id: str) -> str:
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in model_id)


class VectorIndex:
    """Unit vectors of keyed texts, embedded lazily in batches (through the cache) and searched by cosine.

    `put` only queues a text; the next `nearest` (or `flush`) embeds everything queued at once, so a catalog
    of 10,000 tools costs one batched pass, and a definition seen before costs a cache lookup.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.embedder = embedder
        self.cache = cache
        self._rows: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._free: list[int] = []
        self._matrix: NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self._valid: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._pending: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._rows) + len(self._pending)

    def put(self, key: str, text: str) -> None:
        """Queue `text` as the content of `key` (replacing what it had)."""
        self.remove(key)
        self._pending[key] = text

    def remove(self, key: str) -> None:
        """Forget `key`; unknown keys are ignored."""
        self._pending.pop(key, None)
        row = self._rows.pop(key, None)
        if row is not None:
            self._keys[row] = None
            self._valid[row] = False
            self._free.append(row)

    def flush(self) -> int:
        """Embed every queued text not in the cache, store all queued vectors; returns how many were embedded."""
        if not self._pending:
            return 0
        pending, self._pending = self._pending, {}
        vectors = {key: self.cache.get(text) for key, text in pending.items()}
        missing = [key for key, vector in vectors.items() if vector is None]
        for start in range(0, len(missing), _BATCH):
            chunk = missing[start : start + _BATCH]
            for key, vector in zip(chunk, self.embedder([pending[key] for key in chunk]), strict=True):
                vectors[key] = vector
                self.cache.put(pending[key], vector)
        for key, vector in vectors.items():
            assert vector is not None
            self._store(key, vector)
        self.cache.save()
        return len(missing)

    def _store(self, key: str, vector: NDArray[np.float32]) -> None:
        if self._matrix.shape[1] != vector.shape[0]:
            self._matrix = np.zeros((0, vector.shape[0]), dtype=np.float32)  # first vector fixes the width
        if self._free:
            row = self._free.pop()
        else:
            row = len(self._keys)
            self._keys.append(None)
            if row >= len(self._matrix):  # grow by doubling, so adding n tools one by one costs O(n) copies
                size = max(64, 2 * len(self._matrix))
                self._matrix = np.resize(self._matrix, (size, self._matrix.shape[1]))
                self._valid = np.resize(self._valid, size)
                self._valid[row:] = False
        self._matrix[row] = vector
        self._valid[row] = True
        self._keys[row] = key
        self._rows[key] = row

    def nearest(self, query: str, depth: int, allowed: Callable[[str], bool] | None = None) -> Nearest:
        """The `depth` keys most similar to `query` (only allowed ones when a filter is given)."""
        self.flush()
        count = len(self._keys)
        if not self._rows:
            return Nearest({}, [], 0.0, 1.0)
        vector = self.embedder([query])[0]
        # einsum's own loop, not BLAS: a threaded gemv stalls for milliseconds on a busy 2-core machine.
        similarity = np.einsum("ij,j->i", self._matrix[:count], vector)
        similarity[~self._valid[:count]] = -np.inf
        live = similarity[self._valid[:count]]
        # A score of 0 at the catalog's median similarity and 1 at the best: cosines of unrelated texts sit
        # well above 0 for static embeddings, and their spread differs from query to query.
        median = float(np.partition(live, len(live) // 2)[len(live) // 2])
        top = self._top(similarity, depth, allowed)
        best = float(similarity[top[0]]) if top else median
        ranked = [(self._key(row), float(similarity[row])) for row in top]
        return Nearest(self._rows, ranked, median, best, similarity)

    def _top(self, similarity: NDArray[np.float32], depth: int, allowed: Callable[[str], bool] | None) -> list[int]:
        want = depth if allowed is None else depth * 4
        while True:
            want = min(want, len(self._rows))
            rows = np.argpartition(-similarity, want - 1)[:want] if want < len(similarity) else np.arange(want)
            rows = rows[np.argsort(-similarity[rows], kind="stable")]
            chosen = [int(row) for row in rows if self._valid[row]]
            if allowed is not None:
                chosen = [row for row in chosen if allowed(self._key(row))]
            if len(chosen) >= depth or want >= len(self._rows):
                return chosen[:depth]
            want *= 4

    def _key(self, row: int) -> str:
        key = self._keys[row]
        assert key is not None
        return key


class Nearest:
    """One query's similarities: its top keys and a normalised score for any key."""

    def __init__(
        self,
        rows: dict[str, int],
        top: list[tuple[str, float]],
        median: float,
        best: float,
        similarity: NDArray[np.float32] | None = None,
    ) -> None:
        self.top = top
        """The nearest keys with their cosine similarity, best first."""
        self._rows = rows
        self._median = median
        self._scale = max(best - median, 1e-6)
        self._similarity = similarity

    def score(self, key: str) -> float:
        """The key's similarity mapped to 0 (the catalog median or below) .. 1 (the best)."""
        row = self._rows.get(key)
        if row is None or self._similarity is None:
            return 0.0
        return max(0.0, (float(self._similarity[row]) - self._median) / self._scale)
