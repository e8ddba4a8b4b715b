"""A kit older than its server still plays: fields the server added to its messages within the
protocol version are ignored (the bots' own messages stay strict on the server's side)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from ply_arena.protocol.client import read_server_message
from ply_arena.protocol.messages import MatchStart, Ping

START = {
    "type": "match_start",
    "match_id": "m1",
    "game": "tic_tac_toe",
    "seats": [{"seat": 0, "bot": "a"}, {"seat": 1, "bot": "b"}],
    "your_seat": 0,
    "time_control": {"move_ms": 1000, "bank_ms": 0},
    "policy": "forfeit",
    "position": {"board": ["...", "...", "..."], "player": 0},
}


def test_fields_a_newer_server_adds_are_ignored() -> None:
    message = read_server_message(json.dumps({**START, "spectators": 3, "arena": {"x": 1}}))
    assert isinstance(message, MatchStart) and message.match_id == "m1"
    assert isinstance(read_server_message('{"type": "ping", "id": 7, "sent_at": 1}'), Ping)


def test_what_the_kit_cannot_read_is_still_refused() -> None:
    with pytest.raises(ValidationError):
        read_server_message('{"type": "new_kind_of_message"}')  # the kit logs and goes on
    with pytest.raises(ValidationError):
        read_server_message(json.dumps({**START, "your_seat": "zero"}))  # a known field, wrong
    with pytest.raises(ValidationError):
        read_server_message("{not json")
