"""One spectator connection: the frames written to it, their bounds, and how its stream ends.

A watcher has no queue and no task of its own. Frames are written straight to its transport
(``TransportHandle.write``): what the kernel takes is gone, what it does not take waits in the
transport's buffer, and that buffer *is* the spectator's queue. It is bounded in bytes (the
buffer's size) and in messages (the messages whose last byte is still in the buffer, counted
from the offsets written), beyond the snapshot every connection starts with. One frame too many
drops the spectator with ``slow_consumer``: whatever it missed, its next connection's
``watch_start`` has.

Writing never waits, so the referee can publish from its hot path: a spectator that stops
reading costs the server its bounded buffer, never time.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Protocol

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import ErrorMessage
from ply_arena.server.spectate.frames import text_frames
from ply_arena.server.spectate.limits import Limits

log = logging.getLogger(__name__)

# WebSocket close codes (RFC 6455).
CLOSE_NORMAL = 1000
CLOSE_POLICY = 1008
CLOSE_RESTART = 1012


class Outlet(Protocol):
    """Where a watcher's frames go (ply_arena.server.transport.TransportHandle)."""

    def write(self, frames: bytes) -> bool:
        """Write whole frames now; False once the connection takes no more data."""

    def write_buffer_size(self) -> int:
        """Bytes written but not yet taken by the kernel."""


class Watcher:
    """One spectator. The hub writes to it (``push``); the connection waits on ``done``, then
    closes with ``close_code`` (None: the peer is gone, nothing to close) and sets
    ``finished``."""

    def __init__(self, outlet: Outlet, limits: Limits, peer: str = "?") -> None:
        self._outlet = outlet
        self._max_frames = limits.queue_frames
        self._max_bytes = limits.queue_bytes
        self.peer = peer
        #: The match watched, once subscribed (None: not yet, or a match that is over).
        self.match_id: str | None = None
        #: Bytes written so far, and (offset just past a write, messages in it) for the writes
        #: not yet wholly taken by the kernel: the messages still waiting.
        self._written = 0
        self._inflight: deque[tuple[int, int]] = deque()
        self._waiting = 0
        self.close_code: int | None = None
        #: Set when the stream is over: after match_end, a drop, a shutdown, or the peer left.
        self.done = asyncio.Event()
        #: Set once the connection is closed (the server's shutdown waits for it).
        self.finished = asyncio.Event()

    @property
    def over(self) -> bool:
        return self.done.is_set()

    def start(self, frames: bytes) -> bool:
        """Write the snapshot every connection begins with. It may be large (every move of a
        long match): the bounds apply to what comes after it."""
        self._max_bytes += len(frames)
        self._max_frames += 1
        return self.push(frames, 1)

    def push(self, frames: bytes, count: int) -> bool:
        """Write ``count`` messages already framed; False when the watcher is over (closed or
        dropped now for falling behind)."""
        if self.done.is_set():
            return False
        outlet = self._outlet
        pending = outlet.write_buffer_size()
        if pending:
            delivered = self._written - pending
            inflight = self._inflight
            while inflight and inflight[0][0] <= delivered:
                self._waiting -= inflight.popleft()[1]
            if pending + len(frames) > self._max_bytes:
                self._drop(f"{pending} bytes are waiting for this spectator to read them")
                return False
            if self._waiting + count > self._max_frames:
                self._drop(f"{self._waiting} messages are waiting for this spectator to read them")
                return False
        elif self._inflight:
            self._inflight.clear()
            self._waiting = 0
        if not outlet.write(frames):
            self.gone()
            return False
        self._written += len(frames)
        if outlet.write_buffer_size():
            self._inflight.append((self._written, count))
            self._waiting += count
        return True

    def finish(self, code: int = CLOSE_NORMAL) -> None:
        """The stream is over (the match ended): close with ``code`` once written."""
        self._end(code)

    def gone(self) -> None:
        """The peer closed the connection or lost it: nothing more to send, nothing to close."""
        self._end(None)

    def fail(self, code: ErrorCode, message: str, close_code: int = CLOSE_POLICY) -> None:
        """End the stream with a fatal coded error (written whatever the bounds: it is small and
        the last), then the close ``close_code``."""
        if self.done.is_set():
            return
        error = ErrorMessage(code=code, message=message, fatal=True, match_id=self.match_id)
        self._outlet.write(text_frames([error.model_dump_json()]))
        self._end(close_code)

    def _drop(self, why: str) -> None:
        log.info(
            "dropping spectator %s of match %s: slow_consumer (%s)", self.peer, self.match_id, why
        )
        self.fail(
            ErrorCode.slow_consumer,
            f"{why}; read the stream as it arrives (reconnect to resync: the first message is "
            "always the match as it stands)",
        )

    def _end(self, code: int | None) -> None:
        if not self.done.is_set():
            self.close_code = code
            self.done.set()
