"""WebSocket text frames, serialised once for every spectator of a match (and for a bot's
messages written straight to its connection, server/ws/session.py)."""

from __future__ import annotations

import struct
from collections.abc import Iterable

#: FIN set, opcode 1 (text): every frame here is a whole text message.
_FIN_TEXT = 0x81
_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")


def text_frame(text: str) -> bytes:
    """``text`` as one final, unmasked text frame (what a server sends; RFC 6455 section 5.2).

    The same bytes as ``websockets.frames.Frame(Opcode.TEXT, data).serialize(mask=False)``
    (tests/server/test_frames.py compares them), without building a Frame and checking it for
    every message: a bot's every turn goes out this way."""
    data = text.encode()
    size = len(data)
    if size < 126:
        header = _SHORT.pack(_FIN_TEXT, size)
    elif size < 65536:
        header = _MEDIUM.pack(_FIN_TEXT, 126, size)
    else:
        header = _LONG.pack(_FIN_TEXT, 127, size)
    return header + data


def text_frames(texts: Iterable[str]) -> bytes:
    """Each text as one final, unmasked text frame, concatenated: written in one call, they
    reach the peer as that many messages."""
    return b"".join(map(text_frame, texts))
