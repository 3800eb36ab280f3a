"""The host's ends of one worker's two pipes: frames read and written directly, never blocking the event loop.

Apart from the run process (`sandbox._host.process`) and a run's conversation with it (`sandbox._host.conversation`)
because it knows only bytes and frames: every frame of one read is parsed in one go, and what a full pipe cannot
take yet waits, in order, for one drainer at a time.
"""

from __future__ import annotations

import os
from typing import Any

import anyio

from sandbox._shared.frames import HEADER, decode, encode, frame_size
from sandbox.jsonvalue import MAX_NODES

_READ_SIZE = 1 << 16
MAX_VALUES = 2 * MAX_NODES + 1000
"""Values in one frame from a worker, counted before it is parsed: a call's arguments and its keywords are each at
most `MAX_NODES` values (as is a run's value), and the frame's own fields a few more."""
MAX_UNREAD = 16 * 1024 * 1024
"""Bytes of replies a worker has not read yet past which the host takes in no more of its frames (replies to
calls already taken still go out), so a worker that never reads cannot make the host hold every reply."""


class FramePipe:
    """The host's non-blocking ends of a worker's stdin and stdout, read and written as protocol frames."""

    def __init__(self, *, to_worker: int, from_worker: int) -> None:
        self._to_worker = to_worker
        self._from_worker = from_worker
        self._pipes: tuple[int, ...] = (to_worker, from_worker)
        """The descriptors still open."""
        self._inbox = bytearray()
        """Bytes read from the worker that do not make a whole frame yet."""
        self.unwritten = bytearray()
        """Bytes for the worker its pipe has not taken yet: they go before anything written later."""
        self.drain_lock = anyio.Lock(fast_acquire=True)  # one task at a time waits for room in the pipe
        self.last_size = 0
        """Bytes of the last frame read."""

    async def receive(self) -> dict[str, Any]:
        """The next frame from the worker; waits on the pipe only when no whole frame has been read yet."""
        while (message := self.buffered()) is None:
            await self.fill()
        return message

    async def fill(self) -> None:
        """Wait until the worker has written, and read what it wrote."""
        await anyio.wait_readable(self._from_worker)
        self.read_now()

    def read_now(self) -> None:
        """Read what the worker has written so far, without waiting; `EndOfStream` once it has closed its end."""
        try:
            data = os.read(self._from_worker, _READ_SIZE)
        except BlockingIOError:
            return
        if not data:
            raise anyio.EndOfStream
        self._inbox += data

    def buffered(self) -> dict[str, Any] | None:
        """The next whole frame already read from the worker, or None."""
        inbox = self._inbox
        if len(inbox) < HEADER.size:
            return None
        end = HEADER.size + frame_size(inbox[: HEADER.size])
        if len(inbox) < end:
            return None
        size = end - HEADER.size  # each value counted takes a byte at least: a shorter frame needs no count
        message = decode(inbox[HEADER.size : end], max_values=MAX_VALUES if size > MAX_VALUES else None)
        del inbox[:end]
        self.last_size = size
        return message

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the worker."""
        await self.send_frame(encode(message))

    async def send_frame(self, frame: bytes) -> None:
        """One encoded frame to the worker, never interleaved with another; waits only while the pipe is full."""
        self.write(frame)
        await self.drain()

    def write(self, data: bytes) -> None:
        """Write what the pipe takes now, after anything still waiting; the rest waits in `unwritten` (no await)."""
        if not self.unwritten:
            try:
                written = os.write(self._to_worker, data)
            except BlockingIOError:
                written = 0
            if written == len(data):
                return
            data = data[written:]
        self.unwritten += data

    async def drain(self) -> None:
        """Write what is waiting in `unwritten`, as the pipe takes it (one drainer at a time)."""
        if not self.unwritten:
            return
        async with self.drain_lock:
            while self.unwritten:
                await anyio.wait_writable(self._to_worker)
                try:
                    written = os.write(self._to_worker, self.unwritten)
                except BlockingIOError:
                    continue
                del self.unwritten[:written]

    def close(self) -> None:
        """Close the host's ends of the pipes (once); a task waiting on one wakes with `ClosedResourceError`."""
        pipes, self._pipes = self._pipes, ()
        for fd in pipes:
            anyio.notify_closing(fd)
            os.close(fd)
        self.unwritten.clear()
