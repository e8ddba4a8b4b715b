"""The match runner over real sockets: clocks, both policies, resign, reconnection, several
matches on one connection and shutdown; plus the clock and payoff arithmetic on its own."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from _ws_client import Message, WsBot, rederive, start_pair, stored_records
from conftest import LiveServer

from ply_arena import games
from ply_arena.protocol.messages import MakeMove, Policy, TimeControl
from ply_arena.protocol.outcomes import drawn_payoffs, forfeit_payoffs
from ply_arena.server.db.database import Database
from ply_arena.server.referee.clock import SeatClock, latency_grace_ms
from ply_arena.server.referee.connections import ConnectionRegistry
from ply_arena.server.referee.match_runner import MatchRunner, SeatBot
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


def record(srv: LiveServer, match_id: str) -> Message:
    response = srv.api("GET", f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    data = response.json()
    rederive(data)
    return data


# --- arithmetic ---------------------------------------------------------------------------


def test_clock_charges_the_bank_after_grace() -> None:
    clock = SeatClock(move_ms=100, bank_ms=300)
    assert clock.allowance_ms(50) == 450
    assert clock.charge(140, grace_ms=50) and clock.bank_ms == 300  # 90 effective: within limit
    assert clock.charge(250, grace_ms=50) and clock.bank_ms == 200  # 100 from the bank
    assert not clock.charge(400, grace_ms=0) and clock.bank_ms == 0  # 300 over, 200 left
    assert latency_grace_ms(None, 200) == 200  # not measured yet: the cap
    assert latency_grace_ms(35.5, 200) == 35.5
    assert latency_grace_ms(900, 200) == 200  # a slow (or lying) pong gains at most the cap


def test_payoffs_for_faults_keep_the_constant_sum() -> None:
    ttt, cc, bg = games.get("tic_tac_toe"), games.get("chinese_checkers"), games.get("backgammon")
    assert forfeit_payoffs(ttt, 0) == [-1.0, 1.0]
    assert forfeit_payoffs(cc, 2) == [0.5, 0.5, -1.0]
    assert forfeit_payoffs(bg, 1) == [bg.max_utility, bg.min_utility]
    assert drawn_payoffs(cc) == [0.0, 0.0, 0.0]


# --- time ---------------------------------------------------------------------------------


async def test_timeout_forfeits(live_server: LiveServer) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, move_ms=200, bank_ms=100)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    turn = await first.expect("turn", match_id=mid)
    assert (turn["move_ms"], turn["deadline_ms"], turn["clocks_ms"]) == (200, 300, [100, 100])
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    end = await first.expect("match_end", match_id=mid)  # silence: 200 + 100 + grace <= 200
    assert 0.25 <= loop.time() - t0 < 1.5  # t0 is a little after the server's clock started
    assert (end["termination"], end["at_fault"], end["payoffs"]) == ("timeout", 0, [-1.0, 1.0])
    assert await second.expect("match_end", match_id=mid) == end
    stored = record(live_server, mid)
    assert stored["moves"] == [] and stored["result"]["termination"] == "timeout"
    assert stored["seed"] is not None


async def test_bank_is_spent_then_timeout_under_random_move(live_server: LiveServer) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(
        live_server.ws_url, ta, tb, move_ms=100, bank_ms=1000, policy="random_move"
    )
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    # Seat 0 thinks ~250 ms on its first move: about 150 ms (less the grace) comes off its bank.
    turn = await first.expect("turn", match_id=mid)
    await asyncio.sleep(0.25)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": turn["legal_moves"][0]})
    turn = await second.expect("turn", match_id=mid)
    # (Only "partly spent": on a loaded machine the 250 ms sleep may take noticeably longer.)
    assert 0 < turn["clocks_ms"][0] < 1000 and turn["clocks_ms"][1] == 1000
    await second.send({"type": "move", "match_id": mid, "ply": 1, "move": turn["legal_moves"][0]})
    # Now seat 0 falls silent: the server moves for it each time, and the game still ends.
    forced = await first.expect("forced_move", match_id=mid, timeout=3)
    assert forced["ply"] == 2 and forced["reason"] == "timeout"
    turn = await first.expect("turn", match_id=mid)
    assert turn["clocks_ms"][0] == 0  # a flagged seat keeps only the per-move limit
    end, _ = await asyncio.gather(
        first.expect("match_end", match_id=mid, timeout=10), second.play(mid)
    )
    assert end["termination"] == "normal"
    stored = record(live_server, mid)
    seat0 = [m for m in stored["moves"] if m["seat"] == 0]
    assert seat0[0]["forced"] is None and 240 <= seat0[0]["think_ms"] < 1100
    assert all(m["forced"] == "timeout" for m in seat0[1:])
    forced_msgs = [m for m in first.log if m["type"] == "forced_move"]
    assert [f["move"] for f in forced_msgs] == [m["move"] for m in seat0[1:]]


# --- illegal moves and resignation ------------------------------------------------------


@pytest.mark.parametrize(("move", "code"), [("b2", "illegal_move"), ("zz", "invalid_move")])
async def test_bad_move_forfeits(live_server: LiveServer, move: str, code: str) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    await first.expect("turn", match_id=mid)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": "b2"})
    turn = await second.expect("turn", match_id=mid)
    await second.send({"type": "move", "match_id": mid, "ply": turn["ply"], "move": move})
    error = await second.expect_error(code)
    assert error["match_id"] == mid and error["fatal"] is False
    if code == "illegal_move":
        assert "a3" in error["message"]  # the legal moves are listed
    end = await second.expect("match_end", match_id=mid)
    assert (end["termination"], end["at_fault"], end["payoffs"]) == (
        "illegal_move",
        1,
        [1.0, -1.0],
    )
    stored = record(live_server, mid)
    assert [m["move"] for m in stored["moves"]] == ["b2"]  # the rejected move is not stored
    await second.send({"type": "ping", "id": 1})  # the connection survives the forfeit
    await second.expect("pong", id=1)


async def test_resign_ends_the_match_at_once(live_server: LiveServer) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, move_ms=2000)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    await first.expect("turn", match_id=mid)
    await second.send({"type": "resign", "match_id": mid})  # not even its turn
    end = await first.expect("match_end", match_id=mid, timeout=1)
    assert (end["termination"], end["at_fault"], end["payoffs"]) == ("resign", 1, [1.0, -1.0])
    record(live_server, mid)
    await second.send({"type": "resign", "match_id": mid})
    await second.expect_error("unknown_match")


# --- reconnection -------------------------------------------------------------------------


async def test_dropped_bot_reconnects_and_finishes(live_server: LiveServer) -> None:
    name_a, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, move_ms=1500)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    token_first = ta if first is a else tb
    await first.expect("turn", match_id=mid)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": "a1"})
    turn = await second.expect("turn", match_id=mid)
    reply = turn["legal_moves"][0]
    await second.send({"type": "move", "match_id": mid, "ply": 1, "move": reply})
    await first.expect("turn", match_id=mid, ply=2)
    await first.close()  # drops while on move; its clock keeps running
    await asyncio.sleep(0.3)  # away a while (the time away is the scenario: nothing waits on it)

    back = await WsBot.connect(live_server.ws_url, token_first)
    assert back.welcome is not None and back.welcome["matches"] == [mid]
    start = await back.expect("match_start", match_id=mid)
    assert start["your_seat"] == 0 and start["seats"] == sa["seats"]
    # The resent match_start is the match as it stands: current position, every move so far.
    assert start["ply"] == 2
    assert start["moves"] == [
        {"ply": 0, "seat": 0, "move": "a1"},
        {"ply": 1, "seat": 1, "move": reply},
    ]
    turn = await back.expect("turn", match_id=mid)
    assert start["position"] == turn["position"] != sa["position"]
    assert turn["ply"] == 2 and turn["position"]["board"][2][0] == "X"
    assert turn["since_last"] == [{"ply": 1, "seat": 1, "move": reply}]
    assert 0 < turn["deadline_ms"] <= 1500 - 250  # the time away was spent
    assert turn["deadline_ms"] == turn["move_ms"] + turn["clocks_ms"][0]
    await back.send({"type": "move", "match_id": mid, "ply": 2, "move": turn["legal_moves"][0]})
    end, _ = await asyncio.gather(back.play(mid), second.play(mid))
    assert end["termination"] == "normal"
    stored = record(live_server, mid)
    assert stored["moves"][0]["move"] == "a1" and len(stored["moves"]) == end["plies"]
    assert name_a in [s["bot"] for s in stored["seats"]]


async def test_reconnect_while_the_other_seat_thinks_gives_the_current_position(
    live_server: LiveServer,
) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, move_ms=3000)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    token_second = tb if second is b else ta
    await first.expect("turn", match_id=mid)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": "b2"})
    await second.expect("turn", match_id=mid)
    await second.send({"type": "move", "match_id": mid, "ply": 1, "move": "a1"})
    await first.expect("turn", match_id=mid, ply=2)
    await second.close()
    back = await WsBot.connect(live_server.ws_url, token_second)
    start = await back.expect("match_start", match_id=mid)
    assert start["ply"] == 2 and [m["move"] for m in start["moves"]] == ["b2", "a1"]
    assert start["position"] == {"board": ["...", ".X.", "O.."], "player": 0}
    # Not on move: no turn until the other seat has moved.
    await first.send({"type": "move", "match_id": mid, "ply": 2, "move": "c3"})
    turn = await back.expect("turn", match_id=mid)
    assert turn["ply"] == 3 and turn["since_last"] == [{"ply": 2, "seat": 0, "move": "c3"}]
    assert not [m for m in back.log if m["type"] == "turn" and m["ply"] < 3]
    await back.send({"type": "resign", "match_id": mid})
    await first.expect("match_end", match_id=mid)


async def test_resync_reports_what_is_left_of_both_clocks(live_server: LiveServer) -> None:
    """Away longer than move_ms: the resent turn has no move time left, the bank is reduced by
    the overrun, and deadline_ms = move_ms + own bank, as docs/protocol.md says."""
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, move_ms=200, bank_ms=5000)
    mid = sa["match_id"]
    first = a if sa["your_seat"] == 0 else b
    token_first = ta if first is a else tb
    loop = asyncio.get_running_loop()
    fresh = await first.expect("turn", match_id=mid)
    sent_at = loop.time()
    assert (fresh["move_ms"], fresh["clocks_ms"], fresh["deadline_ms"]) == (200, [5000, 5000], 5200)
    await first.close()
    await asyncio.sleep(0.5)
    back = await WsBot.connect(live_server.ws_url, token_first)
    turn = await back.expect("turn", match_id=mid)
    away_ms = (loop.time() - sent_at) * 1000
    assert turn["ply"] == 0 and turn["move_ms"] == 0
    assert turn["clocks_ms"][1] == 5000
    overrun = 5000 - turn["clocks_ms"][0]
    assert 300 - 50 <= overrun <= away_ms - 200 + 50
    assert turn["deadline_ms"] == turn["clocks_ms"][0]
    await back.send({"type": "move", "match_id": mid, "ply": 0, "move": "b2"})
    await b.expect("turn", match_id=mid) if first is a else await a.expect("turn", match_id=mid)


async def test_reconnect_between_turns_gets_no_turn(live_server: LiveServer) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, move_ms=1500)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    token_second = tb if second is b else ta
    await second.close()
    await first.expect("turn", match_id=mid)
    back = await WsBot.connect(live_server.ws_url, token_second)
    await back.expect("match_start", match_id=mid)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": "b2"})
    turn = await back.expect("turn", match_id=mid)
    assert turn["ply"] == 1  # the first turn it gets is the real one, with the move since
    assert turn["since_last"] == [{"ply": 0, "seat": 0, "move": "b2"}]
    await back.send({"type": "move", "match_id": mid, "ply": 1, "move": "a1"})
    end, _ = await asyncio.gather(first.play(mid), back.play(mid))
    assert end["termination"] == "normal"
    record(live_server, mid)


async def test_out_of_time_while_away_is_disconnect(live_server: LiveServer) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(
        live_server.ws_url, ta, tb, move_ms=200, bank_ms=100, policy="random_move"
    )
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    await first.expect("turn", match_id=mid)
    await first.close()
    end = await second.expect("match_end", match_id=mid, timeout=3)
    # Even under random_move: a bot that is gone cannot be played for.
    assert (end["termination"], end["at_fault"], end["payoffs"]) == ("disconnect", 0, [-1.0, 1.0])
    assert record(live_server, mid)["result"]["termination"] == "disconnect"


# --- several matches, shutdown -----------------------------------------------------------


async def test_one_connection_plays_several_matches(live_server: LiveServer) -> None:
    hub_name, hub_token = live_server.create_bot()
    rivals = [live_server.create_bot() for _ in range(3)]
    hub = await WsBot.connect(live_server.ws_url, hub_token)
    others = [await WsBot.connect(live_server.ws_url, t) for _, t in rivals]
    for name, _ in rivals:
        await hub.send({"type": "challenge", "game": "connect_four", "opponents": [name]})
        await hub.expect("challenge_sent")
    for bot in others:
        received = await bot.expect("challenge_received")
        assert received["challenger"] == hub_name
        await bot.send({"type": "accept", "challenge_id": received["challenge_id"]})
    starts = [await bot.expect("match_start") for bot in others]
    ids = [s["match_id"] for s in starts]
    assert len(set(ids)) == 3

    async def hub_plays() -> list[Message]:
        ends: dict[str, Message] = {}
        while len(ends) < 3:
            message = await hub.recv(20)
            if message["type"] == "turn":
                await hub.send(
                    {
                        "type": "move",
                        "match_id": message["match_id"],
                        "ply": message["ply"],
                        "move": message["legal_moves"][0],
                    }
                )
            elif message["type"] == "match_end":
                ends[message["match_id"]] = message
        return [ends[i] for i in ids]

    hub_ends, *rival_ends = await asyncio.gather(
        hub_plays(), *(bot.play(i) for bot, i in zip(others, ids, strict=True))
    )
    assert isinstance(hub_ends, list)
    assert [e["termination"] for e in hub_ends] == ["normal"] * 3
    assert hub_ends == rival_ends
    for i in ids:
        record(live_server, i)


async def test_a_shutdown_leaves_matches_to_resume_and_the_bots_play_them_on(
    start_server: Callable[..., LiveServer],
) -> None:
    """A shutdown (Ctrl+C, SIGTERM, a container stop) stops every match where it stands: no
    match_end, the fatal shutting_down and close code 1012 (reason: the code); the next server
    on the database resumes it, each bot that logs in again gets match_start with the moves so
    far, and the next turn waits until every bot is back, with the clocks as they were."""
    srv = start_server()
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a, b, sa, _ = await start_pair(srv.ws_url, ta, tb, move_ms=5000, bank_ms=3000)
    mid = sa["match_id"]
    mover = a if sa["your_seat"] == 0 else b
    turn = await mover.expect("turn", match_id=mid)
    await mover.send({"type": "move", "match_id": mid, "ply": 0, "move": turn["legal_moves"][0]})
    other = b if mover is a else a
    await other.expect("turn", match_id=mid, ply=1)
    await asyncio.to_thread(srv.stop)
    (stored,) = [r for r in await stored_records(srv.db_url) if r["id"] == mid]
    assert stored["status"] == "running" and stored["plies"] == 1
    for bot in (a, b):
        assert await bot.expect_closed() == 1012
        assert bot.ws.close_reason == "shutting_down"
        assert not any(m["type"] == "match_end" for m in bot.log)
        error = bot.log[-1]
        assert (error["type"], error["code"], error["fatal"]) == ("error", "shutting_down", True)
        assert "resume" in error["message"]

    token_of = {id(a): ta, id(b): tb}
    srv = start_server(resume_wait_s=60)
    back = await WsBot.connect(srv.ws_url, token_of[id(other)])
    again = await back.expect("match_start", match_id=mid)
    assert again["ply"] == 1 and [m["ply"] for m in again["moves"]] == [0]
    # Its turn is not out while the other bot is away (the wait allows 60 s).
    early = {"type": "move", "match_id": mid, "ply": 1, "move": turn["legal_moves"][1]}
    await back.send(early)
    assert "wait for a turn" in (await back.expect_error("not_your_turn"))["message"]
    first = await WsBot.connect(srv.ws_url, token_of[id(mover)])
    await first.expect("match_start", match_id=mid)
    resumed_turn = await back.expect("turn", match_id=mid, ply=1)
    # Sent once both are back, with the whole move and the bank as it was.
    assert resumed_turn["move_ms"] == 5000 and resumed_turn["deadline_ms"] == 8000
    await back.send({**early, "move": resumed_turn["legal_moves"][0]})
    ends = await asyncio.gather(first.play(mid), back.play(mid))
    assert {e["termination"] for e in ends} == {"normal"}
    record = srv.api("GET", f"/api/matches/{mid}").json()
    assert record["status"] == "finished" and [r["ply"] for r in record["resumed"]] == [1]
    await back.close()
    await first.close()


@pytest.mark.parametrize(("cap_ms", "termination"), [(1000, "normal"), (0, "timeout")])
async def test_latency_grace_is_capped(
    start_server: Callable[..., LiveServer], cap_ms: int, termination: str
) -> None:
    """A bot that never answers pings gets the cap as its grace: 250 ms on a 100 ms limit with
    no bank passes under a 1000 ms cap and times out under a zero cap. (The cap is large so
    that a loaded machine, slow to wake the sleeping bot, still gets the same answer.)"""
    srv = start_server(max_latency_grace_ms=cap_ms)
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a = await WsBot.connect(srv.ws_url, ta, answer_pings=False)
    b = await WsBot.connect(srv.ws_url, tb, answer_pings=False)
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 100}}
    await a.send(join)
    await b.send(join)
    starts = [await a.expect("match_start"), await b.expect("match_start")]
    mid = starts[0]["match_id"]
    first = a if starts[0]["your_seat"] == 0 else b

    async def slow(turn: Message) -> str:
        await asyncio.sleep(0.25)
        return str(turn["legal_moves"][0])

    turn = await first.expect("turn", match_id=mid)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": await slow(turn)})
    end = await first.expect("match_end", match_id=mid) if termination == "timeout" else None
    if end is not None:
        assert (end["termination"], end["at_fault"]) == ("timeout", 0)
        assert record(srv, mid)["moves"] == []
    else:
        second = b if first is a else a
        turn = await second.expect("turn", match_id=mid)
        assert turn["clocks_ms"] == [0, 0]
        await second.send({"type": "resign", "match_id": mid})
        await first.expect("match_end", match_id=mid)
        (move,) = record(srv, mid)["moves"]
        assert move["forced"] is None and 250 <= move["think_ms"] < 1100


# --- shutdown while a result is being stored ----------------------------------------------


class _InProcessBot:
    """A BotConnection living in the test's loop: plays the scripted moves, keeps what it got."""

    def __init__(self, bot_id: int, name: str, moves: list[str]) -> None:
        self.bot_id, self.bot_name, self.moves = bot_id, name, moves
        self.runner: Any = None
        self.got: list[dict[str, Any]] = []

    def send(self, message: Any) -> None:
        self.send_json(message.model_dump_json())

    def send_json(self, text: str) -> None:
        message = json.loads(text)
        self.got.append(message)
        if message["type"] == "turn":
            move = MakeMove(
                match_id=message["match_id"], ply=message["ply"], move=self.moves.pop(0)
            )
            received_at = self.received_at(message)
            asyncio.get_running_loop().call_soon(self.runner.submit, self.bot_id, move, received_at)

    def received_at(self, turn: dict[str, Any]) -> float:
        """When the server would have read this bot's answer to ``turn``: now."""
        return time.monotonic()

    def rtt_ms(self) -> float | None:
        return 1.0

    def close_with(self, error: Any) -> None:
        self.got.append(error.model_dump())


def in_process_runner(
    database: Database, match_id: str, bots: list[_InProcessBot], *, move_ms: int, bank_ms: int
) -> MatchRunner:
    """A tic-tac-toe match between in-process bots, on the test's database (not started)."""
    registry = ConnectionRegistry()
    for bot in bots:
        registry.register(bot)
    runner = MatchRunner(
        match_id=match_id,
        game=games.get("tic_tac_toe"),
        seats=[SeatBot(bot.bot_id, bot.bot_name) for bot in bots],
        time_control=TimeControl(move_ms=move_ms, bank_ms=bank_ms),
        policy=Policy.forfeit,
        database=database,
        connections=registry,
        max_latency_grace_ms=200,
    )
    for bot in bots:
        bot.runner = runner
    return runner


async def test_a_shutdown_while_the_result_is_stored_still_tells_the_bots(
    database: Database,
) -> None:
    """The match ends, its result is being committed, and the shutdown cancels the runner right
    then: the result is stored as it was and both bots still get their match_end."""
    async with database.session() as session:
        a, _ = await bot_repo.create_bot(session, "shut_a")
        b, _ = await bot_repo.create_bot(session, "shut_b")
        ids = (a.id, b.id)
    bots = [
        _InProcessBot(ids[0], "shut_a", ["a1", "a2", "a3"]),  # X wins on the a-file
        _InProcessBot(ids[1], "shut_b", ["b1", "b2"]),
    ]
    runner = in_process_runner(database, "shutdownrace", bots, move_ms=5000, bank_ms=0)
    task = asyncio.create_task(runner.run())
    while not runner.finished:  # the last move is in: the result write has begun
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for bot in bots:
        end = bot.got[-1]
        assert (end["type"], end["termination"], end["payoffs"]) == (
            "match_end",
            "normal",
            [1.0, -1.0],
        )
    async with database.session() as session:
        stored = await match_repo.get_match(session, "shutdownrace")
    assert stored is not None and stored["status"] == "finished"
    assert stored["result"]["termination"] == "normal"


async def test_a_move_that_crosses_a_match_ending_is_dropped_without_unknown_match(
    live_server: LiveServer,
) -> None:
    # While a match's result is being stored (a shutdown's abort, a last move), its match_end
    # is on its way: a move or resign crossing it must not tell the bot "unknown_match" first
    # (the kit would forget the match, and miscount its games when match_end comes).
    from types import SimpleNamespace

    from ply_arena.protocol.messages import Resign
    from ply_arena.server.referee import RefereeError

    referee = live_server.app.state.referee
    ending = SimpleNamespace(finished=True, result=None)
    referee.matches["ending"] = ending
    conn = SimpleNamespace(bot_id=1, bot_name="x")
    try:
        referee.move(conn, MakeMove(match_id="ending", ply=0, move="a1"), time.monotonic())
        referee.resign(conn, Resign(match_id="ending"))
        ending.result = object()  # told: from now on the match is simply over
        with pytest.raises(RefereeError) as over:
            referee.move(conn, MakeMove(match_id="ending", ply=0, move="a1"), time.monotonic())
        assert over.value.code == "unknown_match"
    finally:
        del referee.matches["ending"]


class _LateStampedBot(_InProcessBot):
    """Answers at once, but its frames carry a receipt time past the turn's whole allowance:
    what the runner sees when the event loop was held up past a deadline and the move's frame
    is handled before the timer that would have flagged the seat."""

    def received_at(self, turn: dict[str, Any]) -> float:
        return time.monotonic() + (turn["deadline_ms"] + 1000) / 1000


async def test_a_move_received_after_its_deadline_loses_on_time(database: Database) -> None:
    async with database.session() as session:
        a, _ = await bot_repo.create_bot(session, "late_a")
        b, _ = await bot_repo.create_bot(session, "late_b")
    bots = [_LateStampedBot(a.id, "late_a", ["b2"]), _InProcessBot(b.id, "late_b", ["a1"])]
    runner = in_process_runner(database, "latestamp", bots, move_ms=1000, bank_ms=500)
    await asyncio.wait_for(runner.run(), 30)
    end = bots[0].got[-1]
    assert (end["type"], end["termination"], end["at_fault"]) == ("match_end", "timeout", 0)
    async with database.session() as session:
        stored = await match_repo.get_match(session, "latestamp")
    assert stored is not None and stored["result"]["termination"] == "timeout"
    assert stored["moves"] == []  # the late move was not played


async def test_a_lost_move_write_stores_the_match_as_aborted(database: Database) -> None:
    """A record that does not re-derive is never stored as a result: when a move's row is
    missing at the end (a write lost), the match is stored ``aborted``, payoffs all zero."""
    from sqlalchemy import text

    async with database.session() as session:
        a, _ = await bot_repo.create_bot(session, "lost_a")
        b, _ = await bot_repo.create_bot(session, "lost_b")

    class LosesAWrite(_InProcessBot):
        """Before its winning move, the row of ply 1 disappears from the database."""

        def send_json(self, text: str) -> None:
            message = json.loads(text)
            if message["type"] == "turn" and message["ply"] == 4:
                self.got.append(message)
                asyncio.get_running_loop().create_task(self._lose_then_play(message))
                return
            super().send_json(text)

        async def _lose_then_play(self, turn: dict[str, Any]) -> None:
            await database.recorder.flush()  # plies 0-3 are committed
            async with database.session() as session:  # behind the recorder's back
                await session.execute(
                    text("DELETE FROM moves WHERE match_id = 'lostwrite' AND ply = 1")
                )
            move = MakeMove(match_id=turn["match_id"], ply=turn["ply"], move=self.moves.pop(0))
            self.runner.submit(self.bot_id, move, time.monotonic())

    bots = [
        LosesAWrite(a.id, "lost_a", ["a1", "a2", "a3"]),
        _InProcessBot(b.id, "lost_b", ["b1", "b2"]),
    ]
    runner = in_process_runner(database, "lostwrite", bots, move_ms=5000, bank_ms=0)
    await asyncio.wait_for(runner.run(), 30)
    for bot in bots:
        end = bot.got[-1]
        assert (end["type"], end["termination"], end["payoffs"]) == (
            "match_end",
            "aborted",
            [0.0, 0.0],
        )
    async with database.session() as session:
        stored = await match_repo.get_match(session, "lostwrite")
    assert stored is not None and stored["status"] == "aborted"
    assert stored["result"]["termination"] == "aborted"


async def test_a_bot_that_does_not_come_back_after_a_restart_loses_on_time(
    start_server: Callable[..., LiveServer],
) -> None:
    """Resumed, the match waits ``resume_wait_s`` for its bots; then the absent one's clock
    runs as for any disconnect, and it loses with ``disconnect``."""
    srv = start_server()
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a, b, sa, _ = await start_pair(srv.ws_url, ta, tb, move_ms=2000)
    mid = sa["match_id"]
    first, second = (a, b) if sa["your_seat"] == 0 else (b, a)
    turn = await first.expect("turn", match_id=mid)
    await first.send({"type": "move", "match_id": mid, "ply": 0, "move": turn["legal_moves"][0]})
    await second.expect("turn", match_id=mid, ply=1)
    await asyncio.to_thread(srv.stop)
    srv = start_server(resume_wait_s=0.3)
    back = await WsBot.connect(srv.ws_url, ta if first is a else tb)  # seat 0 only
    await back.expect("match_start", match_id=mid)
    end = await back.expect("match_end", match_id=mid, timeout=10)
    assert (end["termination"], end["at_fault"]) == ("disconnect", 1)
    record = srv.api("GET", f"/api/matches/{mid}").json()
    assert record["status"] == "finished" and [r["ply"] for r in record["resumed"]] == [1]
    await back.close()


async def test_a_move_that_crosses_the_stop_is_dropped_not_refused(
    start_server: Callable[..., LiveServer],
) -> None:
    """Once the server is stopping, a move (or resign) for a running match gets no error: the
    match is left to resume, and ``unknown_match`` would make the bot forget it."""
    srv = start_server()
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a, b, sa, _ = await start_pair(srv.ws_url, ta, tb, move_ms=5000)
    mid = sa["match_id"]
    mover = a if sa["your_seat"] == 0 else b
    turn = await mover.expect("turn", match_id=mid)
    srv.app.state.referee.closing = True  # what the stop signal does first
    await mover.send({"type": "move", "match_id": mid, "ply": 0, "move": turn["legal_moves"][0]})
    await mover.send({"type": "resign", "match_id": mid})
    await mover.send({"type": "move", "match_id": "no-such-match", "ply": 0, "move": "a1"})
    await mover.send({"type": "bogus"})  # answered in order: every frame before it was handled
    error = await mover.expect("error")
    assert error["code"] == "unknown_type", error
    assert srv.app.state.referee.running_match(mid) is not None
