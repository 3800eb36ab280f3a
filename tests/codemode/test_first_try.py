# Snapshots hold the messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""The model's first try: a call certain to fail refuses the run before any tool runs; the rest is left to the run."""

from __future__ import annotations

import datetime  # noqa: TC003  # read at run time: pydantic resolves the tool's annotations
from typing import Optional

import pytest
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode, ExecuteResult


def shop(calls: list[str]) -> Catalog:
    """Tools that record every call they get."""
    catalog = Catalog()

    @catalog.tool
    async def log_event(msg: str) -> str:
        """Log an event."""
        calls.append(f"log_event {msg}")
        return "logged"

    @catalog.tool
    async def send_email(to: str, subject: str, vip: Optional[bool] = None, retries: int | None = None) -> str:  # noqa: UP045  # the spelling users write
        """Send an email."""
        calls.append(f"send_email {to}")
        return "sent"

    catalog.add(
        name="crm_notes_add",
        description="Add a note to a customer.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        handler=lambda text: calls.append(f"crm_notes_add {text}") or "added",
    )
    return catalog


async def run(code: str, calls: list[str]) -> ExecuteResult:
    async with CodeMode(shop(calls), isolation="inline") as cm:
        return await cm.execute(code, cm.new_state())


async def test_a_misspelt_keyword_refuses_the_run_before_the_call_before_it_runs() -> None:
    """The first call does not run: the model reads the fix, and that no tool was called."""
    calls: list[str] = []

    result = await run('await tools.log_event(msg="start")\nawait tools.send_email(to="a@b.c", subjct="hi")', calls)

    assert calls == []
    assert result.calls == ()
    assert result.text == snapshot("""\
ToolError: tools.send_email(): unexpected argument `subjct`; did you mean `subject`? Signature: send_email(*, to: str, subject: str, vip: bool | None = None, retries: int | None = None) -> str (line 2)
The code did not run, and no tool was called: fix this call, then run the code again.""")
    assert "async def send_email(" in (result.announcement or "")


async def test_every_certain_mistake_is_reported_at_once_with_its_line() -> None:
    """Unknown tools, wrong keywords of tools and helpers, missing arguments and wrong literal types: all in one answer."""
    calls: list[str] = []
    code = """\
found = await tools.search("mail", limit=3)
await tools.log_evnt(msg="start")
await tools.send_email(subject="hi")
await tools["send_email"](to="a@b.c", subject="hi", vip="yes", retries="twice")
await tools.describe("send_mail")
await tools.crm.notes.add(txt="hi")
"""

    result = await run(code, calls)

    assert calls == []
    assert result.run.error is not None
    assert result.run.error.line == 1
    assert (
        result.text
        == snapshot("""\
ToolError: 6 calls in the code would fail, so it did not run, and no tool was called. Fix them all, then run the code again:
  line 1: tools.search(query, max_results=5) has no argument `limit`; did you mean `max_results`?
  line 2: there is no tool named 'log_evnt'. Did you mean: log_event? Find tools with `await tools.search("what you need")`.
  line 3: tools.send_email(): missing required argument `to`. Signature: send_email(*, to: str, subject: str, vip: bool | None = None, retries: int | None = None) -> str
  line 4: tools.send_email(): argument `retries`: expected `int | None` (given "twice"); argument `vip`: expected `bool | None` (given "yes"). Signature: send_email(*, to: str, subject: str, vip: bool | None = None, retries: int | None = None) -> str
  line 5: there is no tool named 'send_mail'. Did you mean: send_email? Find tools with `await tools.search("what you need")`.
  line 6: tools.crm_notes_add(): unexpected argument `txt`; did you mean `text`? Signature: crm_notes_add(*, text: str) -> Any""")
    )


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            'name = "send_" + "mail"\nawait tools.log_event(msg="x")\nawait tools[name](to="a")', id="dynamic-name"
        ),
        pytest.param(
            'extra = {"subjct": "hi"}\nawait tools.log_event(msg="x")\nawait tools.send_email(to="a", **extra)',
            id="kwargs",
        ),
        pytest.param(
            'flag = "yes"\nawait tools.log_event(msg="x")\nawait tools.send_email(to="a", subject="s", vip=flag)',
            id="computed-value",
        ),
        pytest.param(
            'await tools.log_event(msg="x")\nclass Fake:\n    def send_email(self, subjct):\n        return 1\ndef f():\n    tools = Fake()\n    return tools.send_email(subjct=1)\nf()',
            id="tools-assigned",
        ),
        pytest.param(
            'await tools.log_event(msg="x")\ndef f(tools):\n    return tools.send_email(subjct=1)\nf(None)',
            id="tools-parameter",
        ),
        pytest.param(
            'await tools.log_event(msg="x")\ntry:\n    await tools.send_email(subjct="hi")\nexcept ToolError as e:\n    print(e)',
            id="caught",
        ),
        pytest.param(
            'import asyncio\nawait tools.log_event(msg="x")\nawait asyncio.gather(tools.send_email(subjct="hi"), return_exceptions=True)',
            id="gathered-exceptions",
        ),
        pytest.param(
            'await tools.log_event(msg="x")\nasync def send():\n    return await tools.send_email(subjct="hi")\n'
            "try:\n    await send()\nexcept Exception as e:\n    print(e)",
            id="function-called-in-try",
        ),
        pytest.param(
            'await tools.log_event(msg="x")\nfor call in [lambda: tools.send_email(subjct="hi")]:\n'
            "    try:\n        await call()\n    except ToolError:\n        pass",
            id="lambda",
        ),
    ],
)
async def test_what_the_check_cannot_judge_is_left_to_the_run(code: str) -> None:
    """Dynamic names, `**kwargs`, computed values, a `tools` of the code's own and caught failures run as before."""
    calls: list[str] = []

    await run(code, calls)

    assert calls == ["log_event x"]


async def test_a_dotted_guess_calls_the_tool_whose_alias_it_spells() -> None:
    """`tools.crm.notes.add(...)` is `tools.crm_notes_add(...)`, checked before the run and found by the run."""
    calls: list[str] = []

    checked = await run('return await tools.crm.notes.add(text="hi")', calls)
    found = await run('name = "add"\nreturn await getattr(tools.crm.notes, name)(text="hi")', calls)

    assert (checked.run.value, found.run.value) == ("added", "added")
    assert calls == ["crm_notes_add hi", "crm_notes_add hi"]


async def test_a_dotted_guess_of_no_tool_names_the_closest_ones_and_no_internal_class() -> None:
    """An unknown dotted name gets the unknown-tool answer; an attribute of a plain function names the function."""
    calls: list[str] = []

    unknown = await run('n = "add"\nawait getattr(tools.crm.note, n)(text="hi")', calls)
    attribute = await run("h = 'help'\nreturn await getattr(tools.log_event, h)()", calls)

    assert unknown.run.error is not None
    assert unknown.run.error.message == snapshot(
        "ToolError: there is no tool named 'crm.note.add'. Did you mean: crm_notes_add? Find tools with `await tools.search(\"what you need\")`. (line 2)"
    )
    misused = [await run(code, calls) for code in ("return tools.log_event", "return len(tools.log_event)", "tools[0]")]
    assert attribute.run.error is not None
    assert [result.run.error.message for result in misused if result.run.error] == snapshot(
        [
            "the returned value is a 'function' object: a function is not data: call it and return its result, or return its name (`f.__name__`)",
            "TypeError: object of type 'function' has no len() (line 1)",
            "KeyError: 0 (line 1)",
        ]
    )
    assert attribute.run.error.message == snapshot(
        "ToolError: there is no tool named 'log_event.help'. Did you mean: log_event? Find tools with `await tools.search(\"what you need\")`. (line 2)"
    )


async def test_a_union_argument_computed_at_run_time_says_what_was_expected() -> None:
    """An `Optional` argument's wrong value gets "expected" and "given", with every bad argument of the call."""
    calls: list[str] = []

    result = await run(
        'vip, retries = "yes", "twice"\nawait tools.send_email(to="a", subject="s", vip=vip, retries=retries)', calls
    )

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        'ToolError: tools.send_email(): argument `retries`: expected `int | None` (given "twice"); argument `vip`: expected `bool | None` (given "yes"). Signature: send_email(*, to: str, subject: str, vip: bool | None = None, retries: int | None = None) -> str (line 2)'
    )


async def test_every_argument_that_does_not_convert_to_the_handlers_types_is_named_at_once() -> None:
    """Two dates that are no dates: one answer names both, with what was given."""
    catalog = Catalog()

    @catalog.tool
    async def book(start: datetime.date, end: datetime.date, guests: int = 1) -> str:
        """Book a stay."""
        return "booked"

    async with CodeMode(catalog, isolation="inline") as cm:
        result = await cm.execute('a, b = "soon", "later"\nawait tools.book(start=a, end=b)', cm.new_state())

    assert result.run.error is not None
    assert result.run.error.message.startswith("ToolError: tools.book(): argument `start`: ")
    assert '(given "soon"); argument `end`: ' in result.run.error.message
    assert result.run.error.message.endswith(
        '(given "later"). Signature: book(*, start: str, end: str, guests: int = 1) -> str (line 2)'
    )


async def test_a_helpers_literal_values_are_checked_as_the_helper_checks_them() -> None:
    """`max_results` out of range and an empty query are refused up front; a computed query is left to the run."""
    calls: list[str] = []
    code = 'q = "mail"\nawait tools.log_event(msg="x")\nawait tools.search(q, max_results=500)\nawait tools.search("")'

    result = await run(code, calls)

    assert calls == []
    assert result.text == snapshot("""\
ToolError: 2 calls in the code would fail, so it did not run, and no tool was called. Fix them all, then run the code again:
  line 3: tools.search(max_results=...) must be an int from 1 to 50
  line 4: tools.search() needs a query string, e.g. `await tools.search("send an email")`\
""")
