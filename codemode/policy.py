"""Tool-call policy, one mechanism: approval rules, host hooks before and after each call, and per-tool limits.

Every call the model's code makes goes through its `CodeMode`'s `Policy`:

1. before the call, each `before` hook (then the tool's own `approval` rule) may deny it with a reason the
   model reads (`Deny`), or require a person's approval (`RequireApproval`); returning `None` lets it through;
2. the call runs within the tool's `ToolLimits`: a rate (calls wait their turn), a cap on calls in flight (calls
   wait for a slot) and a timeout (the call fails with a clear `ToolError`);
3. after the call, each `after` hook sees the outcome (for audit and metrics) and may replace the result the
   code gets (`ReplaceResult`, for redaction).

A call that needs approval stops the run; `CodeMode.resume` continues it once a person has decided (see
`codemode.approvals._record` for the record that makes this possible without keeping a worker alive).

Example:
    ```python
    @catalog.tool(approval=lambda args: args["amount"] > 100)
    async def refund(order_id: str, amount: float) -> dict:
        \"\"\"Refund an order.\"\"\"


    def no_deletes_on_friday(call: CallInfo) -> Deny | None:
        return Deny("no deletions on Fridays") if call.tool.startswith("delete") else None


    def refunds_by_finance_only(call: CallInfo) -> Deny | None:
        # `call.caller` is who `codemode serve` authenticated (None on stdio, or without authentication)
        if call.tool == "refund" and (call.caller is None or "finance" not in call.caller.groups):
            return Deny("only finance may refund")
        return None


    def redact(outcome: CallOutcome) -> ReplaceResult | None:
        if isinstance(outcome.result, dict) and "ssn" in outcome.result:
            return ReplaceResult({**outcome.result, "ssn": "***"})
        return None


    cm = CodeMode(catalog, policy=Policy(before=[no_deletes_on_friday], after=[redact], secret=KEY))
    ```
"""

from __future__ import annotations

import inspect
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import anyio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

    from codemode.tools import Tool
    from sandbox import JsonObject, JsonValue

logger = logging.getLogger("codemode.policy")
T = TypeVar("T")

ApprovalRule: TypeAlias = "bool | Callable[[JsonObject], bool]"
"""`True`: every call needs approval; a callable: calls whose validated arguments it returns True for."""


@dataclass(frozen=True, kw_only=True)
class ToolLimits:
    """Limits on one tool's calls, across all runs of a `CodeMode`."""

    timeout: float | None = None
    """Seconds one call may take; a slower call fails with a `ToolError` that says so."""
    max_concurrent: int | None = None
    """Calls in flight at once; more wait for a slot."""
    rate: float | None = None
    """Calls per second; calls beyond it wait, spaced evenly."""

    def __post_init__(self) -> None:
        for name in ("timeout", "max_concurrent", "rate"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"ToolLimits({name}={value!r}): must be a positive number or None")


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who asked for a run: the identity a server authenticated (`codemode serve` over HTTP).

    Example:
        ```python
        Caller(subject="ci-bot")  # an API key named "ci-bot"
        Caller(subject="user-42", issuer="https://auth.example.com", claims={"groups": ["finance"]})  # a JWT
        ```
    """

    subject: str
    """The API key's name, or the JWT's `sub`."""
    issuer: str | None = None
    """The JWT's `iss`; None for an API key."""
    claims: JsonObject = field(default_factory=dict)
    """The JWT's claims (`sub`, `iss`, `aud`, `exp`, `scope`, and whatever the issuer adds); empty for an API key."""

    @property
    def principal(self) -> str:
        """One string per identity (the issuer and subject), what a paused run is bound to."""
        return f"key:{self.subject}" if self.issuer is None else f"jwt:{self.issuer}#{self.subject}"

    @property
    def groups(self) -> tuple[str, ...]:
        """The JWT's `groups` or `roles` claim as strings (empty when it has neither)."""
        found = self.claims.get("groups", self.claims.get("roles"))
        return tuple(str(item) for item in found) if isinstance(found, list) else ()


@dataclass(frozen=True, kw_only=True)
class CallInfo:
    """A call the model's code is about to make, as hooks see it."""

    tool: str
    """The tool's original name."""
    alias: str
    """The name the model wrote after `tools.`."""
    arguments: JsonObject
    """The validated arguments, by the schema's names."""
    caller: Caller | None = None
    """Who asked for the run (`codemode serve` over HTTP with authentication), or None."""


@dataclass(frozen=True, kw_only=True)
class CallOutcome:
    """How a call ended, as `after` hooks see it."""

    call: CallInfo
    """The call."""
    ok: bool
    """Whether it returned a result."""
    result: JsonValue = None
    """The result the code is about to get (after earlier hooks' replacements)."""
    error: str | None = None
    """The message the model sees, when it failed."""
    duration: float = 0.0
    """Seconds the call took."""


@dataclass(frozen=True)
class Deny:
    """A `before` hook's answer: do not make the call; the code gets `ToolError` with `reason`."""

    reason: str
    """Why, for the model."""


@dataclass(frozen=True)
class RequireApproval:
    """A `before` hook's answer: stop the run until a person approves or denies the call."""

    reason: str | None = None
    """Why approval is needed, for the person deciding."""


@dataclass(frozen=True)
class ReplaceResult:
    """An `after` hook's answer: the code gets `value` instead of the tool's result."""

    value: JsonValue
    """The result to hand to the code (JSON data)."""


Verdict: TypeAlias = "Deny | RequireApproval | None"
BeforeHook: TypeAlias = "Callable[[CallInfo], Verdict | Awaitable[Verdict]]"
"""Called before each call; `None` lets the call through."""
AfterHook: TypeAlias = "Callable[[CallOutcome], ReplaceResult | Awaitable[ReplaceResult | None] | None]"
"""Called after each call that ran (not for calls replayed from a record)."""


class Policy:
    """The hooks, limits and approval signing key of one `CodeMode`.

    Args:
        before: Hooks called in order before each call; the first `Deny` or `RequireApproval` decides. A hook
            that raises denies the call (and is logged): a broken check never lets a call through.
        after: Hooks called in order after each call; a hook that raises fails the call, so a broken redaction
            never hands the code the unredacted result.
        secret: The key that signs approval records (HMAC-SHA256). Give the same key to every process that may
            resume a conversation; by default a random key, good for this process only.
    """

    def __init__(
        self,
        *,
        before: Iterable[BeforeHook] = (),
        after: Iterable[AfterHook] = (),
        secret: bytes | str | None = None,
    ) -> None:
        self.before = tuple(before)
        self.after = tuple(after)
        self.secret = secret.encode() if isinstance(secret, str) else (secret or os.urandom(32))
        self._gates: dict[str, tuple[ToolLimits, _Gate]] = {}

    def may_ask(self, tools: Iterable[Tool]) -> bool:
        """Whether a call could need approval (so runs must be repeatable)."""
        return bool(self.before) or any(tool.approval is not False for tool in tools)

    async def check(self, tool: Tool, call: CallInfo) -> Verdict:
        """The hooks' verdict on a call, then the tool's approval rule."""
        for hook in self.before:
            try:
                verdict = await _maybe_await(hook(call))
            except Exception as error:  # a host hook's bug: fail closed, log it, tell the model plainly
                logger.exception("a `before` hook failed on a call of %r", call.tool)
                return Deny(f"the host's policy check failed ({type(error).__name__}); the call was not made")
            if isinstance(verdict, (Deny, RequireApproval)):
                return verdict
        return _rule_verdict(tool, call)

    async def finish(self, outcome: CallOutcome) -> CallOutcome:
        """The outcome after every `after` hook, with the result replaced where a hook said so."""
        for hook in self.after:
            try:
                answer = await _maybe_await(hook(outcome))
            except Exception as error:  # fail closed: a redaction that failed must not leak the result
                logger.exception("an `after` hook failed on a call of %r", outcome.call.tool)
                message = f"the host's after-call hook failed ({type(error).__name__}); the result is withheld"
                return CallOutcome(call=outcome.call, ok=False, error=message, duration=outcome.duration)
            if isinstance(answer, ReplaceResult) and outcome.ok:
                outcome = CallOutcome(call=outcome.call, ok=True, result=answer.value, duration=outcome.duration)
        return outcome

    async def limited(self, tool: Tool, invoke: Callable[[], Awaitable[T]]) -> T:
        """`invoke()` within the tool's limits; a timeout raises `TimeoutError`."""
        if tool.limits is None:
            return await invoke()
        cached = self._gates.get(tool.name)
        if cached is None or cached[0] is not tool.limits:
            cached = (tool.limits, _Gate(tool.limits))
            self._gates[tool.name] = cached
        return await cached[1].run(invoke)


class _Gate:
    """One tool's rate, slots and timeout."""

    def __init__(self, limits: ToolLimits) -> None:
        self.limits = limits
        self.slots = anyio.CapacityLimiter(limits.max_concurrent) if limits.max_concurrent else None
        self.next_start = 0.0

    async def run(self, invoke: Callable[[], Awaitable[T]]) -> T:
        if self.limits.rate:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + 1.0 / self.limits.rate  # reserved before waiting, so waiters space out
            await anyio.sleep(start - now)
        if self.slots is None:
            return await self._timed(invoke)
        async with self.slots:
            return await self._timed(invoke)

    async def _timed(self, invoke: Callable[[], Awaitable[T]]) -> T:
        if self.limits.timeout is None:
            return await invoke()
        with anyio.fail_after(self.limits.timeout):
            return await invoke()


def _rule_verdict(tool: Tool, call: CallInfo) -> Verdict:
    rule = tool.approval
    if rule is True:
        return RequireApproval()
    if rule is False:
        return None
    try:
        needed = bool(rule(dict(call.arguments)))
    except Exception as error:  # a broken rule fails closed: a person decides
        logger.exception("the approval rule of %r failed", tool.name)
        return RequireApproval(f"the approval rule failed ({type(error).__name__})")
    return RequireApproval() if needed else None


async def _maybe_await(value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value
