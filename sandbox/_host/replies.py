"""The frames of one run's conversation as values: a `call` frame checked, a reply encoded, a `done` frame read.

Apart from the conversation (`sandbox._host.conversation`), which decides when each is read or written, because these
are pure functions of one frame each: what a worker's frame may hold, and what a reply says and how long it may be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandbox._host.jsontext import JsonText
from sandbox._shared.frames import MAX_FRAME, FrameTooLargeError, ProtocolError, encode, encode_with_text
from sandbox._shared.hostcall import Call, HostFailure
from sandbox.limits import cut_end
from sandbox.result import ERROR_KINDS, RunResult

if TYPE_CHECKING:
    from sandbox._host.dispatch import Reply


def parse_call(message: dict[str, Any]) -> tuple[int, Call]:
    """The id and the call of a `call` frame, or `ProtocolError` if it is malformed."""
    call_id, function, attribute = message.get("id"), message.get("fn"), message.get("attr")
    args, kwargs = message.get("args") or [], message.get("kwargs") or {}
    if (
        type(call_id) is not int
        or type(function) is not str
        or not (attribute is None or type(attribute) is str)
        or type(args) is not list
        or type(kwargs) is not dict
    ):
        raise ProtocolError("a malformed `call` frame")
    return call_id, Call(function, attribute, args, kwargs)


def failure_of(error: Exception) -> HostFailure:
    """What the model hears of a host function's failure: its class name and message."""
    return error if isinstance(error, HostFailure) else HostFailure(type(error).__name__, _text(error))


def value_reply(call_id: int, call: Call, value: Reply) -> bytes:
    """The `result` frame of a call's value, or of its failure if the value is more than a frame holds."""
    try:
        if isinstance(value, JsonText):  # encoded by the host already: its text goes in as it is
            return encode_with_text({"t": "result", "id": call_id, "ok": True}, "value", value.text)
        return encode({"t": "result", "id": call_id, "ok": True, "value": value})
    except FrameTooLargeError as error:
        return failure_reply(
            call_id,
            HostFailure(
                "ValueError",
                f"`{call.label}` returned {error.size:,} bytes of JSON, more than the {MAX_FRAME:,} bytes "
                "one call can return; ask for less per call (a page, a filter, fewer fields)",
            ),
        )


def failure_reply(call_id: int, failure: HostFailure) -> bytes:
    """The `result` frame of a call's failure, its message cut to what always fits in a frame."""
    message = cut_end(failure.message, _MAX_FAILURE)
    return encode({"t": "result", "id": call_id, "ok": False, "type": failure.type_name[:200], "message": message})


_MAX_FAILURE = 64 * 1024
"""Characters of a host error's message sent to the worker; more is cut, so the reply always fits in a frame."""


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # noqa: BLE001  # a host exception whose __str__ fails still becomes a reply
        return ""


def done_result(data: object) -> RunResult:
    """The result in a `done` frame, or `ProtocolError` if it is malformed."""
    if not isinstance(data, dict):
        raise ProtocolError("a `done` frame without a result")
    error = data.get("error")
    if error is not None and not (isinstance(error, dict) and error.get("kind") in ERROR_KINDS):
        raise ProtocolError("a `done` frame with an unknown error kind")
    try:
        return RunResult.from_json(data)
    except Exception as problem:  # noqa: BLE001  # whatever a forged result trips on is the worker's fault
        raise ProtocolError(f"a malformed `done` frame ({type(problem).__name__})") from None
