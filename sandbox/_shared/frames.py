"""Frames between the host and a worker process: a 4-byte big-endian length, then one JSON object.

Host to worker: `run` (its run id, code, limits, function kinds, error names), `result` (a host call's outcome).
Worker to host: `ready`, `call` (a host-function call, tagged with the id of the run that made it), `done` (the
run's result, tagged with its run id).

Every run has an id the host picks. A call whose run is over is refused on both sides: the worker does not send
it, and the host answers one it receives with an error, never with the functions of a later run.
"""

from __future__ import annotations

import json
import json.decoder
import json.encoder
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 1024 * 1024


class ProtocolError(Exception):
    """A frame was malformed or too large."""


class FrameTooLargeError(ProtocolError):
    """A message is over `MAX_FRAME` bytes of JSON."""

    def __init__(self, size: int) -> None:
        super().__init__(f"frame of {size:,} bytes is over the {MAX_FRAME:,} byte limit")
        self.size = size


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding `message`; `FrameTooLargeError` if it is over the limit."""
    payload = _dumps(message).encode("utf-8", "surrogatepass")
    if len(payload) > MAX_FRAME:
        raise FrameTooLargeError(len(payload))
    return HEADER.pack(len(payload)) + payload


def encode_with_text(message: dict[str, Any], key: str, text: str) -> bytes:
    """One frame holding `message` and `key` set to `text`, a JSON text `json.dumps` wrote, put in as it is."""
    head = _dumps(message)
    payload = f'{head[:-1]},"{key}":{text}}}'.encode("utf-8", "surrogatepass")
    if len(payload) > MAX_FRAME:
        raise FrameTooLargeError(len(payload))
    return HEADER.pack(len(payload)) + payload


def frame_size(header: bytes | bytearray, offset: int = 0) -> int:
    """The payload size announced by the frame header at `offset`."""
    (size,) = HEADER.unpack_from(header, offset)
    if size > MAX_FRAME:
        raise FrameTooLargeError(size)
    return int(size)


def decode(payload: bytes | bytearray, *, max_values: int | None = None) -> dict[str, Any]:
    """The message in a frame's payload; `ProtocolError` for anything but a JSON object with a string 't'.

    With `max_values` (a frame from a worker), a frame of more values than that is refused before it is parsed:
    `[[],[],...]` would take some 28 times its size in memory, `["ab","ab",...]` 12 times, and seconds of the
    host's loop. Values are counted as the lists, objects and commas outside strings.
    """
    if max_values is not None and _pieces(payload) > max_values and _more_outside_strings(payload, max_values):
        raise ProtocolError(f"a frame of more than {max_values:,} values")
    try:
        message = _loads(payload.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as error:  # bad UTF-8, bad JSON, an int too long, nesting too deep
        raise ProtocolError(f"a frame is not valid JSON: {type(error).__name__}") from None
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise ProtocolError("a frame must hold a JSON object with a string 't'")
    return message


def _dumps(message: dict[str, Any]) -> str:
    """`json.dumps(message, separators=(",", ":"), ensure_ascii=False)`, without making an encoder per frame."""
    if _make_encoder is None:  # no C accelerator: the pure-Python encoder, made once
        return _ENCODER.encode(message)
    # What `JSONEncoder.encode` makes per call, minus its Python layers; `{}`: a fresh circular-reference check.
    chunks = _make_encoder({}, _ENCODER.default, _ENCODE_TEXT, None, ":", ",", False, False, True)(message, 0)
    return chunks[0] if len(chunks) == 1 else "".join(chunks)


def _loads(text: str) -> Any:
    """`json.loads(text)`: one scan for a frame that is one JSON value and nothing else, the full decoder otherwise."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:  # no value at the start (whitespace, a byte-order mark, bad JSON): the decoder says why
        return json.loads(text)
    if end != len(text):  # whitespace or more data after the value: likewise
        return json.loads(text)
    return value


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_make_encoder: Callable[..., Callable[[object, int], list[str]]] | None
_make_encoder = json.encoder.c_make_encoder  # type: ignore[attr-defined]  # the C accelerator, absent from the stubs
_ENCODE_TEXT = json.encoder.encode_basestring
_scan: Callable[[str, int], tuple[Any, int]]
_scan = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]  # what `json.loads` scans with


def _pieces(text: bytes | bytearray) -> int:
    return text.count(b"[") + text.count(b"{") + text.count(b",")


def _more_outside_strings(payload: bytes | bytearray, most: int) -> bool:
    """Whether the JSON text has more than `most` lists, objects and commas outside its strings.

    A slice at a time (never cut after a backslash, so no escape is split), so it takes little memory.
    """
    pieces, inside, start, size = 0, False, 0, len(payload)
    while start < size:
        end = min(start + _SLICE, size)
        while end < size and payload[end - 1] == 0x5C:
            end += 1
        text = bytes(payload[start:end])
        if b"\\" in text:  # no quote left is escaped, and a backslash outside a string is bad JSON anyway
            text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
        parts = text.split(b'"')
        pieces += _pieces(b"".join(parts[1 if inside else 0 :: 2]))
        if pieces > most:
            return True
        inside ^= len(parts) % 2 == 0
        start = end
    return False


_SLICE = 1 << 16
