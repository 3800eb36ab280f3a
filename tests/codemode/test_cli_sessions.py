"""The command line and the agent loop with the session features: `--log`, live progress, kept variables."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

from cli_kit import cli
from inline_snapshot import snapshot

from codemode import Catalog, CodeMode
from codemode.agent import Agent
from codemode.cli._show import Transcript
from codemode.providers.anthropic import AnthropicWire
from codemode.testing import ScriptedModel, step

if TYPE_CHECKING:
    from pathlib import Path


class Clock:
    """A clock the test moves: a tool call "takes" as long as the test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def slow_catalog(clock: Clock) -> Catalog:
    """`fetch_report` moves the clock on by 2 s; `get_weather` takes no time."""
    catalog = Catalog()

    @catalog.tool
    async def fetch_report(name: str) -> str:
        """Fetch a report by name."""
        clock.now += 2.0
        return f"report {name}"

    @catalog.tool
    async def get_weather(city: str) -> dict[str, object]:
        """Get the weather forecast for a city."""
        return {"city": city}

    return catalog


async def test_chat_shows_the_calls_of_a_long_run_live_and_none_of_a_quick_one() -> None:
    """Calls of a run past `progress_after` are printed as they happen (earlier ones at once); a quick run's not."""
    clock = Clock()
    out = io.StringIO()
    transcript = Transcript(out, progress_after=1.0, clock=clock)
    quick = 'return await tools.get_weather(city="Oslo")'
    slow = (
        'await tools.get_weather(city="Oslo")\nawait tools.fetch_report(name="q3")\n'
        'await tools.get_weather(city="Rome")'
    )
    model = ScriptedModel(AnthropicWire(), [step("", quick), step("", slow), step("Done.")])
    async with CodeMode(slow_catalog(clock), isolation="inline") as cm:
        await Agent(cm, model, events=transcript.events()).run("go")
    progress = [line for line in out.getvalue().splitlines() if line.startswith("  ~")]
    assert [line.split("s  ", 1)[1].split(" (")[0] for line in progress] == snapshot(
        [
            'started  get_weather(city="Oslo")',
            'ok       get_weather(city="Oslo")',
            'started  fetch_report(name="q3")',
            'ok       fetch_report(name="q3")',
            'started  get_weather(city="Rome")',
            'ok       get_weather(city="Rome")',
        ]
    )


async def test_the_agent_keeps_variables_across_steps_and_a_resumed_conversation() -> None:
    """With persistence on, a later step reads what an earlier step left, also after `save` and `resume`."""
    wire = AnthropicWire()
    async with CodeMode(slow_catalog(Clock()), isolation="inline", persist_variables=True) as cm:
        agent = Agent(cm, ScriptedModel(wire, [step("", "seen = ['Oslo']"), step("Noted.")]))
        await agent.run("remember Oslo")
        saved = json.loads(json.dumps(agent.save()))
        resumed = Agent.resume(
            cm, ScriptedModel(wire, [step("", "seen.append('Rome')\nreturn seen"), step("Ok.")]), saved
        )
        result = await resumed.run("and Rome")
    execution = result.steps[0].executions[0][1]
    assert execution is not None
    assert execution.text == 'Returned: [\n "Oslo",\n "Rome"\n]'


def test_exec_log_writes_one_json_line_per_run(tmp_path: Path) -> None:
    """`codemode exec --log FILE` appends the run, with its code and calls, to FILE."""
    (tmp_path / "tools.py").write_text(
        "from codemode import Catalog\ncatalog = Catalog()\n\n@catalog.tool\n"
        "async def get_weather(city: str) -> dict:\n    '''Get the weather for a city.'''\n    return {'city': city}\n",
        encoding="utf-8",
    )
    config = tmp_path / "codemode.toml"
    config.write_text('[[tools]]\npython = "tools.py"\n', encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text('return await tools.get_weather(city="Oslo")\n', encoding="utf-8")
    log = tmp_path / "runs.jsonl"
    for _ in range(2):
        assert cli(["exec", str(script), "--config", str(config), "--isolation", "inline", "--log", str(log)]) == 0
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(line["ok"], line["code"], [call["name"] for call in line["calls"]]) for line in lines] == [
        (True, 'return await tools.get_weather(city="Oslo")\n', ["get_weather"]),
        (True, 'return await tools.get_weather(city="Oslo")\n', ["get_weather"]),
    ]
