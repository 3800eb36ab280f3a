"""Code wrapped in a markdown fence runs as the code inside it; errors count the lines the model sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Sandbox

FENCED = "```python\nx = 2\nprint(x * 3)\nx + 1\n```"


@dataclass(frozen=True)
class Fenced:
    """A source as a model sends it, and what the run gives."""

    name: str
    source: str
    stdout: str
    value: object


CASES = [
    Fenced("python_tag", FENCED, "6\n", 3),
    Fenced("py_tag_and_surrounding_blank_lines", "\n\n  ```py\nreturn 5\n```\n\n", "", 5),
    Fenced("bare_fence", "```\nreturn 'bare'\n```", "", "bare"),
    Fenced("tag_after_a_space_and_upper_case", "``` Python\nreturn 1\n```", "", 1),
    Fenced("tildes", "~~~python\nreturn 2\n~~~", "", 2),
    Fenced("longer_fence_closed_by_as_long", "````python\nreturn 3\n`````", "", 3),
    Fenced(
        "prose_before_and_after_is_dropped",
        "Here is the script:\n\n```python\nprint('hi')\n```\n\nIt prints a greeting.",
        "hi\n",
        None,
    ),
    Fenced("unclosed_fence_runs_to_the_end", "```python\nprint('cut')\nreturn 4\n", "cut\n", 4),
    Fenced(
        "python_block_chosen_over_an_output_block",
        "```python\nprint(1 + 1)\n```\nOutput:\n```text\n2\n```",
        "2\n",
        None,
    ),
    Fenced("indented_fence_in_a_list", "1. Run this:\n   ```python\n   return 'listed'\n   ```", "", "listed"),
    Fenced(
        "valid_python_with_a_fence_inside_a_string_is_untouched",
        's = """\n```python\nprint(1)\n```\n"""\nreturn s.count("`")',
        "",
        6,
    ),
]


@pytest.mark.parametrize("isolation", ["inline"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_fenced_code_runs_as_the_code_inside(sb: Sandbox, case: Fenced) -> None:
    """The fence (and any prose outside it) is stripped; the code inside runs as if sent alone."""
    result = await sb.run(case.source)
    assert result.error is None, result.error
    assert (result.stdout, result.value) == (case.stdout, case.value)


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_fenced_code_runs_in_both_isolations(sb: Sandbox) -> None:
    """A worker process strips the fence too."""
    result = await sb.run(FENCED)
    assert (result.error, result.stdout, result.value) == (None, "6\n", 3)


@pytest.mark.parametrize("isolation", ["inline"])
async def test_errors_in_fenced_code_name_the_line_the_model_sent(sb: Sandbox) -> None:
    """Prose and fence lines are blanked, not removed, so line numbers still count the model's lines."""
    source = "Let me check:\n```python\nx = 1\ny = x / 0\n```"
    result = await sb.run(source)
    assert result.error is not None
    assert (result.error.kind, result.error.type_name, result.error.line) == ("runtime", "ZeroDivisionError", 4)
    assert "y = x / 0" in result.error.traceback
    broken = await sb.run("```python\nx = (\n```")
    assert broken.error is not None
    assert (broken.error.kind, broken.error.line) == ("syntax", 2)


@pytest.mark.parametrize("isolation", ["inline"])
async def test_several_python_blocks_are_a_syntax_error_that_says_to_send_one(sb: Sandbox) -> None:
    """Two Python blocks are not joined: which one is meant is a guess, so the error asks for one."""
    result = await sb.run("First:\n```python\nx = 1\n```\nThen:\n```python\nreturn x\n```")
    assert result.error is not None
    assert result.error.kind == "syntax"
    assert (
        result.error.message
        == "SyntaxError: invalid syntax (line 1): `First:`; the code holds 2 fenced blocks: send one"
    )


@pytest.mark.parametrize("isolation", ["inline"])
async def test_a_lone_block_with_another_tag_runs_as_python_and_fails_as_python(sb: Sandbox) -> None:
    """The code tool runs Python whatever the tag says: a lone block runs, and shell text is a syntax error."""
    result = await sb.run('```json\n{"a": 1}\n```')
    assert result.error is None
    assert result.value == {"a": 1}  # a JSON object literal is a Python dict display too
    shell = await sb.run("```bash\necho $HOME\n```")
    assert shell.error is not None
    assert (shell.error.kind, shell.error.line) == ("syntax", 2)
