"""The server's own text-frame encoder writes what the websockets library would, byte for byte,
and what the library's parser reads back as the same messages."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from ply_arena.server.spectate.frames import text_frame, text_frames

pytestmark = pytest.mark.timeout(30)

# Around each boundary of the length's encoding (7 bits, 16 bits, 64 bits), and text whose
# UTF-8 form is longer than its characters.
SIZES = [0, 1, 124, 125, 126, 127, 65534, 65535, 65536, 70_000]


@pytest.mark.parametrize("size", SIZES)
def test_a_text_frame_is_the_librarys_bytes(size: int) -> None:
    for text in ("x" * size, "é" * (size // 2) + "x" * (size % 2)):
        expected = Frame(Opcode.TEXT, text.encode()).serialize(mask=False)
        assert text_frame(text) == expected


def test_concatenated_frames_parse_back_as_the_same_messages() -> None:
    texts = ["", "a", "ñ" * 63, "b" * 126, "{}" * 40_000, "c" * 65_536]
    reader = StreamReader()
    reader.feed_data(text_frames(texts))
    reader.feed_eof()
    parsed = []
    for _ in texts:
        parser = Frame.parse(reader.read_exact, mask=False)
        try:
            next(parser)
        except StopIteration as done:
            frame = done.value
        parsed.append(frame)
    assert [(f.fin, f.opcode, f.data.decode()) for f in parsed] == [
        (True, Opcode.TEXT, t) for t in texts
    ]
