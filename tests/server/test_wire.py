"""The frames the server really sends are the protocol's models, byte for byte.

The referee builds ``turn`` frames from pre-serialised pieces rather than through the pydantic
model (server/referee/match_runner.py, the hot path). These tests play whole matches over real
WebSockets, keep every raw frame, and check that each one validates against
``ply_arena.protocol.messages.server_message_adapter`` and is exactly what the validated model
serialises back to, so the fast path cannot drift from the schema.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import pytest
import websockets
from conftest import LiveServer

from ply_arena.protocol.messages import server_message_adapter


async def _bot(url: str, token: str) -> websockets.ClientConnection:
    ws = await websockets.connect(url, max_size=None)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token, "client": "wire"}))
    return ws


async def _play(
    ws: websockets.ClientConnection, frames: list[str], rng: random.Random, join: dict[str, object]
) -> None:
    """Join, answer every turn with a random legal move, return after match_end."""
    await ws.send(json.dumps(join))
    while True:
        raw = await asyncio.wait_for(ws.recv(), 30)
        assert isinstance(raw, str)
        frames.append(raw)
        message = json.loads(raw)
        if message["type"] == "ping":
            await ws.send(json.dumps({"type": "pong", "id": message["id"]}))
        elif message["type"] == "turn":
            move = rng.choice(message["legal_moves"])
            reply = {"type": "move", "match_id": message["match_id"], "ply": message["ply"]}
            await ws.send(json.dumps({**reply, "move": move}))
        elif message["type"] == "match_end":
            return


@pytest.mark.parametrize("game", ["tic_tac_toe", "backgammon", "chinese_checkers"])
async def test_every_frame_of_a_real_match_is_its_model_serialised(
    live_server: LiveServer, game: str
) -> None:
    players = 3 if game == "chinese_checkers" else 2
    tokens = [live_server.create_bot()[1] for _ in range(players)]
    frames: list[list[str]] = [[] for _ in tokens]
    sockets = [await _bot(live_server.ws_url, t) for t in tokens]
    join = {"type": "join", "game": game, "time_control": {"move_ms": 5000, "bank_ms": 1000}}
    try:
        await asyncio.gather(
            *(
                _play(ws, f, random.Random(seat), join)
                for seat, (ws, f) in enumerate(zip(sockets, frames, strict=True))
            )
        )
    finally:
        for ws in sockets:
            await ws.close()
    kinds: Counter[str] = Counter()
    since_last_seats: set[int | None] = set()
    for raw in (r for f in frames for r in f):
        message = server_message_adapter.validate_json(raw)
        assert message.model_dump_json() == raw
        kinds[message.type] += 1
        if message.type == "turn":
            since_last_seats.update(e.seat for e in message.since_last)
            assert message.legal_moves and message.deadline_ms >= message.move_ms > 0
    assert kinds["match_start"] == players and kinds["match_end"] == players
    assert kinds["turn"] >= 5
    # Every seat's moves reached the others through since_last (and dice in backgammon).
    expected = set(range(players)) | ({None} if game == "backgammon" else set())
    assert since_last_seats >= expected
