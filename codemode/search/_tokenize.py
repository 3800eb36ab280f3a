"""Text to search terms: split identifiers and prose, drop stop words, stem inflections.

One tokenizer serves both sides of the search index, so a tool's `get_user_profiles` and a query's
"user profile" meet at the same terms (`user`, `profil`). Names are split at `_ . - /` and other punctuation,
at camelCase humps and at digit runs (`getHTTPResponse2` -> `get http respons 2`). Words are lowercased,
a small English stop list is dropped and the remaining words go through the first and last steps of the
Porter stemmer (plurals, `-ed`, `-ing`, `-y`, a final `-e`): enough to match inflections without the
conflations of a full stemmer. Everything here is pure and deterministic; results are cached per raw word,
which keeps indexing 10,000 tools well under the time budget. The caches are process-wide and fed by queries the
model writes too, so only chunks and words of at most `_MAX_CACHED` characters are kept (what recurs in names and
prose), at most `_MAX_CACHE` of each: a long run of letters is tokenized each time it is seen, and never stemmed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["STOP_WORDS", "iter_terms", "stem", "tokenize"]

STOP_WORDS: Final[frozenset[str]] = frozenset(
    """
    a about above after again all also am an and any are as at be been before being below between both but by
    can could did do does doing during each few for from further had has have having he her here hers herself
    him himself his how i if in into is it its itself just me more most my myself no nor not of off on once only
    or other our ours ourselves out over own please same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up us very was we were what when
    where which while who whom why will with would you your yours yourself yourselves
    """.split()
)
"""Function words that carry no meaning for tool search (a short English list)."""

# One pass over the raw text: a non-ASCII word stays whole; ASCII words split at camelCase humps, acronyms
# (`HTTPServer` -> `HTTP`, `Server`) and digit runs. Everything else (`_ . - /`, spaces) separates.
_WORD: Final = re.compile(r"[^\W\d_]*[^\W\d_a-zA-Z][^\W\d_]*|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_VOWELS: Final = frozenset("aeiou")
_MAX_CACHE: Final = 200_000
_MAX_CACHED: Final = 64
"""The longest chunk or word whose terms are cached, and the longest word stemmed (no English word is longer)."""


def tokenize(text: str) -> list[str]:
    """The search terms of `text`, in order, repeats kept (term frequency matters to BM25).

    Example:
        >>> tokenize("getUserProfiles: Returns the profiles of users")
        ['get', 'user', 'profil', 'return', 'profil', 'user']
    """
    return list(iter_terms(text))


def iter_terms(text: str) -> Iterator[str]:
    """The terms of `tokenize(text)`, lazily (what the index counts without building a list)."""
    cache = _CACHE
    if len(cache) > _MAX_CACHE:
        cache.clear()
    # Splitting at whitespace in C and caching each raw chunk's terms is several times faster than a regex
    # over the whole text: most chunks (`profiles,`) have been seen before.
    return chain.from_iterable(map(cache.__getitem__, text.split()))


class _TermCache(dict[str, tuple[str, ...]]):
    """Raw whitespace-separated chunk -> its terms, filled on first sight."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        terms = tuple(term for term in map(_normalize, _WORD.findall(chunk)) if term)
        if len(chunk) <= _MAX_CACHED:
            self[chunk] = terms
        return terms


_CACHE: Final = _TermCache()


def _normalize(word: str) -> str:
    return _normalize_cached(word) if len(word) <= _MAX_CACHED else _normalized(word)


@lru_cache(maxsize=_MAX_CACHE)
def _normalize_cached(word: str) -> str:
    return _normalized(word)


def _normalized(word: str) -> str:
    lowered = word.lower()
    if lowered in STOP_WORDS or (len(lowered) == 1 and not lowered.isdigit()):
        return ""
    return stem(lowered)


def stem(word: str) -> str:
    """Porter steps 1a, 1b, 1c and 5a on one lowercase word: `queries` -> `queri`, `creating` -> `creat`.

    Words of one or two letters, of more than `_MAX_CACHED`, and words with non-ASCII letters are returned unchanged.
    """
    if not 2 < len(word) <= _MAX_CACHED or not word.isascii() or not word.isalpha():
        return word
    word = _step_1a(word)
    word = _step_1b(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return _step_5a(word)


def _step_1a(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step_1b(word: str) -> str:
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            return _after_1b(word[: -len(suffix)])
    return word


def _after_1b(base: str) -> str:
    if base.endswith(("at", "bl", "iz")):
        return base + "e"
    if len(base) >= 2 and base[-1] == base[-2] and _is_consonant(base, len(base) - 1) and base[-1] not in "lsz":
        return base[:-1]
    if _measure(base) == 1 and _ends_cvc(base):
        return base + "e"
    return base


def _step_5a(word: str) -> str:
    if word.endswith("e"):
        base = word[:-1]
        measure = _measure(base)
        if measure > 1 or (measure == 1 and not _ends_cvc(base)):
            return base
    return word


def _is_consonant(word: str, index: int) -> bool:
    letter = word[index]
    if letter in _VOWELS:
        return False
    if letter == "y":
        return index == 0 or not _is_consonant(word, index - 1)
    return True


def _has_vowel(word: str) -> bool:
    return any(not _is_consonant(word, index) for index in range(len(word)))


def _measure(word: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `word`."""
    pattern = "".join("c" if _is_consonant(word, index) else "v" for index in range(len(word)))
    return len(re.findall("v+c+", pattern))


def _ends_cvc(word: str) -> bool:
    if len(word) < 3 or word[-1] in "wxy":
        return False
    end = len(word)
    return _is_consonant(word, end - 3) and not _is_consonant(word, end - 2) and _is_consonant(word, end - 1)
