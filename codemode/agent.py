"""`Agent`: a small provider-neutral loop around `CodeMode` that keeps the prompt cache.

Each step sends the whole history; the tools and the system prompt are built once, and the history only grows
(model responses, tool results, announcements), so every request is a byte prefix of the next. The history is
plain data: `Agent.save()` gives JSON, and `Agent.resume()` continues it in another process, rebuilding the
discovery state from the announcements in the history.

A `code` call that reaches a tool call needing approval asks `Agent.approve` (a callback), or, without one,
stops the run with `stopped == "approval"`: save the agent, let a person decide (minutes later, elsewhere),
and `Agent.decide(...)` continues. While a call waits nothing is sent to the model, so the history stays
a prefix of every later request.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from codemode import Decision
from codemode.discovery import DiscoveryState
from codemode.errors import ApprovalError
from codemode.providers.base import CodeCall, ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from codemode import PendingApproval
    from codemode.code_mode import CodeMode, ExecuteResult
    from codemode.events import EventSink
    from codemode.providers.base import Model, Placement, TextSink, Turn, Usage
    from sandbox import JsonObject

Approver: TypeAlias = "Callable[[PendingApproval], bool | Decision | Awaitable[bool | Decision]]"
"""Asks a person about a pending call: `True`/`False`, or a `Decision` with a reason for a denial."""

DEFAULT_SYSTEM = (
    "You are a capable assistant with access to a large catalog of tools through the `code` tool. "
    "Search for the tools you need, call them from Python, and combine their results in code. "
    "When you have what the user asked for, answer plainly without calling `code` again."
)


@dataclass(frozen=True, kw_only=True)
class StepRecord:
    """One request and what came of it."""

    turn: Turn
    """The model's response, read."""
    executions: tuple[tuple[CodeCall, ExecuteResult | None], ...] = ()
    """Each `code` call and its result (None when the call could not be read)."""
    request_bytes: int = 0
    """Size of the serialized request."""


@dataclass(frozen=True, kw_only=True)
class AgentResult:
    """How a run ended."""

    answer: str
    """The final answer (the last response's text)."""
    stopped: Literal["answer", "max_steps", "max_tokens", "error", "approval"]
    """Why the loop stopped (`approval`: a call waits for a person, see `Agent.decide`; `max_tokens`: the answer was
    cut at the output limit, `Agent.max_tokens`, and `answer` is its start)."""
    steps: tuple[StepRecord, ...] = ()
    """Every step of this run."""
    error: str | None = None
    """The model API error, when `stopped == "error"`."""
    pending: PendingApproval | None = None
    """The call waiting for a decision, when `stopped == "approval"`."""

    @property
    def usage(self) -> tuple[Usage, ...]:
        """Token usage of each request."""
        return tuple(step.turn.usage for step in self.steps)


@dataclass
class AgentEvents:
    """Optional callbacks, for showing a run as it happens."""

    on_text: TextSink | None = None
    """Streamed assistant text."""
    on_code: Callable[[CodeCall], None] | None = None
    """A `code` call is about to run."""
    on_result: Callable[[CodeCall, ExecuteResult], None] | None = None
    """A `code` call finished."""
    on_call: EventSink | None = None
    """A tool call inside a running `code` call started or ended (`codemode.events`)."""
    on_request: Callable[[JsonObject], None] | None = None
    """A request is about to be sent (the full body)."""


@dataclass
class Agent:
    """Runs a conversation: model -> `code` calls -> results and announcements -> model, until an answer.

    Example:
        ```python
        async with CodeMode(catalog) as cm:
            agent = Agent(cm, AnthropicModel(), model_name="claude-sonnet-4-5")
            result = await agent.run("Which of my customers in Berlin have overdue invoices?")
            print(result.answer)
        ```
    """

    code_mode: CodeMode
    """The catalog and sandbox the `code` calls run against."""
    model: Model
    """Who answers requests (an SDK-backed model, or `codemode.testing.ScriptedModel`)."""
    model_name: str = ""
    """The provider's model name, sent in each request."""
    system: str = DEFAULT_SYSTEM
    """The system prompt, fixed for the conversation."""
    max_steps: int = 20
    """Requests per `run` before giving up."""
    max_tokens: int = 4096
    """The output token cap of each request."""
    placement: Placement = "tool_result"
    """Where announcements go: by default in the tool result of the run that found the tools, as tool output
    (stubs carry third-party descriptions); `"user"` appends a user message instead (see `Placement`)."""
    messages: list[JsonObject] = field(default_factory=list)
    """The history, in the model's wire format; plain data."""
    state: DiscoveryState = field(default_factory=DiscoveryState)
    """What the model has been shown."""
    events: AgentEvents = field(default_factory=AgentEvents)
    """Callbacks for showing progress."""
    approve: Approver | None = None
    """Asks a person about each call that needs approval; without it, a run stops at such a call."""
    paused: JsonObject | None = None
    """The turn stopped at a pending approval: its finished outcomes and the calls still to run (plain data)."""

    def __post_init__(self) -> None:
        self._tools = self.model.wire.tools(self.code_mode.tool)

    async def decide(self, approved: bool, *, reason: str | None = None) -> AgentResult:
        """Give the decision on the pending call, finish the paused turn, and continue the conversation.

        Raises:
            ApprovalError: Nothing is waiting for a decision, or the saved record was changed.
        """
        paused = self.paused
        if paused is None:
            raise ApprovalError("this conversation has no call waiting for approval; nothing to decide")
        call, rest, done = _unpack(paused)
        result = await self._approved(await self.code_mode.resume(self.state, approved=approved, reason=reason))
        if result.pending is not None:
            return AgentResult(answer="", stopped="approval", pending=result.pending)
        self._finished(call, result)
        self.paused = {**paused, "done": [*done, _outcome_json(call, result)]}
        _, pending = await self._run_calls(rest)
        if pending is not None:
            return AgentResult(answer="", stopped="approval", pending=pending)
        return await self.run(None)

    async def run(self, prompt: str | None) -> AgentResult:
        """Add `prompt` as a user message and loop until the model answers, or `max_steps`.

        `None` continues the conversation as it stands (after `max_steps`, or a resumed one mid-task).
        """
        if prompt is not None:
            self.messages.extend(self.model.wire.user_message(prompt))
        steps: list[StepRecord] = []
        for _ in range(self.max_steps):
            request = self.model.wire.request(
                model=self.model_name,
                system=self.system,
                messages=self.messages,
                tools=self._tools,
                max_tokens=self.max_tokens,
            )
            if self.events.on_request:
                self.events.on_request(request)
            streamed: list[str] = []
            try:
                response = await self.model.complete(request, on_text=self._text_sink(streamed))
            except Exception as error:  # noqa: BLE001  # the SDK's error (after its own retries), reported plainly
                return AgentResult(answer="", stopped="error", steps=tuple(steps), error=describe_api_error(error))
            turn = self.model.wire.read(response)
            if self.events.on_text and turn.text and not streamed:  # a model that did not stream: show it whole
                self.events.on_text(turn.text + "\n")
            self.messages.extend(turn.messages)
            self.paused = {"done": []}
            executions, pending = await self._run_calls(self._whole(turn))
            steps.append(StepRecord(turn=turn, executions=executions, request_bytes=len(json.dumps(request))))
            if pending is not None:
                return AgentResult(answer=turn.text, stopped="approval", steps=tuple(steps), pending=pending)
            if not turn.calls:
                return AgentResult(answer=turn.text, stopped="max_tokens" if turn.cut else "answer", steps=tuple(steps))
        return AgentResult(answer=steps[-1].turn.text if steps else "", stopped="max_steps", steps=tuple(steps))

    def _whole(self, turn: Turn) -> tuple[CodeCall, ...]:
        """The turn's calls; a last one cut at the output limit gets a result that says so, not "not valid JSON"."""
        calls = turn.calls
        if not (turn.cut and calls and calls[-1].error is not None):
            return calls
        message = (
            f"Your code was cut off at the output limit ({self.max_tokens:,} tokens) before it ended, so it did not "
            "run. Send shorter code: split the work over several runs, and keep data out of the code."
        )
        return (*calls[:-1], dataclasses.replace(calls[-1], error=message))

    def _text_sink(self, streamed: list[str]) -> TextSink | None:
        on_text = self.events.on_text
        if on_text is None:
            return None

        def sink(chunk: str) -> None:
            streamed.append(chunk)
            on_text(chunk)

        return sink

    async def _run_calls(
        self, calls: tuple[CodeCall, ...]
    ) -> tuple[tuple[tuple[CodeCall, ExecuteResult | None], ...], PendingApproval | None]:
        """Run the turn's calls in order (into `paused["done"]`); stop at one that waits for a decision."""
        assert self.paused is not None
        done: list[JsonObject] = list(self.paused["done"])  # type: ignore[arg-type]  # written by this class
        executions: list[tuple[CodeCall, ExecuteResult | None]] = []
        for index, call in enumerate(calls):  # in order: a later call may use tools an earlier one discovered
            if call.error is not None:
                done.append({"id": call.id, "text": call.error, "is_error": True})
                executions.append((call, None))
                continue
            if self.events.on_code:
                self.events.on_code(call)
            result = await self._approved(
                await self.code_mode.execute(call.code, self.state, on_event=self.events.on_call)
            )
            executions.append((call, result))
            if result.pending is not None:
                rest = [{"id": c.id, "code": c.code, "error": c.error} for c in calls[index:]]
                self.paused = {"done": done, "calls": rest}  # type: ignore[dict-item]  # plain JSON lists
                return tuple(executions), result.pending
            self._finished(call, result)
            done.append(_outcome_json(call, result))
        self.paused = None
        if done:
            self.messages.extend(self.model.wire.results([_outcome(item) for item in done], self.placement))
        return tuple(executions), None

    async def _approved(self, result: ExecuteResult) -> ExecuteResult:
        """`result`, resumed with the approver's decisions for as long as it waits for one."""
        while result.pending is not None and self.approve is not None:
            answer = self.approve(result.pending)
            decision = await answer if inspect.isawaitable(answer) else answer
            if isinstance(decision, bool):
                decision = Decision(approved=decision)
            result = await self.code_mode.resume(
                self.state, approved=decision.approved, reason=decision.reason, on_event=self.events.on_call
            )
        return result

    def _finished(self, call: CodeCall, result: ExecuteResult) -> None:
        if self.events.on_result:
            self.events.on_result(call, result)

    def save(self) -> JsonObject:
        """The conversation as JSON data: the history, the state (with any pending approval) and a paused turn."""
        saved: JsonObject = {
            "wire": self.model.wire.name,
            "messages": list(self.messages),
            "state": self.state.to_json(),
        }
        if self.paused is not None:
            saved["paused"] = self.paused
        return saved

    @classmethod
    def resume(cls, code_mode: CodeMode, model: Model, saved: JsonObject, **options: object) -> Agent:
        """Continue a saved conversation.

        The announced tools are rebuilt from the history's announcements; kept variables come from the saved state.
        """
        if saved.get("wire") != model.wire.name:
            raise ValueError(f"the conversation was saved in the {saved.get('wire')!r} format, not {model.wire.name!r}")
        raw = saved.get("messages")
        messages: list[JsonObject] = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
        state = DiscoveryState.from_history(model.wire.history_texts(messages))
        saved_state = saved.get("state")
        if isinstance(saved_state, dict):
            kept = DiscoveryState.from_json(saved_state)
            state.variables, state.assigned, state.approval = kept.variables, kept.assigned, kept.approval
        paused = saved.get("paused") if isinstance(saved.get("paused"), dict) else None
        agent = cls(code_mode=code_mode, model=model, messages=messages, state=state, **options)  # type: ignore[arg-type]
        agent.paused = paused  # type: ignore[assignment]  # checked to be an object just above
        return agent


def _outcome_json(call: CodeCall, result: ExecuteResult) -> JsonObject:
    return {"id": call.id, "text": result.text, "is_error": not result.ok, "announcement": result.announcement}


def _outcome(data: JsonObject) -> ToolOutcome:
    announcement = data.get("announcement")
    return ToolOutcome(
        call_id=str(data["id"]),
        text=str(data["text"]),
        is_error=data.get("is_error") is True,
        announcement=announcement if isinstance(announcement, str) else None,
    )


def _unpack(paused: JsonObject) -> tuple[CodeCall, tuple[CodeCall, ...], list[JsonObject]]:
    """The paused call, the calls after it, and the outcomes already finished."""
    raw_calls, raw_done = paused.get("calls"), paused.get("done")
    if not isinstance(raw_calls, list) or not raw_calls or not isinstance(raw_done, list):
        raise ApprovalError("the saved conversation's paused turn is malformed")
    calls = tuple(_code_call(c) for c in raw_calls if isinstance(c, dict))
    return calls[0], calls[1:], [d for d in raw_done if isinstance(d, dict)]


def _code_call(data: JsonObject) -> CodeCall:
    error = data.get("error")
    return CodeCall(id=str(data.get("id")), code=str(data.get("code")), error=error if isinstance(error, str) else None)


def describe_api_error(error: Exception) -> str:
    """A one-line account of a model API failure, with what to do about it."""
    status = getattr(error, "status_code", None)
    name = type(error).__name__
    message = str(getattr(error, "message", "") or error).strip().splitlines()[0] if str(error) else name
    hints = {
        400: "the request was refused; check the model name and options",
        401: "the API key was refused; check the *_API_KEY environment variable",
        403: "the API key may not use this model",
        404: "the model was not found; check --model",
        429: "rate limited even after the SDK's retries; wait and try again",
        529: "the provider is overloaded; try again later",
    }
    hint = (
        hints.get(status, "the SDK retried where it could")
        if isinstance(status, int)
        else (
            "could not reach the API; check the network and *_BASE_URL" if "Connection" in name else "unexpected error"
        )
    )
    code = f" {status}" if status is not None else ""
    return f"model API error{code} ({name}): {message[:300]} - {hint}"
