"""WebSocket text frames, serialised once for every spectator of a match."""

from __future__ import annotations

from collections.abc import Iterable

from websockets.frames import Frame, Opcode


def text_frames(texts: Iterable[str]) -> bytes:
    """Each text as one final, unmasked text frame (what a server sends), concatenated: written
    in one call, they reach the peer as that many messages."""
    return b"".join(Frame(Opcode.TEXT, text.encode()).serialize(mask=False) for text in texts)
