from __future__ import annotations

from codemode.search._tokenize import stem, tokenize


def test_names_split_at_punctuation_camel_case_and_digits() -> None:
    """Identifiers break at `_ . - /`, camelCase humps, acronyms and digit runs."""
    assert tokenize("math.factorial") == ["math", "factorial"]
    assert tokenize("my-tool/list_items") == ["tool", "list", "item"]
    assert tokenize("getHTTPResponse2") == ["get", "http", "respons", "2"]


def test_stop_words_and_single_letters_are_dropped() -> None:
    """Function words and stray letters do not become terms."""
    assert tokenize("What is the weather in a city?") == ["weather", "citi"]


def test_inflections_share_a_stem() -> None:
    """Plurals and -ed/-ing forms of a word meet at one term."""
    assert {stem(word) for word in ("create", "creates", "created", "creating")} == {"creat"}
    assert stem("queries") == stem("query")
    assert stem("files") == stem("filing") == stem("file")
    assert stem("running") == "run"


def test_short_and_non_ascii_words_are_kept_as_they_are() -> None:
    """Stemming leaves two-letter and non-ASCII words alone; non-ASCII words stay whole."""
    assert stem("id") == "id"
    assert tokenize("Château état") == ["château", "état"]


def test_tokenize_is_deterministic_and_keeps_repeats() -> None:
    """The same text gives the same terms, repeats included, on every call."""
    text = "Returns user profiles; profiles of users"
    assert tokenize(text) == tokenize(text) == ["return", "user", "profil", "profil", "user"]


def test_the_process_wide_caches_keep_no_long_chunk_or_word() -> None:
    """A query's 1,000-letter chunk or word is tokenized but not cached: the caches serve every run of the process."""
    from codemode.search import _tokenize

    chunk = "zq" * 500 + "unique"
    with_long_word = "profiles," + "y" * 990 + "e"
    words_cached = _tokenize._normalize_cached.cache_info().currsize

    assert tokenize(chunk) == [chunk]
    assert tokenize(with_long_word) == ["profil", "y" * 990 + "e"]
    assert chunk not in _tokenize._CACHE
    assert with_long_word not in _tokenize._CACHE
    assert _tokenize._normalize_cached.cache_info().currsize <= words_cached + 1  # `profiles`, not the long words
