"""Frames between the host and a worker process: a 4-byte big-endian length, then one JSON object.

Host to worker: `run` (code, limits, function kinds, error names), `result` (a host call's outcome).
Worker to host: `ready`, `call` (a host-function call), `done` (the run's result).
"""

from __future__ import annotations

import json
import struct
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 1024 * 1024


class ProtocolError(Exception):
    """A frame was malformed or too large."""


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding `message`."""
    payload = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(payload) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(payload):,} bytes is over the {MAX_FRAME:,} byte limit")
    return HEADER.pack(len(payload)) + payload


def frame_size(header: bytes) -> int:
    """The payload size announced by a frame header."""
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ProtocolError(f"frame of {size:,} bytes is over the {MAX_FRAME:,} byte limit")
    return int(size)


def decode(payload: bytes) -> dict[str, Any]:
    """The message in a frame's payload."""
    message = json.loads(payload.decode("utf-8", "surrogatepass"))
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise ProtocolError("a frame must hold a JSON object with a string 't'")
    return message
