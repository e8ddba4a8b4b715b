"""The match runner in the test's own loop, with in-process bots: its state before the first
turn (what pages and spectators may read of a match being created), ``since_last`` when a seat's
first turn comes after several events, the move limit counted exactly, and the seed's width."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from ply_arena import games
from ply_arena.protocol.messages import MakeMove, Policy, TimeControl
from ply_arena.server.db.database import Database
from ply_arena.server.referee.connections import ConnectionRegistry, RefereeError
from ply_arena.server.referee.match_runner import MatchRunner, SeatBot
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo


class FirstMoveBot:
    """A BotConnection in the test's loop that plays the first legal move of every turn."""

    def __init__(self, bot_id: int, name: str) -> None:
        self.bot_id, self.bot_name, self.client = bot_id, name, "tests"
        self.check_role = None
        self.runner: MatchRunner | None = None
        self.got: list[dict[str, Any]] = []

    def send(self, message: Any) -> None:
        self.send_json(message.model_dump_json())

    def send_json(self, text: str) -> None:
        message = json.loads(text)
        self.got.append(message)
        if message["type"] == "turn":
            assert self.runner is not None
            move = MakeMove(
                match_id=message["match_id"], ply=message["ply"], move=message["legal_moves"][0]
            )
            asyncio.get_running_loop().call_soon(
                self.runner.submit, self.bot_id, move, time.monotonic()
            )

    def rtt_ms(self) -> float | None:
        return 1.0

    def close_with(self, error: Any) -> None:
        self.got.append(error.model_dump())

    def turns(self) -> list[dict[str, Any]]:
        return [m for m in self.got if m["type"] == "turn"]


#: The time control of these matches unless a test says otherwise.
DEFAULT_TC = TimeControl(move_ms=5000, bank_ms=1000)


async def _runner(
    database: Database,
    match_id: str,
    game_name: str,
    *,
    bot_type: type[FirstMoveBot] = FirstMoveBot,
    time_control: TimeControl = DEFAULT_TC,
    **options: Any,
) -> tuple[MatchRunner, list[Any]]:
    """A match between new bots of ``bot_type`` (one per seat), not started; ``options`` go to
    MatchRunner (move_limit, on_finish)."""
    game = games.get(game_name)
    bots = []
    async with database.session() as session:
        for seat in range(game.num_players):
            bot, _ = await bot_repo.create_bot(session, f"{match_id}_{seat}")
            bots.append(bot_type(bot.id, bot.name))
    registry = ConnectionRegistry()
    for bot in bots:
        registry.register(bot)
    runner = MatchRunner(
        match_id=match_id,
        game=game,
        seats=[SeatBot(b.bot_id, b.bot_name) for b in bots],
        time_control=time_control,
        policy=Policy.forfeit,
        database=database,
        connections=registry,
        max_latency_grace_ms=200,
        **options,
    )
    for bot in bots:
        bot.runner = runner
    return runner, bots


async def test_a_match_not_yet_started_is_not_announced_and_has_a_snapshot(
    database: Database,
) -> None:
    """Between its creation and its match_start (its row is being written), a runner is
    listed nowhere as live, has no result, is unrated unless told, and its snapshot (a page
    may ask) is the initial position with nobody to move and full clocks."""
    runner, _ = await _runner(database, "notyet", "tic_tac_toe")
    assert runner.announced is False and runner.finished is False and runner.result is None
    assert runner.rated is False  # the referee says so for lobby and tournament matches
    snap = runner.snapshot()
    assert snap.status == "running" and snap.moves == [] and snap.result is None
    assert snap.to_move is None and snap.move_ms is None
    assert snap.clocks_ms == [1000, 1000]
    assert snap.position == games.get("tic_tac_toe").state_to_json(runner.state)
    # docs/protocol.md: a random 64-bit number. Over 200 matches, every seed fits in 64 bits and
    # some use the top bit (all 200 below 2**63 by chance: 2**-200).
    seeds = [runner.seed] + [
        MatchRunner(
            match_id=f"seed{i}",
            game=runner.game,
            seats=runner.seats,
            time_control=runner.time_control,
            policy=runner.policy,
            database=database,
            connections=ConnectionRegistry(),
            max_latency_grace_ms=200,
        ).seed
        for i in range(199)
    ]
    assert all(0 <= seed < 2**64 for seed in seeds) and max(seeds) >= 2**63


async def test_since_last_lists_every_event_before_a_seats_first_turn(
    database: Database,
) -> None:
    """Three players: seat 2's first turn comes after two moves, and lists both; each later
    turn lists exactly the events since that seat's own last move."""
    runner, bots = await _runner(database, "sincelast", "chinese_checkers", move_limit=6)
    await asyncio.wait_for(runner.run(), 60)
    for seat, bot in enumerate(bots):
        turns = bot.turns()
        assert turns, seat
        first = turns[0]
        assert [e["ply"] for e in first["since_last"]] == list(range(seat)), (seat, first)
        for turn in turns[1:]:
            ply = turn["ply"]
            assert [e["ply"] for e in turn["since_last"]] == [ply - 2, ply - 1], (seat, turn)


async def test_the_move_limit_ends_the_match_after_exactly_that_many_seat_moves(
    database: Database,
) -> None:
    runner, bots = await _runner(database, "movelimit", "tic_tac_toe", move_limit=3)
    await asyncio.wait_for(runner.run(), 60)
    end = bots[0].got[-1]
    assert (end["type"], end["termination"], end["plies"]) == ("match_end", "move_limit", 3)
    assert end["payoffs"] == [0.0, 0.0]  # constant sum 0, shared
    assert len(bots[0].turns()) == 2 and len(bots[1].turns()) == 1
    async with database.session() as session:
        stored = await match_repo.get_match(session, "movelimit")
    assert stored is not None and len(stored["moves"]) == 3
    assert stored["result"]["termination"] == "move_limit"


# --- requests out of place, driven by hand -------------------------------------------------------


class HeldBot(FirstMoveBot):
    """Keeps its turns; the test answers for it."""

    def send_json(self, text: str) -> None:
        self.got.append(json.loads(text))


async def _held_match(
    database: Database, match_id: str, **options: Any
) -> tuple[MatchRunner, list[HeldBot], asyncio.Task[None]]:
    runner, bots = await _runner(
        database,
        match_id,
        "tic_tac_toe",
        bot_type=HeldBot,
        time_control=TimeControl(move_ms=30_000, bank_ms=0),
        **options,
    )
    task = asyncio.create_task(runner.run())
    await _turn(bots[0], 0)
    return runner, bots, task


async def _turn(bot: HeldBot, ply: int) -> dict[str, Any]:
    """Wait (by yielding to the loop) until ``bot`` has its turn for ``ply``."""
    for _ in range(100_000):
        for message in bot.got:
            if message["type"] == "turn" and message["ply"] == ply:
                return message
        await asyncio.sleep(0)
    raise AssertionError(f"no turn for ply {ply}")


def _move(runner: MatchRunner, bot: HeldBot, ply: int, move: str, **info: Any) -> None:
    message = MakeMove.model_validate(
        {"match_id": runner.match_id, "ply": ply, "move": move, **({"info": info} if info else {})}
    )
    runner.submit(bot.bot_id, message, time.monotonic())


def _refused(runner: MatchRunner, bot: HeldBot, ply: int, move: str = "b2") -> tuple[str, str]:
    try:
        _move(runner, bot, ply, move)
    except RefereeError as e:
        return e.code.value, e.message
    raise AssertionError("the move was accepted")


async def test_requests_out_of_place_get_their_own_codes(database: Database) -> None:
    ended: list[MatchRunner] = []
    runner, (x, o), task = await _held_match(database, "outofplace", on_finish=ended.append)
    assert _refused(runner, o, 0)[0] == "not_your_turn"  # the other seat
    assert _refused(runner, x, 1)[0] == "stale_ply"  # a ply not reached yet
    _move(runner, x, 0, "b2")
    # Settled but not yet applied (the runner has not run since): a second answer is stale.
    code, why = _refused(runner, x, 0, "a1")
    assert code == "stale_ply" and "already received" in why
    await _turn(o, 1)
    assert _refused(runner, x, 0)[0] == "stale_ply"  # over
    assert _refused(runner, x, 1)[0] == "not_your_turn"
    stranger = HeldBot(10_000, "stranger")
    assert _refused(runner, stranger, 1)[0] == "not_in_match"
    # A move and a resign in the same step: the move counts, then the resign ends the match.
    _move(runner, o, 1, "a1")
    runner.resign(o.bot_id)
    runner.resign(o.bot_id)  # said twice: once is enough
    await asyncio.wait_for(task, 30)
    end = x.got[-1]
    assert (end["type"], end["termination"], end["at_fault"], end["plies"]) == (
        "match_end",
        "resign",
        1,
        2,
    )
    assert ended == [runner]  # the referee is told once
    assert _refused(runner, x, 2)[0] == "unknown_match"  # over
    before = [len(x.got), len(o.got)]
    runner.resync(x.bot_id)  # nothing to resync in a match that is over
    runner.resync(stranger.bot_id)
    assert [len(x.got), len(o.got)] == before


async def test_a_late_answer_after_the_time_ran_out_is_stale(database: Database) -> None:
    runner, (x, _), task = await _held_match(database, "lateanswer")
    assert runner._waiter is not None
    runner._waiter.set_result(None)  # what the turn's timer does when the time is up
    code, why = _refused(runner, x, 0)
    assert code == "stale_ply" and "time ran out" in why
    await asyncio.wait_for(task, 30)
    assert x.got[-1]["termination"] == "timeout"


async def test_a_moves_info_is_stored_as_sent_without_defaults(database: Database) -> None:
    runner, (x, o), task = await _held_match(database, "moveinfo")
    _move(runner, x, 0, "b2", depth=3, pv=["b2", "a1"])
    await _turn(o, 1)
    runner.resign(o.bot_id)
    await asyncio.wait_for(task, 30)
    async with database.session() as session:
        stored = await match_repo.get_match(session, "moveinfo")
    assert stored is not None
    assert stored["moves"][0]["info"] == {"depth": 3, "pv": ["b2", "a1"]}


async def test_a_snapshot_shows_who_thinks_and_what_is_left(database: Database) -> None:
    runner, (x, o), task = await _held_match(database, "snapturn")
    snap = runner.snapshot()
    assert (snap.status, snap.to_move, snap.ply) == ("running", 0, 0)
    assert snap.move_ms is not None and 25_000 < snap.move_ms <= 30_000
    assert snap.clocks_ms == [0, 0]
    _move(runner, x, 0, "b2")
    await _turn(o, 1)
    snap = runner.snapshot()
    assert (snap.to_move, snap.ply, [m.move for m in snap.moves]) == (1, 1, ["b2"])
    runner.resign(o.bot_id)
    await asyncio.wait_for(task, 30)
    snap = runner.snapshot()
    assert snap.status == "finished" and snap.to_move is None and snap.clocks_ms is None
    assert snap.result is not None and snap.result.termination.value == "resign"
    assert snap.result.seed == str(runner.seed)
