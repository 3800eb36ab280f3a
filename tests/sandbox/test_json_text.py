"""`JsonText`: a host result the host encoded once, handed to the code with no second check, in both isolations."""

from __future__ import annotations

import pytest
from redteam_kit import Value, assert_outcome, assert_still_works, raised, run

from sandbox import JsonText, Sandbox

ISOLATIONS = pytest.mark.parametrize("isolation", ["inline", "process"])
MiB = 1024 * 1024


class Label(str):
    """A str subclass, as host libraries return them: the check refuses it, the encoder writes its text."""


@ISOLATIONS
async def test_a_json_text_is_not_checked_again_and_plain_data_is(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """The encoded result arrives as exact JSON types; the same data returned bare is checked and refused by place."""
    functions = {"marked": lambda: JsonText([Label("x"), ("t",)]), "bare": lambda: [Label("x")]}

    marked = await run(sandboxes[isolation], "r = await marked()\nreturn [r, type(r[0]).__name__]", functions=functions)
    bare = await run(sandboxes[isolation], "return await bare()", functions=functions)

    assert_outcome(marked, Value([["x", ["t"]], "str"]))
    assert bare.error is not None
    assert bare.error.message == (
        "TypeError: `bare` returned data that is not JSON: value[0] is a Label, not JSON data (use dict, list, str, "
        "int, float, bool, None) (line 1)"
    )


@ISOLATIONS
async def test_a_json_text_keeps_every_character(sandboxes: dict[str, Sandbox], isolation: str) -> None:
    """Non-ASCII text and a lone surrogate cross as they are, put into the frame without a second encoding."""
    data = {"caf\u00e9 \u2603": ["\ud800", "\U0001f600", 'quote " and \\ and \n']}

    result = await run(sandboxes[isolation], "return await f()", functions={"f": lambda: JsonText(data)})

    assert result.error is None, result.error
    assert result.value == data


@ISOLATIONS
async def test_the_code_changing_a_json_text_result_leaves_the_hosts_value(
    sandboxes: dict[str, Sandbox], isolation: str
) -> None:
    """Inline the code gets a copy, so the host's value stays as it returned it."""
    data = [{"a": 1, "b": [1, 2]}]
    code = "r = await f()\nr[0]['a'] = 2\nr[0]['b'].append(3)\nr.append(None)\nreturn r"

    result = await run(sandboxes[isolation], code, functions={"f": lambda: JsonText(data)})

    assert result.value == [{"a": 2, "b": [1, 2, 3]}, None]
    assert data == [{"a": 1, "b": [1, 2]}]


def test_a_json_text_of_what_is_not_json_is_the_encoders_error() -> None:
    """Made on the host, so the host's own bug surfaces there, with `json.dumps`'s error."""
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        JsonText({"a": {1}})
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        JsonText([float("nan")])


async def test_a_json_text_over_one_frame_is_a_result(sandboxes: dict[str, Sandbox]) -> None:
    """Too large for one frame: the same `ValueError` as for plain data, and the worker goes on."""
    big = JsonText(["#" * MiB] * 65)

    result = await run(sandboxes["process"], "return len(await big())", functions={"big": lambda: big})

    assert_outcome(result, raised("ValueError", "bytes of JSON, more than the 67,108,864 bytes one call can return"))
    await assert_still_works(sandboxes["process"])
