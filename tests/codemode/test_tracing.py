"""OpenTelemetry spans of `CodeMode`, read back through the SDK's in-memory exporter."""

from __future__ import annotations

import json
from typing import Literal

import pytest

pytest.importorskip("opentelemetry.sdk")

from approval_shop import SECRET, make_shop
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from watched_tools import watched_catalog

from codemode import CodeMode, Policy
from codemode.tracing import Tracing, approval_wait
from sandbox import Limits


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """Spans finished during the test."""
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    """An SDK tracer provider that exports to `exporter` as each span ends."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, ReadableSpan]:
    """The finished spans by name (each name once in these tests)."""
    return {span.name: span for span in spans}


CODE = """
found = await tools.search("weather forecast")
weather = await tools.get_weather(city="Paris")
try:
    await tools.charge_card(amount=12.5)
except ToolError:
    pass
return weather["celsius"]
"""


@pytest.mark.parametrize("isolation", ["inline", "process"])
async def test_an_execute_span_has_a_child_per_search_and_tool_call_under_the_callers_span(
    isolation: Literal["inline", "process"], provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """The caller's current span is the parent; calls and the search are children of the `execute` span."""
    tracer = provider.get_tracer("agent")
    async with CodeMode(watched_catalog(), isolation=isolation, tracing=Tracing(tracer_provider=provider)) as cm:
        with tracer.start_as_current_span("agent run") as agent_span:
            result = await cm.execute(CODE, cm.new_state())
    assert result.ok, result.text
    spans = by_name(exporter.get_finished_spans())
    assert sorted(spans) == [
        "agent run",
        "codemode execute",
        "codemode search",
        "execute_tool charge_card",
        "execute_tool get_weather",
    ]
    execute = spans["codemode execute"]
    assert execute.parent is not None
    assert execute.parent.span_id == agent_span.get_span_context().span_id
    for name in ("codemode search", "execute_tool get_weather", "execute_tool charge_card"):
        parent = spans[name].parent
        assert parent is not None
        assert parent.span_id == execute.context.span_id, name
    assert dict(execute.attributes or {}) == {
        "codemode.code": CODE,
        "codemode.ok": True,
        "codemode.calls": 2,
        "codemode.announced": ("get_weather", "charge_card"),
    }
    assert dict(spans["codemode search"].attributes or {}) == {
        "codemode.search.query": "weather forecast",
        "codemode.search.hits": 1,
    }
    weather = dict(spans["execute_tool get_weather"].attributes or {})
    assert weather.pop("codemode.tool.duration") == result.calls[0].duration
    assert weather == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "codemode.tool.ok": True,
        "codemode.tool.in_flight": False,
    }
    charge = spans["execute_tool charge_card"]
    assert charge.status.status_code is StatusCode.ERROR
    assert charge.status.description == "ValueError"  # its message may quote arguments: only with record_arguments
    assert (charge.attributes or {})["error.type"] == "ValueError"
    assert "gen_ai.tool.call.arguments" not in (charge.attributes or {})


async def test_arguments_are_recorded_only_when_opted_in_and_the_code_can_be_left_out(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """`record_arguments=True` puts each call's arguments on its span as JSON; `record_code=False` drops the code."""
    tracing = Tracing(tracer_provider=provider, record_arguments=True, record_code=False)
    async with CodeMode(watched_catalog(), isolation="inline", tracing=tracing) as cm:
        await cm.execute('return await tools.get_weather(city="Paris")', cm.new_state())
    spans = by_name(exporter.get_finished_spans())
    arguments = (spans["execute_tool get_weather"].attributes or {})["gen_ai.tool.call.arguments"]
    assert json.loads(str(arguments)) == {"city": "Paris"}
    assert "codemode.code" not in (spans["codemode execute"].attributes or {})


async def test_a_failed_calls_message_is_its_status_only_when_arguments_are_recorded(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """With `record_arguments=True` the span status is the call's error message, which may quote its arguments."""
    tracing = Tracing(tracer_provider=provider, record_arguments=True)
    async with CodeMode(watched_catalog(), isolation="inline", tracing=tracing) as cm:
        await cm.execute("await tools.charge_card(amount=12.5)", cm.new_state())
    charge = by_name(exporter.get_finished_spans())["execute_tool charge_card"]
    assert (charge.status.status_code, charge.status.description) == (StatusCode.ERROR, "ValueError: card declined")


async def test_a_failed_run_marks_its_span_and_a_call_in_flight_at_the_timeout_is_ended(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """A timeout is an error on the `execute` span; the call it cut off is ended, marked in flight."""
    limits = Limits(timeout=0.5)
    async with CodeMode(
        watched_catalog(), isolation="inline", limits=limits, tracing=Tracing(tracer_provider=provider)
    ) as cm:
        result = await cm.execute("await tools.wait_for_gate()", cm.new_state())
    assert result.run.error is not None
    assert result.run.error.kind == "timeout"
    spans = by_name(exporter.get_finished_spans())
    execute = spans["codemode execute"]
    assert execute.status.status_code is StatusCode.ERROR
    assert (execute.attributes or {})["codemode.error.kind"] == "timeout"
    waiting = spans["execute_tool wait_for_gate"]
    assert ((waiting.attributes or {})["codemode.tool.in_flight"], (waiting.attributes or {})["error.type"]) == (
        True,
        "InFlight",
    )


async def test_tracing_off_makes_no_spans(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    """Without `tracing=`, nothing is traced, even with a provider about."""
    tracer = provider.get_tracer("agent")
    async with CodeMode(watched_catalog(), isolation="inline") as cm:
        with tracer.start_as_current_span("agent run"):
            await cm.execute('return await tools.get_weather(city="Paris")', cm.new_state())
    assert [span.name for span in exporter.get_finished_spans()] == ["agent run"]


def test_an_approval_wait_is_a_span_under_the_current_one(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """`approval_wait` is the hook an approval flow wraps around waiting for a person."""
    tracer = provider.get_tracer("agent")
    with (
        tracer.start_as_current_span("agent run") as agent_span,
        approval_wait("charge_card", tracer_provider=provider) as span,
    ):
        span.set_attribute("codemode.approval.approved", False)
    spans = by_name(exporter.get_finished_spans())
    wait = spans["codemode approval wait"]
    assert wait.parent is not None
    assert wait.parent.span_id == agent_span.get_span_context().span_id
    assert dict(wait.attributes or {}) == {"gen_ai.tool.name": "charge_card", "codemode.approval.approved": False}


async def test_a_run_paused_for_approval_names_the_tool_and_ends_the_held_calls_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """A pause is not an error: the `execute` span names the tool waiting; the held call's span is marked held."""
    shop = make_shop()
    code = 'return await tools.refund(order_id="A1", amount=500)'
    async with CodeMode(
        shop.catalog, isolation="inline", policy=Policy(secret=SECRET), tracing=Tracing(tracer_provider=provider)
    ) as cm:
        paused = await cm.execute(code, cm.new_state())
    assert paused.pending is not None
    spans = by_name(exporter.get_finished_spans())
    execute = spans["codemode execute"]
    assert (execute.attributes or {})["codemode.approval.pending"] == "refund"
    assert execute.status.status_code is StatusCode.UNSET
    assert (spans["execute_tool refund"].attributes or {})["codemode.tool.held"] is True
