"""Spectators (``/ws/watch/{match_id}``) over real sockets: the snapshot equals what the players
see, every event follows in order, nothing private leaks (bots' info, the seed before the end),
a spectator that stops reading is dropped without slowing the match and resyncs on reconnecting,
and the refusals, bad input and shutdown are coded."""

from __future__ import annotations

import asyncio
import contextlib
import doctest
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import websockets
from _server_process import start_server_process
from _spectator import Spectator, play, stalling_spectator, watch_url
from _waiting import until
from _ws_client import Message, WsBot, rederive, start_pair
from conftest import LiveServer

from ply_arena.protocol.spectator import spectator_message_adapter
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.spectate import limits as spectator_limits
from ply_arena.server.ws.session import CLOSE_GRACE_S


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    await Spectator.close_all()
    await WsBot.close_all()


def record(srv: LiveServer, match_id: str) -> Message:
    response = srv.api("GET", f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def events(moves: list[Message]) -> list[tuple[int, int | None, str, str | None]]:
    return [(m["ply"], m["seat"], m["move"], m["forced"]) for m in moves]


def check_wire(raw: list[str]) -> None:
    """Every frame is a message of the spectator stream, exactly as its model writes it."""
    for text in raw:
        assert spectator_message_adapter.validate_json(text).model_dump_json() == text


# --- what a spectator sees ----------------------------------------------------------------------


async def test_a_spectator_joining_mid_match_sees_what_the_players_see(
    live_server: LiveServer,
) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, sb = await start_pair(
        live_server.ws_url, ta, tb, "connect_four", move_ms=5000, bank_ms=3000
    )
    mid = sa["match_id"]
    by_seat = {sa["your_seat"]: a, sb["your_seat"]: b}
    played: list[tuple[int, int | None, str, str | None]] = []
    for ply in range(4):  # four moves by hand; seat 0 then thinks about ply 4
        turn = await by_seat[ply % 2].expect("turn", match_id=mid)
        played.extend((e["ply"], e["seat"], e["move"], None) for e in turn["since_last"][-1:])
        move = turn["legal_moves"][ply % len(turn["legal_moves"])]
        await by_seat[ply % 2].send({"type": "move", "match_id": mid, "ply": ply, "move": move})
    turn = await by_seat[0].expect("turn", match_id=mid)
    played.append((3, 1, turn["since_last"][-1]["move"], None))
    assert [p[0] for p in played] == [0, 1, 2, 3]

    spectator = await Spectator.connect(live_server.ws_url, mid)
    start = await spectator.recv()
    assert start["type"] == "watch_start" and start["stream_version"] == 1
    assert (start["match_id"], start["game"], start["status"]) == (mid, "connect_four", "running")
    assert start["seats"] == sa["seats"] and start["time_control"] == sa["time_control"]
    assert (start["policy"], start["rated"], start["result"]) == ("forfeit", True, None)
    assert start["dice_commitment"] == sa["dice_commitment"]
    # The position the bot on move was sent, every move so far, its clock running.
    assert start["position"] == turn["position"] and start["ply"] == turn["ply"] == 4
    assert events(start["moves"]) == played
    assert start["to_move"] == 0 and 0 <= start["move_ms"] <= 5000
    assert turn["clocks_ms"] == [3000, 3000]
    # Seat 0's bank runs only once its 5 s are spent (never, unless the machine stalls).
    assert start["clocks_ms"][1] == 3000 and start["clocks_ms"][0] <= 3000
    assert live_server.app.state.referee.spectators.count(mid) == 1
    # What pages call (in the server's thread; read here while the match waits on seat 0).
    runners = live_server.app.state.referee.live_matches()
    assert [r.match_id for r in runners] == [mid]
    assert runners[0].snapshot().model_dump(mode="json")["moves"] == start["moves"]

    move = turn["legal_moves"][0]
    await by_seat[0].send({"type": "move", "match_id": mid, "ply": 4, "move": move})
    ends = await asyncio.gather(play(a, mid), play(b, mid, seed=2))
    rest, code = await spectator.rest()
    assert code == 1000
    assert rest[-1] == ends[0] == ends[1] and rest[-1]["seed"] is not None
    streamed = [m for m in rest if m["type"] == "move"]
    turns = [m for m in rest if m["type"] == "turn"]
    assert [m["ply"] for m in streamed] == list(range(4, 4 + len(streamed)))
    assert [t["ply"] for t in turns] == [m["ply"] + 1 for m in streamed[:-1]]
    assert all(t["seat"] == t["ply"] % 2 and t["move_ms"] == 5000 for t in turns)
    assert all(m["think_ms"] is not None and m["seat"] == m["ply"] % 2 for m in streamed)
    # After each move, the position of the next turn; the end's position after the last.
    assert streamed[-1]["position"] == ends[0]["position"]
    stored = record(live_server, mid)
    rederive(stored)
    assert events(start["moves"]) + events(streamed) == events(stored["moves"])
    check_wire(spectator.raw)
    await until(lambda: live_server.app.state.referee.spectators.total == 0, 5, "no spectators")


async def test_backgammon_dice_are_streamed_and_nothing_private_leaks(
    live_server: LiveServer,
) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, "backgammon", move_ms=10_000)
    mid = sa["match_id"]
    spectator = await Spectator.connect(live_server.ws_url, mid)
    start = await spectator.recv()
    assert start["type"] == "watch_start" and start["result"] is None
    gate = asyncio.Event()
    gate.set()
    info = {"depth": 3, "score": 0.123456789, "pv": ["secret-pv"], "comment": "secret-pv"}
    players = asyncio.gather(
        play(a, mid, info=info, gate=gate), play(b, mid, seed=2, info=info, gate=gate)
    )
    # Midway, the match paused: the REST record shows no info and no seed either.
    seen: list[Message] = []
    while sum(m["type"] == "move" for m in seen) < 12:
        seen.append(await spectator.recv())
    gate.clear()
    live = record(live_server, mid)
    assert live["status"] == "running" and live["seed"] is None
    assert live["moves"] and all(m["info"] is None for m in live["moves"])
    gate.set()
    end_a, _ = await players
    rest, code = await spectator.rest()
    messages = [start, *seen, *rest]
    assert code == 1000 and messages[-1] == end_a and messages[-1]["type"] == "match_end"
    seed = end_a["seed"]
    assert seed is not None and seed.isdigit()
    for text, message in zip(spectator.raw[:-1], messages[:-1], strict=True):
        assert seed not in text and "secret-pv" not in text and "0.123456789" not in text
        assert "seed" not in message and '"info"' not in text
    dice = [m for m in messages if m["type"] == "move" and m["seat"] is None]
    assert dice and all(m["think_ms"] is None and "-" in m["move"] for m in dice)
    stored = record(live_server, mid)
    assert stored["seed"] == seed
    moved = [m for m in stored["moves"] if m["seat"] is not None]
    assert moved and all(m["info"]["comment"] == "secret-pv" for m in moved)
    streamed = [m for m in messages if m["type"] == "move"]
    assert events(start["moves"]) + events(streamed) == events(stored["moves"])
    check_wire(spectator.raw)


async def test_a_finished_match_is_one_snapshot_with_its_result_then_a_normal_close(
    live_server: LiveServer, database: Any, store_match: Any
) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, "tic_tac_toe", move_ms=5000)
    mid = sa["match_id"]
    end, _ = await asyncio.gather(play(a, mid), play(b, mid, seed=2))
    spectator = await Spectator.connect(live_server.ws_url, mid)
    messages, code = await spectator.rest()
    assert code == 1000 and len(messages) == 1
    start = messages[0]
    stored = record(live_server, mid)
    assert (start["status"], start["to_move"], start["clocks_ms"]) == ("finished", None, None)
    assert start["position"] == end["position"] and start["ply"] == end["plies"]
    assert events(start["moves"]) == events(stored["moves"])
    assert start["result"] == {
        "payoffs": end["payoffs"],
        "termination": end["termination"],
        "at_fault": end["at_fault"],
        "plies": end["plies"],
        "seed": end["seed"],
    }
    # A match left running, then aborted by hand with no server playing it: its position is
    # re-derived from its moves.
    cut = await store_match(database, game="connect_four", seed=5, max_plies=5, finish=False)
    async with database.session() as session:
        assert await match_repo.abort_running(session) == [cut.match_id]
    spectator = await Spectator.connect(live_server.ws_url, cut.match_id)
    messages, code = await spectator.rest()
    assert code == 1000 and len(messages) == 1
    start = messages[0]
    assert start["status"] == "aborted" and start["position"] == cut.final_position
    assert start["result"]["payoffs"] is None and start["result"]["termination"] == "aborted"
    check_wire(spectator.raw)


# --- a slow spectator ---------------------------------------------------------------------------


async def test_a_spectator_that_stops_reading_is_dropped_and_resyncs_on_reconnecting(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(send_buffer=4096, spectator_queue_frames=16, spectator_queue_bytes=65536)
    hub = srv.app.state.referee.spectators
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a, b, sa, _ = await start_pair(srv.ws_url, ta, tb, "backgammon", move_ms=10_000)
    mid = sa["match_id"]
    reader = await Spectator.connect(srv.ws_url, mid)
    stalled = await stalling_spectator(srv.settings.port, srv.ws_url, mid)
    silent = await stalling_spectator(srv.settings.port, srv.ws_url, mid)  # never reads again
    try:
        await until(lambda: hub.count(mid) == 3, 10, "three spectators")
        stalled_watcher, silent_watcher = watcher_of(hub, stalled), watcher_of(hub, silent)
        # The bots play at full speed until both stalled spectators are dropped, then hold the
        # match (mid-way: a backgammon match is far longer) until the test has reconnected.
        released = False
        held: list[Message] = []

        def hold(turn: Message) -> bool:
            if released or not (stalled_watcher.over and silent_watcher.over):
                return False
            if not held:
                held.append(turn)
            return True

        started = time.monotonic()
        players = asyncio.gather(play(a, mid, hold=hold), play(b, mid, seed=2, hold=hold))
        await until(lambda: stalled_watcher.over and silent_watcher.over, 30, "the drops")
        dropped_after = time.monotonic() - started
        # Once it reads again, it gets what was in flight, then the coded error and the close.
        got: list[Message] = []
        with contextlib.suppress(websockets.ConnectionClosed):
            async with asyncio.timeout(CLOSE_GRACE_S + 5):
                while True:
                    got.append(json.loads(await stalled.recv()))
        assert got[0]["type"] == "watch_start"
        error = got[-1]
        assert (error["type"], error["code"], error["fatal"]) == ("error", "slow_consumer", True)
        assert error["match_id"] == mid and "waiting for this spectator" in error["message"]
        assert stalled.close_code == 1008
        # The one that never reads again costs nothing after the grace: it is cut off.
        await until(silent_watcher.finished.is_set, CLOSE_GRACE_S + 5, "the silent one is gone")
        assert hub.count(mid) == 1 and hub.total == 1

        # Reconnecting resyncs: paused mid-match (a bot holds its turn), the new snapshot is
        # the match as that bot sees it.
        await until(lambda: held, 10, "a bot holding its turn")
        again = await Spectator.connect(srv.ws_url, mid)
        start = await again.recv()
        assert start["type"] == "watch_start" and start["status"] == "running"
        assert (start["ply"], start["position"]) == (held[0]["ply"], held[0]["position"])
        assert start["to_move"] == start["position"]["turn"] and start["move_ms"] <= 10_000
        released = True
        end, _ = await players
        assert end["termination"] == "normal"
        assert dropped_after < 20  # the match played on at full speed while they stalled
        for spectator in (reader, again):
            rest, code = await spectator.rest()
            assert code == 1000 and rest[-1] == end
        stored = record(srv, mid)
        for spectator in (reader, again):
            seen = [m for m in _all(spectator) if m["type"] in ("watch_start", "move")]
            assert events(seen[0]["moves"]) + events(seen[1:]) == events(stored["moves"])
        check_wire(reader.raw)
    finally:
        for ws in (stalled, silent):
            ws.transport.abort()  # a close would wait for the peer's close, unread here


async def test_a_spectator_that_never_reads_again_is_cut_off_after_the_grace(
    start_server: Callable[..., LiveServer],
) -> None:
    """With the default bounds a whole match piles up behind a spectator that does not read:
    its close cannot be written, so its connection is aborted once the grace is over."""
    srv = start_server(send_buffer=4096)
    hub = srv.app.state.referee.spectators
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a, b, sa, _ = await start_pair(srv.ws_url, ta, tb, "backgammon", move_ms=10_000)
    mid = sa["match_id"]
    silent = await stalling_spectator(srv.settings.port, srv.ws_url, mid)
    try:
        await until(lambda: hub.count(mid) == 1, 10, "a spectator")
        watcher = watcher_of(hub, silent)
        end, _ = await asyncio.gather(play(a, mid), play(b, mid, seed=2))
        assert end["termination"] == "normal"
        await until(lambda: watcher.over, 10, "its stream is over")
        over_at = time.monotonic()
        await until(watcher.finished.is_set, CLOSE_GRACE_S + 5, "its connection is gone")
        assert time.monotonic() - over_at < CLOSE_GRACE_S + 3
        assert hub.total == 0
    finally:
        silent.transport.abort()


def watcher_of(hub: Any, ws: Any) -> Any:
    """The server's watcher of a client connection (by the client's port)."""
    port = ws.transport.get_extra_info("sockname")[1]
    return next(w for w in hub.connections() if w.peer.endswith(f":{port}"))


def _all(spectator: Spectator) -> list[Message]:
    return [json.loads(text) for text in spectator.raw]


def test_the_stream_texts_are_the_models_serialised() -> None:
    """The fast builders (server/spectate/stream.py) in the cases a short live match rarely
    shows: forced moves, a finished runner's snapshot, names that need escaping."""
    from ply_arena.protocol.spectator import WatchResult
    from ply_arena.server.spectate import stream

    mid = stream.dumps('m"1\u00e9')
    texts = [
        stream.move_text(
            mid,
            ply=7,
            seat=1,
            move="a1",
            forced="timeout",
            position_json=stream.dumps({"b": [1, "\n\u2028"]}),
            think_ms=None,
            clocks_ms=[0, 12],
        ),
        stream.move_text(
            mid,
            ply=8,
            seat=None,
            move="6-5",
            forced=None,
            position_json="{}",
            think_ms=None,
            clocks_ms=[],
        ),
        stream.turn_text(mid, seat=2, ply=9, move_ms=50, clocks_ms=[1, 2, 3]),
        stream.start_text(
            mid,
            game="backgammon",
            seats_json=stream.dumps([{"seat": 0, "bot": "\u00e9ve"}, {"seat": 1, "bot": 'b\\"'}]),
            time_control_json='{"move_ms":1000,"bank_ms":0}',
            policy="random_move",
            rated=False,
            status="finished",
            position_json="{}",
            moves_json=[
                stream.watched_move_json('{"ply":0,"seat":null,"move":"6-5"}', None),
                stream.watched_move_json('{"ply":1,"seat":0,"move":"a"}', "illegal_move"),
            ],
            clocks_ms=None,
            to_move=None,
            move_ms=None,
            dice_commitment=None,
            result_json=WatchResult(
                payoffs=[-2.0, 2.0], termination="illegal_move", at_fault=0, plies=2, seed="9"
            ).model_dump_json(),
        ),
    ]
    check_wire(texts)
    assert json.loads(texts[3])["moves"][1]["forced"] == "illegal_move"


class _Backlog:
    """An outlet whose peer reads nothing: every byte written stays in the buffer."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.open = True
        self.last = b""

    def write(self, frames: bytes) -> bool:
        if self.open:
            self.buffer += frames
            self.last = frames
        return self.open

    def last_message(self) -> Message:
        """The last frame written, decoded (one unmasked text frame)."""
        length = self.last[1] & 0x7F
        return dict(json.loads(self.last[{126: 4, 127: 10}.get(length, 2) :]))

    def write_buffer_size(self) -> int:
        return len(self.buffer)


@pytest.mark.parametrize("bound", ["frames", "bytes"])
async def test_a_watcher_is_bounded_by_messages_and_bytes_beyond_its_snapshot(bound: str) -> None:
    from ply_arena.server.spectate import Limits, Watcher
    from ply_arena.server.spectate.frames import text_frames

    limits = Limits(max_spectators=1, max_per_match=1, queue_frames=16, queue_bytes=65536)
    outlet = _Backlog()
    watcher = Watcher(outlet, limits)
    watcher.match_id = "m"
    assert watcher.start(text_frames(["x" * 100_000]))  # a big snapshot is always sent
    size = 100 if bound == "frames" else 20_000
    pushed = 0
    while watcher.push(text_frames(["y" * size]), 1):
        pushed += 1
    assert pushed == (16 if bound == "frames" else 3)
    assert watcher.over and watcher.close_code == 1008
    error = outlet.last_message()
    assert (error["code"], error["fatal"], error["match_id"]) == ("slow_consumer", True, "m")
    assert ("messages are" if bound == "frames" else "bytes are") in error["message"]
    assert not watcher.push(text_frames(["z"]), 1)  # over: nothing more is written
    # A peer that reads: nothing waits, nothing is counted.
    outlet = _Backlog()
    watcher = Watcher(outlet, limits)
    for _ in range(100):
        assert watcher.push(text_frames(["y" * 1000]), 1)
        outlet.buffer.clear()
    outlet.open = False  # the peer closed: the stream is over, with nothing to close
    assert not watcher.push(text_frames(["y"]), 1) and watcher.over
    assert watcher.close_code is None


# --- refusals and bad input ---------------------------------------------------------------------


async def test_unknown_matches_and_limits_are_refused_with_codes(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(max_spectators=2, max_spectators_per_match=1)
    for match_id in ("no-such-match", "x" * 300):
        spectator = await Spectator.connect(srv.ws_url, match_id)
        messages, code = await spectator.rest()
        assert code == 1008 and len(messages) == 1
        error = messages[0]
        assert (error["type"], error["code"], error["fatal"]) == ("error", "unknown_match", True)
        assert "GET /api/matches" in error["message"] and len(error["message"]) < 200
    tokens = [srv.create_bot()[1] for _ in range(4)]
    match_ids = [
        (await start_pair(srv.ws_url, *tokens[i : i + 2], move_ms=10_000))[2]["match_id"]
        for i in (0, 2)
    ]
    first = await Spectator.connect(srv.ws_url, match_ids[0])
    assert (await first.recv())["type"] == "watch_start"
    second = await Spectator.connect(srv.ws_url, match_ids[0])  # one per match here
    messages, code = await second.rest()
    assert code == 1008 and [m["code"] for m in messages] == ["limit_reached"]
    assert "this match has 1 spectators" in messages[0]["message"]
    third = await Spectator.connect(srv.ws_url, match_ids[1])
    assert (await third.recv())["type"] == "watch_start"
    fourth = await Spectator.connect(srv.ws_url, "no-such-match")  # two on the server here
    messages, code = await fourth.rest()
    assert code == 1008 and [m["code"] for m in messages] == ["limit_reached"]
    assert "the server has 2 spectators" in messages[0]["message"]
    # An HTTP request at the address says what it is for.
    response = srv.api("GET", f"/ws/watch/{match_ids[0]}")
    assert response.status_code == 426 and "spectators" in response.json()["error"]["message"]
    assert doctest.testmod(spectator_limits).failed == 0


async def test_what_a_spectator_sends_is_answered_and_disturbs_nothing(
    live_server: LiveServer,
) -> None:
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a, b, sa, _ = await start_pair(live_server.ws_url, ta, tb, "connect_four", move_ms=10_000)
    mid = sa["match_id"]
    spectator = await Spectator.connect(live_server.ws_url, mid)
    assert (await spectator.recv())["type"] == "watch_start"
    for frame, code in [
        ("not json", "bad_json"),
        ('{"type": "hello", "protocol": 1, "token": "x"}', "invalid_message"),
        ('{"type": "subscribe"}', "unknown_type"),
        (b"\x00\x01", "binary_frame"),
        ('{"type": "ping", "id": "7"}', "invalid_message"),
    ]:
        await spectator.ws.send(frame)
        error = await spectator.expect("error")
        assert (error["code"], error["fatal"], error["match_id"]) == (code, False, mid), error
    await spectator.ws.send('{"type": "ping", "id": 7}')
    assert await spectator.expect("pong") == {"type": "pong", "id": 7}
    # Too big: closed by the transport with the protocol's code, as a bot would be.
    big = await Spectator.connect(live_server.ws_url, mid)
    assert (await big.recv())["type"] == "watch_start"
    await big.ws.send(json.dumps({"type": "ping", "pad": "x" * 70_000}))
    messages, code = await big.rest()
    assert code == 1009 and messages[-1]["code"] == "frame_too_large"
    # The match and the first spectator carry on to the end.
    end, _ = await asyncio.gather(play(a, mid), play(b, mid, seed=2))
    rest, code = await spectator.rest()
    assert code == 1000 and rest[-1] == end and end["termination"] == "normal"
    check_wire(spectator.raw)


# --- shutdown -----------------------------------------------------------------------------------


async def test_shutdown_closes_the_streams_with_shutting_down_within_the_grace(
    db_url: str,
) -> None:
    server = start_server_process(db_url, house_bots="none")
    try:
        tokens = [server.create_bot(name) for name in ("watched_a", "watched_b")]
        a, b, sa, _ = await start_pair(server.ws_url, *tokens, move_ms=30_000)
        mid = sa["match_id"]
        spectators = [await Spectator.connect(server.ws_url, mid) for _ in range(3)]
        for spectator in spectators:
            assert (await spectator.recv())["type"] == "watch_start"
        stopping = time.monotonic()
        status = await asyncio.to_thread(server.stop)
        took = time.monotonic() - stopping
    finally:
        server.stop()
    assert status in (0, -15) and took < CLOSE_GRACE_S + 5, took
    # The match is left to resume: no match_end (nor its seed) to anyone, a restart to all.
    for spectator in spectators:
        rest, code = await spectator.rest()
        assert code == 1012 and [m["type"] for m in rest] == ["error"], rest
        assert rest[-1]["code"] == "shutting_down"
    for bot in (a, b):
        assert await bot.expect_closed() == 1012
        assert not any(m["type"] == "match_end" for m in bot.log)
    assert "Traceback" not in server.log, server.log
    assert "Exception in ASGI" not in server.log, server.log
    # Refused while the server shuts down? It is gone now: nothing listens.
    with pytest.raises(OSError):
        await websockets.connect(watch_url(server.ws_url, mid), open_timeout=2)
