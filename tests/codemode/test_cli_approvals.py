"""`codemode chat` asks in the terminal before a call that needs approval, and reads piped answers."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import pytest
from cli_kit import cli
from providers.provider_fakes import SERVERS, Step
from test_cli import loopback  # noqa: F401  # `loopback` is a fixture, used by name

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from test_cli import Answer, Exchange

TOOLS_PY = '''
from pathlib import Path

from codemode import Catalog

catalog = Catalog()


@catalog.tool(approval=True)
def refund(order_id: str, amount: float) -> dict:
    """Refund an order."""
    with open(Path(__file__).with_name("refunds.txt"), "a") as made:
        made.write(f"{order_id} {amount}\\n")
    return {"order_id": order_id, "refunded": amount}
'''
STEPS = (Step("Refunding.", ('return await tools.refund(order_id="A1", amount=150)',)), Step("Done."))


def scripted(provider: str) -> Answer:
    reply = SERVERS[provider][0]

    def answer(index: int, body: dict[str, Any]) -> tuple[int, str, bytes]:
        response = reply(index, STEPS[index], bool(body.get("stream")))
        return response.status_code, response.headers["content-type"], response.content

    return answer


@pytest.mark.parametrize(
    ("answers", "expected", "refunds"),
    [
        ("y\n", '\\"refunded\\": 150', "A1 150.0\n"),
        ("n\nover the limit\n", "tools.refund() was not approved: over the limit", ""),
        ("", "tools.refund() was not approved: no one answered (the input ended)", ""),
    ],
    ids=["approved", "denied", "no-input"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["no-stream", "stream"])
def test_chat_asks_before_a_call_that_needs_approval_and_reads_the_answer_from_stdin(
    answers: str,
    expected: str,
    refunds: str,
    stream: bool,
    tmp_path: Path,
    loopback: Callable[[Answer], Exchange],  # noqa: F811  # the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The call, its arguments and y/N are shown; the model's next request carries the outcome."""
    (tmp_path / "tools.py").write_text(TOOLS_PY)
    (tmp_path / "codemode.toml").write_text('[[tools]]\npython = "tools.py"\n')
    exchange = loopback(scripted("anthropic"))
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    options = [
        "--config",
        str(tmp_path / "codemode.toml"),
        "--isolation",
        "inline",
        *([] if stream else ["--no-stream"]),
    ]
    status = cli(["chat", "Refund order A1.", "--provider", "anthropic", "--model", "m", *options])
    out = capsys.readouterr().out
    assert status == 0
    assert '[approval] the code wants to call refund(order_id="A1", amount=150)' in out
    assert "Approve? [y/N] " in out
    assert len(exchange.bodies) == 2
    assert expected in json.dumps(exchange.bodies[1])
    made = tmp_path / "refunds.txt"
    assert (made.read_text() if made.exists() else "") == refunds
