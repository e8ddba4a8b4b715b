"""House bots: reference agents inside the server, playing through the referee like any bot.

Configuration is checked without a server; everything else runs against a live server (real
uvicorn, real WebSockets, a real SQLite file) with real search processes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from _waiting import bot_id, set_mu, ticks, until
from _ws_client import Message, WsBot, rederive, stored_records
from conftest import LiveServer
from sqlalchemy import select

from ply_arena import games, reference_agents
from ply_arena.server.app import create_app
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Bot
from ply_arena.server.house import HouseConfigError, house_name, parse_house_bots
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.settings import Settings

C4 = "connect_four"


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


# --- configuration --------------------------------------------------------------------------


def test_default_gives_every_game_house_bots_of_different_strength() -> None:
    specs = parse_house_bots("default")
    for name in games.names():
        mine = [s for s in specs if name in s.games]
        agents = {s.agent for s in mine}
        assert "random" in agents and len(agents) >= 2, name
        playable = reference_agents.applicable_agents(games.get(name))
        assert agents <= set(playable), name
        assert agents - {"random"}, f"{name} has no searching house bot"
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    assert all(n.startswith("house-") and len(n) <= 64 for n in names)


def test_specs_with_options_commas_and_seconds() -> None:
    specs = parse_house_bots(
        " connect_four = alphabeta:depth=4,order=false@1 , mcts@0.25 ; othello=mcts@0.25;"
        "tic_tac_toe=random"
    )
    by_name = {s.name: s for s in specs}
    assert set(by_name) == {
        "house-alphabeta-depth4-orderfalse-1",
        "house-mcts-0.25",
        "house-random",
    }
    alphabeta = by_name["house-alphabeta-depth4-orderfalse-1"]
    assert alphabeta.spec == "alphabeta:depth=4,order=false@1"
    assert (alphabeta.agent, alphabeta.options, alphabeta.seconds) == (
        "alphabeta", {"depth": 4, "order": False}, 1.0,
    )  # fmt: skip
    assert by_name["house-mcts-0.25"].games == ("connect_four", "othello")  # one bot, two games
    assert by_name["house-random"].seconds == 1.0  # no @SECONDS: 1 s
    for empty in ("", " ", "none", "off"):
        assert parse_house_bots(empty) == []


def test_house_names_are_readable_stable_and_short() -> None:
    assert house_name("mcts@0.1") == "house-mcts-0.1"
    assert house_name("alphabeta:depth=4@1") == "house-alphabeta-depth4-1"
    long = "mcts:" + ",".join(f"c={i}" for i in range(30)) + "@1"
    assert len(house_name(long)) <= 64 and house_name(long) == house_name(long)
    assert house_name(long) != house_name(long.replace("@1", "@2"))


def test_fixed_strength_specs_say_their_strength_and_are_seeded() -> None:
    specs = parse_house_bots(
        "connect_four=alphabeta:depth=4,mcts:simulations=200,alphabeta:depth=4@0.5,"
        "mcts:simulations=200,seed=7,alphabeta,random; backgammon=expectiminimax:depth=1"
    )
    by_name = {s.name: s for s in specs}
    assert {n: s.fixed for n, s in by_name.items()} == {
        "house-alphabeta-d4": True,
        "house-mcts-200": True,
        "house-alphabeta-depth4-0.5": False,  # @SECONDS: time-limited, named as before
        "house-mcts-200-seed7": True,
        "house-alphabeta": False,  # no depth: 1 s a move, as before
        "house-random": True,
        "house-expectiminimax-d1": True,
    }
    assert by_name["house-alphabeta-d4"].search_options() == {"depth": 4, "seed": 0}
    assert by_name["house-mcts-200-seed7"].search_options() == {"simulations": 200, "seed": 7}
    assert by_name["house-alphabeta-depth4-0.5"].search_options() == {"depth": 4}
    assert house_name("alphabeta:order=false,depth=6") == "house-alphabeta-d6-orderfalse"


def test_the_default_house_bots_are_all_of_fixed_strength() -> None:
    specs = parse_house_bots("default")
    assert all(s.fixed for s in specs), [s.spec for s in specs if not s.fixed]
    assert {s.name for s in specs} == {
        "house-random",
        "house-mcts-200",
        "house-mcts-50",  # backgammon
        "house-alphabeta-d4",
        "house-expectiminimax-d1",
        "house-maxn-d1",
    }


def test_a_fixed_strength_search_depends_on_the_position_and_seed_only() -> None:
    # In the worker process: a fresh agent for every search, so the searches run before (in
    # any match) change nothing; the same search twice, with others between, is the same.
    from ply_arena.server.house import worker

    game = games.get("othello")
    state = game.initial_state()
    for _ in range(6):
        state = state.result(state.actions()[-1])
    position = game.state_to_json(state)
    far = time.monotonic() + 60
    options = {"simulations": 200, "seed": 0}
    first = worker.search("othello", "mcts", options, position, far, True)
    for _ in range(3):
        worker.search(
            "othello", "mcts", options, game.state_to_json(game.initial_state()), far, True
        )
    assert worker.search("othello", "mcts", options, position, far, True) == first


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("connect_four=alphabeta:depht=4@1", "did you mean depth?"),
        ("chess=random", "unknown game 'chess'"),
        ("connect_four=deepblue@1", "unknown agent 'deepblue'"),
        ("backgammon=alphabeta@1", "does not play backgammon"),
        ("connect_four=mcts@fast", "@fast is not a thinking time"),
        ("connect_four=mcts@0", "@0 is not a thinking time"),
        ("connect_four=mcts@61", "at most 60"),
        ("connect_four", "expected GAME=AGENT[@SECONDS]"),
        ("connect_four=", "expected GAME=AGENT[@SECONDS]"),
        ("connect_four=alphabeta:depth=4" + ",depth=4" * 12 + "@1", "at most 100 characters"),
    ],
)
def test_a_bad_entry_is_named_in_the_error(text: str, says: str) -> None:
    with pytest.raises(HouseConfigError) as error:
        parse_house_bots(f"tic_tac_toe=random; {text}")
    message = str(error.value)
    assert "ARENA_HOUSE_BOTS entry" in message and text in message and says in message


def test_create_app_refuses_a_bad_house_spec_before_anything_starts(tmp_path: Path) -> None:
    settings = Settings(db_url=f"sqlite+aiosqlite:///{tmp_path / 'a.db'}",
                        house_bots="connect_four=alphabeta:depht=4@1")  # fmt: skip
    with pytest.raises(HouseConfigError, match="connect_four=alphabeta:depht=4@1"):
        create_app(settings)
    assert not (tmp_path / "a.db").exists()


def test_arena_serve_stops_at_once_on_a_bad_house_spec(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_HOUSE_BOTS"] = "connect_four=mcts@0.5,alphabeta:depht=4@1"
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena", "serve", "--port", "0"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.startswith("error: ")
    # Whatever the terminal's width did to the lines.
    output = "".join((done.stdout + done.stderr).split())
    assert "ARENA_HOUSE_BOTSentry'connect_four=mcts@0.5,alphabeta:depht=4@1'" in output
    assert "didyoumeandepth?" in output
    assert "Uvicornrunning" not in output


# --- helpers --------------------------------------------------------------------------------


async def warm(srv: LiveServer) -> list[int]:
    """Wait until the search processes are up; their pids."""
    pool = srv.app.state.house.pool
    return list(await until(pool.pids, 30, "search processes"))


async def lone(
    srv: LiveServer, name: str, token: str, game: str, join_extra: dict[str, object] | None = None
) -> tuple[WsBot, Message, float]:
    """A bot that joins a queue alone: (bot, its match_start, seconds it waited)."""
    bot = await WsBot.connect(srv.ws_url, token)
    await bot.send({"type": "join", "game": game, **(join_extra or {})})
    await bot.expect("joined")
    joined = time.monotonic()
    start = await bot.expect("match_start", timeout=10)
    return bot, start, time.monotonic() - joined


def opponent(start: Message, me: str) -> str:
    (other,) = {s["bot"] for s in start["seats"]} - {me}
    return str(other)


async def house_rows(db_url: str) -> list[Bot]:
    database = Database(db_url)
    try:
        async with database.session() as session:
            return list((await session.scalars(select(Bot).where(Bot.house))).all())
    finally:
        await database.dispose()


def proc_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


# --- playing --------------------------------------------------------------------------------


async def test_a_house_bot_accepts_a_challenge_in_its_game_and_declines_others(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(house_bots="connect_four=random", house_workers=1, house_max_matches=1)
    await warm(srv)
    name, token = srv.create_bot("cara")
    bot = await WsBot.connect(srv.ws_url, token)
    # Its game: a match at once (a challenge: unrated unless the server rates challenges).
    # (Named in any case: names are unique whatever their case.)
    await bot.send({"type": "challenge", "game": C4, "opponents": ["House-Random"],
                    "time_control": {"move_ms": 20_000, "bank_ms": 0}})  # fmt: skip
    await bot.expect("challenge_sent")
    start = await bot.expect("match_start", timeout=10)
    assert opponent(start, name) == "house-random" and start["game"] == C4
    # Another bot, while that match runs (its own connection: cara's turns stay unread for
    # cara's play below). At its most matches (1 here): declined with why, never left
    # unanswered.
    _, other_token = srv.create_bot("dan")
    other = await WsBot.connect(srv.ws_url, other_token)
    await other.send({"type": "challenge", "game": C4, "opponents": ["house-random"]})
    await other.expect("challenge_sent")
    declined = await other.expect("challenge_declined", timeout=10)
    assert declined["by"] == "house-random" and "try again later" in declined["reason"]
    # A game it does not play: declined, naming the games it plays.
    await other.send({"type": "challenge", "game": "othello", "opponents": ["house-random"]})
    await other.expect("challenge_sent")
    declined = await other.expect("challenge_declined", timeout=10)
    assert declined["reason"] == "house-random plays connect_four, not othello"
    end = await bot.play(start["match_id"])
    assert end["termination"] == "normal"
    record = srv.api("GET", f"/api/matches/{start['match_id']}").json()
    assert (record["origin"], record["rated"]) == ("challenge", False)


async def test_a_lone_bot_meets_a_house_bot_within_five_seconds(
    start_server: Callable[..., LiveServer],
) -> None:
    # house_wait_s is left at its default (2 s).
    srv = start_server(house_bots="connect_four=random,alphabeta:depth=2@0.05", house_workers=1)
    await warm(srv)
    strong = "house-alphabeta-depth2-0.05"
    house = {"house-random", strong}
    (ann, ann_token), (bob, bob_token) = srv.create_bot("ann"), srv.create_bot("bob")
    # ann in the default queue, bob in one of his own: 300 ms a move, no bank, random_move.
    (a, start_a, waited_a), (b, start_b, waited_b) = await asyncio.gather(
        lone(srv, ann, ann_token, C4),
        lone(srv, bob, bob_token, C4, {"time_control": {"move_ms": 300, "bank_ms": 0},
                                       "policy": "random_move"}),
    )  # fmt: skip
    assert opponent(start_a, ann) in house and opponent(start_b, bob) in house
    assert 1.9 <= waited_a <= 5.0 and 1.9 <= waited_b <= 5.0, (waited_a, waited_b)
    assert start_b["time_control"] == {"move_ms": 300, "bank_ms": 0}
    ends = await asyncio.gather(a.play(start_a["match_id"]), b.play(start_b["match_id"]))
    assert [e["termination"] for e in ends] == ["normal", "normal"]
    log = list(srv.app.state.referee.pairing_log)
    assert [r.reason for r in log] == ["house", "house"]
    srv.stop()
    records = {r["id"]: r for r in await stored_records(srv.db_url)}
    for start, me in ((start_a, ann), (start_b, bob)):
        record = records[start["match_id"]]
        rederive(record)
        assert record["status"] == "finished" and record["result"]["termination"] == "normal"
        seats = {s["bot"]: s["seat"] for s in record["seats"]}
        assert set(seats) == {me, opponent(start, me)}
        house_seat = seats[opponent(start, me)]
        house_moves = [m for m in record["moves"] if m["seat"] == house_seat]
        assert house_moves and all(m["forced"] is None for m in house_moves)
        assert all(m["think_ms"] is not None and m["think_ms"] < 300 for m in house_moves)
        if opponent(start, me) == strong:  # its search says what it found
            assert all(m["info"] and m["info"]["depth"] >= 1 for m in house_moves)


async def test_house_bots_are_bots_that_keep_their_ids_across_a_restart(
    start_server: Callable[..., LiveServer],
) -> None:
    spec = "tic_tac_toe=random,mcts:simulations=20@0.05"
    srv = start_server(house_bots=spec, house_workers=1)
    rows = {b.name: b for b in await house_rows(srv.db_url)}
    assert set(rows) == {"house-random", "house-mcts-simulations20-0.05"}
    assert rows["house-mcts-simulations20-0.05"].agent == "mcts:simulations=20@0.05"
    assert all(b.house and b.enabled and b.token_hash.startswith("house:") for b in rows.values())
    assert bot_id(srv, "house-random") == rows["house-random"].id  # logged in to the referee
    # The name is theirs: nobody may create a bot called house-...
    refused = srv.api("POST", "/api/bots", admin=True, json={"name": "House-Alice"})
    assert refused.status_code == 400 and "house bots" in refused.json()["error"]["message"]
    # No token logs them in (their stored hash is no sha256 hex of anything), and none is given
    # out: a rotated token would let anyone play as the server's own agent.
    bot = await WsBot.connect(srv.ws_url)
    await bot.send({"type": "hello", "protocol": 1, "token": rows["house-random"].token_hash})
    await bot.expect_error("bad_token")
    rotated = srv.api("POST", "/api/bots/house-random/rotate", admin=True)
    assert rotated.status_code == 400 and "house bot" in rotated.json()["error"]["message"]
    listed = {b["name"]: b for b in srv.api("GET", "/api/bots").json()["bots"]}
    assert listed["house-random"]["house"] is True
    srv.stop()
    again = start_server(house_bots=spec, house_workers=1)
    after = {b.name: b.id for b in await house_rows(again.db_url)}
    assert after == {name: b.id for name, b in rows.items()}


async def test_ensure_house_bot_refuses_a_name_taken_by_another_bot(database: Database) -> None:
    async with database.session() as session:
        session.add(Bot(name="house-random", name_key="house-random", token_hash="x" * 64))
    with pytest.raises(bot_repo.BotExistsError, match="not a house bot"):
        async with database.session() as session:
            await bot_repo.ensure_house_bot(session, "house-random", "random")


async def test_a_house_bot_plays_at_most_house_max_matches(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(house_bots="connect_four=random,alphabeta:depth=1@0.05", house_workers=1,
                       house_max_matches=1, house_wait_s=0.2, pairing_tick_s=0.05)  # fmt: skip
    strong = "house-alphabeta-depth1-0.05"
    set_mu(srv, "house-random", C4, 10.0)
    set_mu(srv, strong, C4, 30.0)
    names = []
    bots = []
    for move_ms in (900, 901):  # two queues, one bot alone in each
        name, token = srv.create_bot()
        bot = await WsBot.connect(srv.ws_url, token)
        set_mu(srv, name, C4, 29.0)
        await bot.send({"type": "join", "game": C4,
                        "time_control": {"move_ms": move_ms, "bank_ms": 0}})  # fmt: skip
        names.append(name)
        bots.append(bot)
    starts = [await b.expect("match_start", timeout=10) for b in bots]
    # Both wanted the strong house bot (closest); it had room for one match only.
    assert sorted(opponent(s, n) for s, n in zip(starts, names, strict=True)) == sorted(
        ["house-random", strong]
    )
    assert srv.app.state.referee.playing(bot_id(srv, strong)) == 1


async def test_house_bots_play_each_other_only_with_self_play(
    start_server: Callable[..., LiveServer],
) -> None:
    spec = "tic_tac_toe=random,mcts:simulations=20@0.05"
    srv = start_server(house_bots=spec, house_workers=1, house_wait_s=0.0, pairing_tick_s=0.05)
    await ticks(srv, 10)
    assert not srv.app.state.referee.matches and not srv.app.state.referee.pairing_log
    srv.stop()
    srv = start_server(house_bots=spec, house_workers=1, house_self_play=True)
    referee = srv.app.state.referee
    await until(lambda: len(referee.pairing_log) >= 3, 30, "three house matches")
    srv.stop()
    finished = [r for r in await stored_records(srv.db_url) if r["status"] == "finished"]
    assert len(finished) >= 2
    for record in finished:
        rederive(record)
        seated = {s["bot"] for s in record["seats"]}
        assert seated == {"house-random", "house-mcts-simulations20-0.05"}


# --- robustness -----------------------------------------------------------------------------


async def wait_until_house_thinks(srv: LiveServer, bot: WsBot, start: Message, me: str) -> None:
    """Play the bot's first move if it is on move; return once the house bot is searching."""
    if start["your_seat"] == 0:
        turn = await bot.expect("turn")
        await bot.send({"type": "move", "match_id": start["match_id"], "ply": turn["ply"],
                        "move": turn["legal_moves"][0]})  # fmt: skip
    (house_bot,) = srv.app.state.house.bots
    await until(lambda: house_bot.thinking, 10, "the house bot's search")


async def test_a_house_match_stops_with_the_server_and_resumes_with_the_next(
    start_server: Callable[..., LiveServer],
) -> None:
    house = {"house_bots": "connect_four=alphabeta@1", "house_workers": 1, "house_wait_s": 0.1,
             "pairing_tick_s": 0.05}  # fmt: skip
    srv = start_server(**house)
    pids = await warm(srv)
    name, token = srv.create_bot()
    bot, start, _ = await lone(srv, name, token, C4,
                               {"time_control": {"move_ms": 10_000, "bank_ms": 0}})  # fmt: skip
    await wait_until_house_thinks(srv, bot, start, name)  # a search under way
    began = time.monotonic()
    srv.stop()
    assert time.monotonic() - began < 4.0  # the search is abandoned, not waited for
    assert await bot.expect_closed() == 1012
    assert not any(m["type"] == "match_end" for m in bot.log)
    await until(lambda: all(proc_gone(p) for p in pids), 5, "the search processes to end")
    (record,) = [r for r in await stored_records(srv.db_url) if r["id"] == start["match_id"]]
    assert record["status"] == "running"

    # The next server resumes it: the house bot logs in again and, once the student's bot is
    # back too, plays its move; the student's turn follows.
    srv = start_server(**house)
    bot = await WsBot.connect(srv.ws_url, token)
    again = await bot.expect("match_start", match_id=start["match_id"])
    assert again["ply"] == record["plies"]
    turn = await bot.expect("turn", timeout=15, match_id=start["match_id"])
    assert turn["ply"] == record["plies"] + 1
    await bot.send({"type": "resign", "match_id": start["match_id"]})
    end = await bot.expect("match_end", match_id=start["match_id"])
    assert end["termination"] == "resign" and end["plies"] == turn["ply"]


async def test_a_dead_search_process_loses_the_house_match_on_time(
    start_server: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    srv = start_server(house_bots="connect_four=alphabeta@5", house_workers=1, house_wait_s=0.1,
                       pairing_tick_s=0.05)  # fmt: skip
    (pid,) = await warm(srv)
    name, token = srv.create_bot()
    tc = {"time_control": {"move_ms": 1500, "bank_ms": 0}}
    bot, start, _ = await lone(srv, name, token, C4, tc)
    await wait_until_house_thinks(srv, bot, start, name)
    os.kill(pid, signal.SIGKILL)
    end = await bot.expect("match_end", timeout=10)
    house_seat = 1 - start["your_seat"]
    assert (end["termination"], end["at_fault"]) == ("timeout", house_seat)
    assert "a search process died" in caplog.text
    # The server plays on: new search processes start and are warmed at once, and the next
    # match gets a house bot whose searches work again.
    async with asyncio.timeout(30):
        await srv.app.state.house.pool.recovered()
    assert srv.app.state.house.pool.pids() and pid not in srv.app.state.house.pool.pids()
    await bot.send({"type": "join", "game": C4, **tc})
    start = await bot.expect("match_start", timeout=10)
    match_id = start["match_id"]
    if start["your_seat"] == 0:
        turn = await bot.expect("turn", match_id=match_id)
        await bot.send({"type": "move", "match_id": match_id, "ply": turn["ply"],
                        "move": turn["legal_moves"][0]})  # fmt: skip
    turn = await bot.expect("turn", timeout=10, match_id=match_id)
    assert any(m["seat"] == 1 - start["your_seat"] for m in turn["since_last"])  # it moved
    await bot.send({"type": "resign", "match_id": match_id})
    await bot.expect("match_end", match_id=match_id)


async def test_a_thinking_house_bot_does_not_hold_up_other_matches(
    start_server: Callable[..., LiveServer],
) -> None:
    # A house bot searches 1 s per move in one match while two bots play tic-tac-toe as fast as
    # they can: no move of theirs waits for the search.
    srv = start_server(house_bots="connect_four=mcts@1", house_workers=1, house_wait_s=0.1,
                       pairing_tick_s=0.05)  # fmt: skip
    await warm(srv)
    name, token = srv.create_bot()
    student, start, _ = await lone(srv, name, token, C4,
                                   {"time_control": {"move_ms": 3000, "bank_ms": 0}})  # fmt: skip
    house_bot = srv.app.state.house.bots[0]
    thinking_s = 0.0
    gaps: list[float] = []
    (_, token_a), (_, token_b) = srv.create_bot(), srv.create_bot()
    fast = [await WsBot.connect(srv.ws_url, t) for t in (token_a, token_b)]
    sent: dict[tuple[str, int], float] = {}
    stop = asyncio.Event()

    async def fast_bot(bot: WsBot) -> None:
        while not stop.is_set():
            await bot.send({"type": "join", "game": "tic_tac_toe"})
            while True:
                try:
                    message = await bot.recv(0.5)
                except TimeoutError:
                    if stop.is_set():
                        return  # waiting for a match that the other bot no longer wants
                    continue
                if message["type"] == "turn":
                    now = time.monotonic()
                    before = sent.get((message["match_id"], message["ply"] - 1))
                    if before is not None and house_bot.thinking:
                        gaps.append(now - before)
                    sent[(message["match_id"], message["ply"])] = time.monotonic()
                    move = message["legal_moves"][0]
                    await bot.send(
                        {"type": "move", "match_id": message["match_id"], "ply": message["ply"],
                         "move": move}
                    )  # fmt: skip
                elif message["type"] == "match_end":
                    break

    async def watch() -> None:
        nonlocal thinking_s
        while not stop.is_set():
            await asyncio.sleep(0.01)
            if house_bot.thinking:
                thinking_s += 0.01
            if thinking_s >= 2.5:
                stop.set()

    players = [asyncio.create_task(fast_bot(b)) for b in fast]
    player = asyncio.create_task(student.play(start["match_id"], timeout=10))
    await asyncio.wait_for(watch(), 30)
    await asyncio.gather(*players)
    player.cancel()
    assert len(gaps) > 50
    assert max(gaps) < 0.5, sorted(gaps)[-5:]  # a search on the event loop would block ~1 s


# --- fixed strength ---------------------------------------------------------------------------


def busy_loops() -> list[subprocess.Popen[bytes]]:
    """One CPU-bound process per core, at normal priority: a loaded server."""
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]


def cpu_ticks(pid: int) -> int:
    """User plus system CPU time the process has used so far (clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def student(turn: Message) -> str:
    """A student's depth-2 bot: a function of the position, and quick under any load."""
    game = games.get(C4)
    state = game.state_from_json(turn["position"])
    move, _ = reference_agents.make("alphabeta", game, depth=2).choose(state)
    return game.format_move(state, move)


async def gauntlet(srv: LiveServer, token: str, opponents: list[str]) -> dict[object, object]:
    """Matches against each opponent in both seats (a challenge's seats are drawn, so it asks
    again until it has had both): for each (seats), the moves, the payoffs, the termination and
    the house bot's search depths."""
    bot = await WsBot.connect(srv.ws_url, token)
    found: dict[object, object] = {}
    for name in opponents:
        for _ in range(20):  # both seats missed 20 times: 2**-19
            if sum(1 for seats in found if name in seats) == 2:  # type: ignore[operator]
                break
            await bot.send({"type": "challenge", "game": C4, "opponents": [name]})
            await bot.expect("challenge_sent")
            start = await bot.expect("match_start", timeout=10)
            end = await bot.play(start["match_id"], choose=student)
            record = srv.api("GET", f"/api/matches/{start['match_id']}").json()
            seats = tuple(s["bot"] for s in record["seats"])
            house_seat = seats.index(name)
            found[seats] = (
                [m["move"] for m in record["moves"]],
                end["payoffs"],
                end["termination"],
                [
                    (m["info"] or {}).get("comment", "")
                    for m in record["moves"]
                    if m["seat"] == house_seat
                ],
            )
    await bot.close()
    return found


@pytest.mark.timeout(300)
async def test_default_house_bots_play_the_same_moves_on_a_loaded_server(
    start_server: Callable[..., LiveServer],
) -> None:
    # The default house bots are a yardstick: the same matches give the same moves and payoffs
    # on an idle server and on one whose every core is taken by a busy loop. (Time-limited
    # searchers complete fewer depths under load: house-alphabeta-0.5 once completed none.)
    srv = start_server(house_bots="default", house_workers=1)
    await warm(srv)
    _, token = srv.create_bot("yard")
    opponents = ["house-alphabeta-d4", "house-mcts-200", "house-random"]
    idle = await gauntlet(srv, token, opponents)
    assert len(idle) == 2 * len(opponents)
    loops = busy_loops()
    try:
        before = {p.pid: cpu_ticks(p.pid) for p in loops}
        await until(
            lambda: all(cpu_ticks(p.pid) - before[p.pid] >= 10 for p in loops), 10, "busy loops"
        )
        loaded = await gauntlet(srv, token, opponents)
        assert all(p.poll() is None for p in loops)  # they ran all along
    finally:
        for p in loops:
            p.kill()
            p.wait()
    assert loaded == idle
    for _, _, termination, comments in idle.values():  # type: ignore[misc]
        assert termination == "normal"
        # never cut by time ("no depth completed in time", "depth 4 unfinished")
        assert not any("time" in c or "unfinished" in c for c in comments), comments
