"""End to end: reference agents, as remote bots over real WebSockets, play complete matches of
every registered game (three bots in Chinese checkers, server dice in backgammon) against a real
uvicorn server and SQLite file; every bot checks each turn against its own copy of the game, and
every stored match re-derives to its stored result."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _ws_client import Message, WsBot, rederive, stored_records
from conftest import LiveServer

from ply_arena import games, reference_agents
from ply_arena.games import CHANCE


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


def apply_text(game: games.Game, state: games.State, text: str) -> games.State:
    if state.player == CHANCE:
        by_text = {game.format_move(state, o): o for o in state.actions()}
        return state.result(by_text[text])
    return state.result(game.parse_move(state, text))


async def agent_plays(
    bot: WsBot, agent_name: str, seed: int, options: dict[str, Any] | None = None
) -> tuple[Message, Message, int]:
    """Play one match with a reference agent: (match_start, match_end, turns answered).

    The bot keeps its own position from ``match_start`` and each turn's ``since_last`` and checks
    it against the position the server sends: the relay of moves and dice is then exact.
    """
    start = await bot.expect("match_start", timeout=30)
    game = games.get(start["game"])
    agent_options = dict(options or {})
    if agent_name == "random":
        agent_options["seed"] = seed
    agent = reference_agents.make(agent_name, game, **agent_options)
    state = game.state_from_json(start["position"])
    assert state == game.initial_state()
    turns = 0
    while True:
        message = await bot.recv(30)
        if message.get("match_id") != start["match_id"]:
            continue
        if message["type"] == "match_end":
            return start, message, turns
        assert message["type"] == "turn", message
        for played in message["since_last"]:
            state = apply_text(game, state, played["move"])
        assert game.state_to_json(state) == message["position"]
        assert state.player == start["your_seat"]
        assert sorted(message["legal_moves"]) == sorted(
            game.format_move(state, m) for m in state.actions()
        )
        move, info = agent.choose(state, time_limit=0.02)
        text = game.format_move(state, move)
        await bot.send(
            {
                "type": "move",
                "match_id": start["match_id"],
                "ply": message["ply"],
                "move": text,
                "info": {"depth": info.depth, "nodes": info.nodes, "comment": agent_name},
            }
        )
        state = state.result(move)
        turns += 1


@pytest.mark.slow
@pytest.mark.parametrize("game_name", games.names())
async def test_reference_agents_play_every_game(live_server: LiveServer, game_name: str) -> None:
    game = games.get(game_name)
    n = game.num_players
    tokens = [live_server.create_bot()[1] for _ in range(n)]
    bots = [await WsBot.connect(live_server.ws_url, t) for t in tokens]
    join = {"type": "join", "game": game_name, "time_control": {"move_ms": 500, "bank_ms": 2000}}
    for i, bot in enumerate(bots):
        await bot.send(join)
        joined = await bot.expect("joined")
        # Nobody starts until the table is full (three bots for Chinese checkers).
        assert joined["waiting"] == (i + 1 if i + 1 < n else n)
    results = await asyncio.gather(
        *(agent_plays(bot, "random", seed=i) for i, bot in enumerate(bots))
    )
    ends = [end for _, end, _ in results]
    assert all(end == ends[0] for end in ends)
    end = ends[0]
    assert end["termination"] in ("normal", "move_limit"), end
    assert len(end["payoffs"]) == n
    if game.constant_sum is not None:
        assert sum(end["payoffs"]) == pytest.approx(game.constant_sum)
    assert sum(turns for _, _, turns in results) <= end["plies"]
    assert sorted(start["your_seat"] for start, _, _ in results) == list(range(n))

    mid = ends[0]["match_id"]
    response = live_server.api("GET", f"/api/matches/{mid}")
    assert response.status_code == 200
    record = response.json()
    rederive(record)
    assert record["status"] == "finished" and record["seed"] is not None
    assert len(record["moves"]) == end["plies"]
    seat_moves = [m for m in record["moves"] if m["seat"] is not None]
    assert all(m["info"]["comment"] == "random" for m in seat_moves)
    assert all(m["think_ms"] is not None and m["think_ms"] >= 0 for m in seat_moves)
    chance = [m for m in record["moves"] if m["seat"] is None]
    assert bool(chance) == game.has_chance  # the server rolled backgammon's dice itself
    assert live_server.api("GET", f"/api/matches/{mid}/replay").status_code == 200
    for stored in await stored_records(live_server.db_url):
        rederive(stored)


async def test_search_agent_against_random(live_server: LiveServer) -> None:
    """A real search agent (alpha-beta) as a remote bot, two matches with seats swapped."""
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a = await WsBot.connect(live_server.ws_url, ta)
    b = await WsBot.connect(live_server.ws_url, tb)
    join = {"type": "join", "game": "connect_four", "time_control": {"move_ms": 400}}
    for _ in range(2):
        await a.send(join)
        await b.send(join)
        (_, end, _), _ = await asyncio.gather(
            agent_plays(a, "alphabeta", 0, {"depth": 3}), agent_plays(b, "random", 1)
        )
        assert end["termination"] == "normal"
        rederive(live_server.api("GET", f"/api/matches/{end['match_id']}").json())
    seats = [m["your_seat"] for m in a.log if m["type"] == "match_start"]
    assert sorted(seats) == [0, 1]
