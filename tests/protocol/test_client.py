"""The bot kit against a real server (uvicorn on a free port, real SQLite file, real WebSockets)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import pytest

from ply_arena import games
from ply_arena.games import State
from ply_arena.protocol.client import BotClient, BotError, Clock, MatchView
from ply_arena.protocol.messages import MatchEnd, MatchStart, MoveInfo, Ping, Turn

GAME = "tic_tac_toe"


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


def record(server: Any, match_id: str) -> dict[str, Any]:
    response = server.api("GET", f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def test_two_bots_play_lobby_matches_and_every_move_is_stored(live_server: Any) -> None:
    name_a, token_a = live_server.create_bot()
    name_b, token_b = live_server.create_bot()
    seen: list[tuple[State, list[str], Clock]] = []

    def checking_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
        seen.append((state, legal_moves, clock))
        return random.choice(legal_moves)

    a = BotClient(live_server.ws_url, token_a, checking_choose, game=GAME, games=3)
    b = BotClient(live_server.ws_url, token_b, random_choose, game=GAME, games=3)
    results_a, results_b = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 60)

    assert len(results_a) == len(results_b) == 3
    assert {r.match_id for r in results_a} == {r.match_id for r in results_b}
    game = games.get(GAME)
    for state, legal_moves, clock in seen:
        # The kit rebuilt the game's own State and the legal moves are its notation.
        assert legal_moves == [game.format_move(state, m) for m in state.actions()]
        assert clock.move_ms <= 1000 and clock.deadline_ms >= clock.move_ms
        assert 0 < clock.remaining_ms() <= clock.deadline_ms
    for end in results_a:
        assert end.termination.value == "normal"
        stored = record(live_server, end.match_id)
        assert stored["status"] == "finished"
        assert len(stored["moves"]) == end.plies
        assert {s["bot"] for s in stored["seats"]} == {name_a, name_b}


async def test_move_objects_and_info_are_sent(live_server: Any) -> None:
    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()

    expected: list[tuple[str, dict[str, Any]]] = []
    game = games.get(GAME)

    def object_choose(state: State, legal_moves: list[str], clock: Clock) -> Any:
        move = state.actions()[-1]  # a game Move, not text: the kit formats it
        info = MoveInfo(depth=1, nodes=len(legal_moves), pv=[legal_moves[0]], comment="hi")
        expected.append((game.format_move(state, move), info.model_dump(exclude_defaults=True)))
        return move, info

    def dict_choose(state: State, legal_moves: list[str], clock: Clock) -> Any:
        return legal_moves[0], {"depth": 2, "score": float("inf"), "time_ms": 5}

    a = BotClient(live_server.ws_url, token_a, object_choose, game=GAME, games=1)
    b = BotClient(live_server.ws_url, token_b, dict_choose, game=GAME, games=1)
    (end,), _ = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 30)
    assert end.termination.value == "normal"
    moves = record(live_server, end.match_id)["moves"]
    infos = [m["info"] for m in moves]
    assert expected
    assert [(m["move"], m["info"]) for m in moves if m["info"].get("comment") == "hi"] == expected
    # An infinite score cannot travel as JSON: it is put in words; unknown keys are dropped.
    assert any(i and i.get("depth") == 2 and "score=inf" in i.get("comment", "") for i in infos)


async def test_a_reference_agent_plays_through_the_kit(live_server: Any) -> None:
    from ply_arena import reference_agents

    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    made: list[Any] = []

    def factory(game: games.Game) -> Any:
        agent = reference_agents.make("random", game, seed=len(made))
        made.append(agent)
        return agent

    a = BotClient(live_server.ws_url, token_a, agent=factory, game=GAME, games=2)
    b = BotClient(live_server.ws_url, token_b, random_choose, game=GAME, games=2)
    results, _ = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 60)
    assert [r.termination.value for r in results] == ["normal", "normal"]
    assert len(made) == 2  # one fresh agent per match


async def test_several_matches_at_once_on_one_connection(live_server: Any) -> None:
    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    peak = [0]

    class Counting(BotClient):
        async def on_match_start(self, message: MatchStart) -> None:
            await super().on_match_start(message)
            peak[0] = max(peak[0], len(self.matches))

    def slow_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
        time.sleep(0.05)  # long enough for the second match to start meanwhile
        return random.choice(legal_moves)

    a = Counting(live_server.ws_url, token_a, slow_choose, game=GAME, games=4, concurrent=2)
    b = BotClient(live_server.ws_url, token_b, slow_choose, game=GAME, games=4, concurrent=2)
    results, _ = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 60)
    assert len(results) == 4
    assert len({r.match_id for r in results}) == 4
    assert peak[0] == 2


async def test_challenge_and_accept(live_server: Any) -> None:
    name_a, token_a = live_server.create_bot()
    name_b, token_b = live_server.create_bot()
    # b only answers challenges (no game); a challenges it by name, before b is even connected.
    a = BotClient(
        live_server.ws_url, token_a, random_choose, game=GAME, games=2, challenge=[name_b]
    )
    a.retry_s = 0.2
    b = BotClient(live_server.ws_url, token_b, random_choose, games=2, accept_challenges=True)
    task_a = asyncio.create_task(a.run())
    await asyncio.sleep(0.5)  # a's first challenges find nobody connected: it retries
    results_b = await asyncio.wait_for(b.run(), 30)
    results_a = await asyncio.wait_for(task_a, 30)
    assert len(results_a) == 2
    assert [r.match_id for r in results_a] == [r.match_id for r in results_b]
    stored = record(live_server, results_a[0].match_id)
    assert {s["bot"] for s in stored["seats"]} == {name_a, name_b}


async def test_reconnects_and_finishes_the_match(live_server: Any) -> None:
    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    connections = [0]
    dropped = [False]

    class Dropping(BotClient):
        async def on_welcome(self, message: Any) -> None:
            connections[0] += 1
            if connections[0] == 2:
                # After reconnecting, the running match is listed for resync.
                assert list(self.matches) == message.matches
            await super().on_welcome(message)

        async def on_turn(self, message: Turn) -> None:
            if message.ply >= 2 and not dropped[0]:
                dropped[0] = True
                assert self._ws is not None
                await self._ws.close()  # the connection drops in the middle of a turn
                return
            await super().on_turn(message)

    a = Dropping(live_server.ws_url, token_a, random_choose, game=GAME, games=1)
    b = BotClient(live_server.ws_url, token_b, random_choose, game=GAME, games=1)
    (end,), _ = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 30)
    assert dropped[0] and connections[0] == 2
    assert end.termination.value == "normal"
    assert a.lost_track == []


async def test_pings_are_answered_while_choose_blocks(start_server: Any) -> None:
    server = start_server(heartbeat_s=0.1)
    name_a, token_a = server.create_bot()
    _, token_b = server.create_bot()
    pings_while_thinking: list[float] = []
    thinking = threading.Event()
    rtts: list[float | None] = []

    class Watching(BotClient):
        async def on_ping(self, message: Ping) -> None:
            if thinking.is_set():
                pings_while_thinking.append(time.monotonic())
            await super().on_ping(message)

    def blocking_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
        thinking.set()
        time.sleep(0.4)  # a blocking search: the kit runs it in a thread
        conn = server.app.state.referee.connections.by_name(name_a)
        rtts.append(conn.rtt_ms() if conn is not None else None)
        thinking.clear()
        return legal_moves[0]

    a = Watching(server.ws_url, token_a, blocking_choose, game=GAME, games=1)
    b = BotClient(server.ws_url, token_b, random_choose, game=GAME, games=1)
    (end,), _ = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 30)
    assert end.termination.value == "normal"
    assert len(pings_while_thinking) >= 3
    assert rtts and all(r is not None and r < 100 for r in rtts)


async def test_results_hook_and_match_views(live_server: Any) -> None:
    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    ended: list[tuple[MatchView, MatchEnd]] = []

    class Hooked(BotClient):
        def on_result(self, view: MatchView, end: MatchEnd) -> None:
            ended.append((view, end))

    a = Hooked(live_server.ws_url, token_a, random_choose, game=GAME, games=1)
    b = BotClient(live_server.ws_url, token_b, random_choose, game=GAME, games=1)
    await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 30)
    ((view, end),) = ended
    assert view.match_id == end.match_id and view.game.name == GAME
    assert view.start.your_seat in (0, 1)


async def test_bad_token_is_fatal(live_server: Any) -> None:
    client = BotClient(live_server.ws_url, "not-a-token", random_choose, game=GAME)
    with pytest.raises(BotError) as caught:
        await asyncio.wait_for(client.run(), 15)
    assert caught.value.code == "bad_token"


async def test_unknown_game_is_fatal(live_server: Any) -> None:
    _, token = live_server.create_bot()
    client = BotClient(live_server.ws_url, token, random_choose, game="chess")
    with pytest.raises(BotError) as caught:
        await asyncio.wait_for(client.run(), 15)
    assert caught.value.code == "unknown_game"


def test_choose_or_agent_is_required() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        BotClient("ws://127.0.0.1:1/ws", "t")


def _closed_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"ws://127.0.0.1:{port}/ws"  # nothing listens there once the socket is closed


async def test_reconnects_with_exponential_backoff() -> None:
    client = BotClient(
        _closed_port_url(), "t", random_choose, game=GAME, max_backoff_s=0.5,
        first_connect_retries=1000,
    )  # fmt: skip
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(client.run(), 2.0)
    # 0.25, 0.5, 0.5, ... s (with jitter): a handful of attempts in 2 s, not hundreds.
    assert 3 <= client._attempt <= 10


async def test_a_wrong_url_fails_fast() -> None:
    # Nothing listens there: no retry by default, and the error says what a URL looks like.
    client = BotClient(_closed_port_url(), "t", random_choose, game=GAME, max_backoff_s=0.2)
    with pytest.raises(ConnectionError, match="could not log in") as caught:
        await asyncio.wait_for(client.run(), 10.0)
    assert client._attempt == 0 and "1 attempt)" in str(caught.value)
    assert "ws://HOST:PORT/ws" in str(caught.value)

    retrying = BotClient(
        _closed_port_url(), "t", random_choose, game=GAME, max_backoff_s=0.2,
        first_connect_retries=2,
    )  # fmt: skip
    with pytest.raises(ConnectionError, match="3 attempts"):
        await asyncio.wait_for(retrying.run(), 10.0)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/ws", "127.0.0.1:8000", "ws://", "wss://host:port/ws", ""]
)
def test_a_url_that_is_not_a_websocket_url_is_refused_at_once(url: str) -> None:
    with pytest.raises(ValueError, match="use ws://HOST:PORT/ws"):
        BotClient(url, "t", random_choose, game=GAME)


async def test_an_address_that_does_not_answer_the_handshake_fails_at_once(
    live_server: Any,
) -> None:
    # The arena's HTTP port, but not its WebSocket path: the server answers, not with a
    # WebSocket. Retrying cannot help, whatever first_connect_retries says.
    wrong_path = live_server.ws_url.removesuffix("/ws") + "/api/health"
    client = BotClient(wrong_path, "t", random_choose, game=GAME, first_connect_retries=5)
    with pytest.raises(ConnectionError, match="did not answer the WebSocket handshake"):
        await asyncio.wait_for(client.run(), 10.0)
    assert client._attempt == 0

    # A TCP service that is no HTTP server at all.
    async def not_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(not_http, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        client = BotClient(f"ws://127.0.0.1:{port}/ws", "t", random_choose, game=GAME)
        with pytest.raises(ConnectionError, match="did not answer the WebSocket handshake"):
            await asyncio.wait_for(client.run(), 10.0)


async def test_max_retries_gives_up() -> None:
    client = BotClient(
        _closed_port_url(), "t", random_choose, game=GAME, max_backoff_s=0.2, max_retries=2,
        first_connect_retries=1000,
    )  # fmt: skip
    with pytest.raises(ConnectionError, match="gave up after 3 attempts"):
        await asyncio.wait_for(client.run(), 10.0)


async def test_without_reconnect_a_lost_connection_is_an_error() -> None:
    client = BotClient(_closed_port_url(), "t", random_choose, game=GAME, reconnect=False)
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(client.run(), 5.0)


def test_a_pv_of_move_objects_is_sent_in_notation() -> None:
    from ply_arena.protocol.client import _to_move_info

    game = games.get("connect_four")
    start = game.initial_state()
    info, problems = _to_move_info({"pv": [3, 3, 2], "depth": 3}, game, start)
    assert problems == [] and info is not None
    assert info.pv == ["4", "4", "3"] and info.depth == 3  # column indexes, written 1..7
    info, _ = _to_move_info({"pv": ["4", 3]}, game, start)
    assert info is not None and info.pv == ["4", "4"]
    info, problems = _to_move_info({"pv": "4 4 3"}, game, start)
    assert info is None and [key for key, _ in problems] == ["pv"]
