"""A catalog from two real MCP servers (`mcp-server-time` and `mcp-server-git`), used through one `code` tool.

The git server works on a temporary repository this program creates. A scripted model plays the conversation
offline, in Anthropic's wire format, and the transcript is printed: each `code` call, its result, and what
the run announced.

Run: pip install "codemode[mcp]" mcp-server-time mcp-server-git && python examples/mcp_two_servers.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import anyio

from codemode import Catalog, CodeMode
from codemode.agent import Agent, AgentEvents
from codemode.mcp import McpSources, StdioServer
from codemode.providers.anthropic import AnthropicWire
from codemode.testing import ScriptedModel, ScriptStep, step

TASK = "What time is it in Tokyo, and what was the last commit in my repository?"


def make_repository(folder: Path) -> Path:
    git = ["git", "-C", str(folder), "-c", "user.name=Example", "-c", "user.email=example@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (folder / "NOTES.md").write_text("Meeting with the Tokyo team at 9:00 their time.\n")
    subprocess.run([*git, "add", "NOTES.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Add meeting notes"], check=True)
    return folder


def script(repo: Path) -> list[ScriptStep]:
    return [
        step(
            "Let me find tools for the time and for git.",
            'for query in ["current time in a timezone", "git commit log"]:\n'
            "    for tool in await tools.search(query, max_results=2):\n"
            '        print(tool["signature"])',
        ),
        step(
            "I'll ask both servers at once.",
            "import asyncio\n"
            "now, log = await asyncio.gather(\n"
            '    tools.get_current_time(timezone="Asia/Tokyo"),\n'
            f"    tools.git_log(repo_path={str(repo)!r}, max_count=1),\n"
            ")\n"
            'return {"tokyo": now["datetime"], "last_commit": log}',
        ),
        step('It is now the time shown above in Tokyo, and the last commit is "Add meeting notes".'),
    ]


def transcript() -> AgentEvents:
    """Print what the model says, the code it runs, each result, and what each run announced."""

    def on_code(call: Any) -> None:
        print("\n[code]\n" + textwrap.indent(call.code.rstrip(), "  | "))

    def on_result(call: Any, result: Any) -> None:
        print("[result]\n" + textwrap.indent(result.text, "  > "))
        if result.announcement:
            print(f"[announced: {result.announced.summary()}]")

    return AgentEvents(on_text=lambda text: print(text, end=""), on_code=on_code, on_result=on_result)


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = make_repository(Path(folder))
        servers = [
            StdioServer(command=(sys.executable, "-m", "mcp_server_time"), name="time"),
            StdioServer(command=(sys.executable, "-m", "mcp_server_git", "--repository", str(repo)), name="git"),
        ]
        catalog = Catalog()
        async with McpSources(catalog, servers) as sources, CodeMode(catalog) as cm:
            print(f"{len(catalog)} tools from {', '.join(sources.servers)} behind one `code` tool")
            for name, reason in sources.failures.items():
                print(f"left out {name}: {reason}")
            print(f"\nuser: {TASK}\n")
            model = ScriptedModel(AnthropicWire(), script(repo))
            agent = Agent(cm, model, model_name="scripted", events=transcript())
            result = await agent.run(TASK)
            print(f"\n\n[{result.stopped}; discovered: {', '.join(agent.state.announced)}]")


if __name__ == "__main__":
    anyio.run(main)
