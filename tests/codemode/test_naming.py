from __future__ import annotations

import keyword

import pytest
from inline_snapshot import snapshot

from codemode import Tool
from codemode._naming import close_matches, is_portable_alias, is_python_name, portable_alias

NAMES = [
    "get_weather",
    "print",
    "math.factorial",
    "github.create_issue",
    "my-tool",
    "PDF&URLTool",
    "2fa",
    "class",
    "None",
    "match",
    "type",
    "search",
    "describe",
    "_private",
    "__init__",
    "café",
    "天气",
    "a天b",
    "\uff46\uff55\uff4c\uff4c",
    "!!!",
    "",
]


def test_aliases_follow_the_documented_rules() -> None:
    """Each kind of awkward name maps to the alias the module docstring promises."""
    assert {name: portable_alias(name) for name in NAMES} == snapshot(
        {
            "get_weather": "get_weather",
            "print": "print",
            "math.factorial": "math_factorial",
            "github.create_issue": "github_create_issue",
            "my-tool": "my_tool",
            "PDF&URLTool": "PDF_URLTool",
            "2fa": "t_2fa",
            "class": "class_",
            "None": "None_",
            "match": "match_",
            "type": "type_",
            "search": "search_tool",
            "describe": "describe_tool",
            "_private": "private",
            "__init__": "init",
            "café": "cafe",
            "天气": "u5929_u6c14",
            "a天b": "a_u5929_b",
            "\uff46\uff55\uff4c\uff4c": "full",
            "!!!": "tool",
            "": "tool",
        }
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_alias_is_a_portable_identifier(name: str) -> None:
    """An alias is an ASCII identifier, not a keyword, not underscored, not reserved, and maps to itself."""
    alias = portable_alias(name)
    assert alias.isascii()
    assert alias.isidentifier()
    assert not keyword.iskeyword(alias)
    assert not alias.startswith("_")
    assert alias not in {"search", "describe"}
    assert is_portable_alias(alias)
    assert portable_alias(alias) == alias


def test_names_that_are_already_portable_are_kept_unchanged() -> None:
    """Valid identifiers keep their case and their double underscores."""
    assert portable_alias("suivi_colis__health") == "suivi_colis__health"
    assert portable_alias("AbstractJarAgent") == "AbstractJarAgent"


def test_distinct_names_can_share_an_alias() -> None:
    """The mapping is not injective: the catalog, not the naming rules, refuses the clash."""
    assert portable_alias("my-tool") == portable_alias("my.tool") == portable_alias("my_tool")


def test_close_matches_ignore_case_and_separators() -> None:
    """A name written with other separators or case still finds the tool."""
    candidates = ["github.create_issue", "github.list_issues", "math.factorial"]
    assert close_matches("GitHub-Create-Issue", candidates) == snapshot(["github.create_issue", "github.list_issues"])
    assert close_matches("factorial", candidates, cutoff=0.5) == snapshot(["math.factorial"])


def test_close_matches_return_nothing_when_nothing_is_close() -> None:
    """An unrelated name gets no suggestion rather than a misleading one."""
    assert close_matches("send_email", ["math.factorial", "get_weather"]) == []


def test_a_tool_made_without_an_alias_gets_its_names_portable_alias() -> None:
    """`Tool(name=...)` fills in `portable_alias(name)`; an alias given by hand is kept as written."""
    derived = Tool(name="math.factorial", description="n!", parameters={"type": "object"})
    chosen = Tool(name="math.factorial", alias="factorial", description="n!", parameters={"type": "object"})

    assert (derived.alias, chosen.alias) == ("math_factorial", "factorial")


@pytest.mark.parametrize(
    ("name", "plain", "type_title", "public", "assigned", "normalized"),
    [
        ("city", True, True, True, True, True),
        ("_private", True, True, False, False, True),
        ("class", False, True, False, True, False),
        ("None", False, True, False, True, False),
        ("match", True, True, True, True, True),
        ("café", True, False, True, True, True),
        ("\ufb01le", True, False, True, True, False),
        ("2fa", False, False, False, False, False),
        ("my-tool", False, False, False, False, False),
        ("", False, False, False, False, False),
    ],
)
def test_is_python_name_counts_keywords_underscores_non_ascii_and_unnormalized_names_only_where_asked(
    name: str, plain: bool, type_title: bool, public: bool, assigned: bool, normalized: bool
) -> None:
    """Each variant its callers use: a parameter, a schema title as a type name, a variable, an assigned name."""
    assert is_python_name(name) is plain
    assert is_python_name(name, ascii_only=True, keyword_ok=True) is type_title
    assert is_python_name(name, underscore_ok=False) is public
    assert is_python_name(name, keyword_ok=True, underscore_ok=False) is assigned
    assert is_python_name(name, nfkc_only=True) is normalized
