"""The tournament director in the test's own loop, step by step: a real database, a real referee
and in-process bots, and directors whose idle look comes only once a minute, so that each thing
checked here is done on the event that should cause it (a start, a game's end, a pause, a
deadline) and not on a later look. Also what a restart leaves behind, reached on purpose: a match
still running under a new director, a match stored aborted, a shutdown in the middle of a game.

The end-to-end tournaments (over WebSockets, with a server) are in test_tournaments.py and
test_tournament_crash.py."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from _in_process import Bot
from _waiting import until_read

from ply_arena.server.db.database import Database
from ply_arena.server.db.models import TournamentGame
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import tournaments as repo
from ply_arena.server.settings import Settings
from ply_arena.server.tournaments.director import Directors

#: The directors' look when nothing wakes them: longer than any wait below, so a step that
#: depends on it fails the test instead of passing late.
NEVER_S = 600.0
#: How long a test waits for something that should happen within a few steps of the loop.
SOON_S = 20.0


class Arena:
    """A referee and its directors over a real SQLite file."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.referee = Referee(database, Settings(db_url=database.url, house_bots=""))
        self.directors = Directors(self.referee, database, poll_s=NEVER_S)
        self._other_directors: list[Directors] = []

    def more_directors(self) -> Directors:
        """Another Directors over the same referee (what a restarted server's would find)."""
        directors = Directors(self.referee, self.database, poll_s=NEVER_S)
        self._other_directors.append(directors)
        return directors

    async def bots(self, *names: str, connected: bool = True) -> list[Bot]:
        made = []
        async with self.database.session() as session:
            for name in names:
                row, _ = await bot_repo.create_bot(session, name)
                made.append(Bot(self.referee, row.id, name))
        if connected:
            for bot in made:
                self.referee.login(bot)
        return made

    async def tournament(
        self,
        name: str,
        entrants: Sequence[Bot],
        *,
        format: str = "round_robin",
        rounds: int = 1,
        concurrency: int = 4,
        no_show_s: float = 60.0,
        status: str = "running",
    ) -> int:
        async with self.database.session() as session:
            by_id = {b.id: b for b in await bot_repo.list_bots(session)}
            tournament = await repo.create_tournament(
                session, name=name, game="tic_tac_toe", format=format, rounds=rounds,
                move_ms=60_000, bank_ms=60_000, policy="forfeit", concurrency=concurrency,
                rated=False, no_show_s=no_show_s, classroom=None,
                entrants=[by_id[b.bot_id] for b in entrants],
            )  # fmt: skip
            if status != "created":
                await repo.set_status(session, tournament, status)
            return tournament.id

    async def set_status(self, tournament_id: int, status: str) -> None:
        """What the API does to pause, resume or cancel: store it, then tell the directors."""
        async with self.database.session() as session:
            tournament = await repo.tournament_by_id(session, tournament_id)
            await repo.set_status(session, tournament, status)
        if status == "running":
            self.directors.run(tournament_id)
        else:
            self.directors.steer(tournament_id)

    async def finished(self, tournament_id: int, what: str) -> None:
        async def over() -> bool:
            return await self.status(tournament_id) == "finished"

        await until_read(over, SOON_S, what)

    async def one_under_way(self, tournament_id: int) -> TournamentGame:
        """Wait until one of its games is being played (the only one); that game."""

        async def playing() -> list[TournamentGame]:
            return [g for g in await self.games(tournament_id) if g.status == "playing"]

        (game,) = await until_read(playing, SOON_S, "a game under way")
        return game

    async def game_held(self, name: str) -> tuple[int, TournamentGame, list[Bot]]:
        """A running tournament of two bots that keep their turns: its id, its game under way
        (one at a time), and the bots (``release`` them to play on)."""
        bots = await self.bots(f"{name}_a", f"{name}_b")
        for bot in bots:
            bot.holding = True
        tournament_id = await self.tournament(name, bots, concurrency=1)
        self.directors.run(tournament_id)
        return tournament_id, await self.one_under_way(tournament_id), bots

    async def games(self, tournament_id: int) -> list[TournamentGame]:
        await self.database.recorder.flush()
        async with self.database.session() as session:
            return await repo.games_of(session, await repo.tournament_by_id(session, tournament_id))

    async def status(self, tournament_id: int) -> str | None:
        async with self.database.session() as session:
            return await repo.status_of(session, tournament_id)

    async def stop(self) -> None:
        for directors in [self.directors, *self._other_directors]:
            await directors.stop()
        await self.referee.stop()
        await self.database.recorder.flush()


def director_tasks(tournament_id: int) -> list[asyncio.Task[Any]]:
    """The tasks directing that tournament (each Directors names its own so)."""
    name = f"tournament-{tournament_id}"
    return [t for t in asyncio.all_tasks() if t.get_name() == name]


@pytest.fixture
async def arena(database: Database) -> AsyncIterator[Arena]:
    made = Arena(database)
    await made.referee.start()
    try:
        yield made
    finally:
        await made.stop()


def statuses(games: Sequence[TournamentGame]) -> list[str]:
    return [g.status for g in games]


async def test_a_tournament_is_played_on_its_events_alone(arena: Arena) -> None:
    """Started, the director starts games at once; each game's end starts the next (one at a
    time here); the last one finishes the tournament. None of it waits for an idle look."""
    a, b = await arena.bots("ev_a", "ev_b")
    tid = await arena.tournament("events", [a, b], concurrency=1, rounds=2)
    arena.directors.run(tid)

    await arena.finished(tid, "the tournament to finish on its events")
    games = await arena.games(tid)
    # A round robin of two bots, two cycles: four rounds of one game each, numbered from 1.
    assert [g.round for g in games] == [1, 2, 3, 4]
    assert statuses(games) == ["finished"] * 4
    assert all(g.match_id is not None and g.replays == 0 for g in games)
    assert len({g.match_id for g in games}) == 4


async def test_playing_counts_each_game_under_way_once(arena: Arena) -> None:
    bots = await arena.bots(*(f"cnt{i}" for i in range(4)))
    for bot in bots:
        bot.holding = True
    tid = await arena.tournament("counted", bots, concurrency=2)
    arena.directors.run(tid)

    async def two_playing() -> bool:
        return statuses(await arena.games(tid)).count("playing") == 2

    await until_read(two_playing, SOON_S, "two games under way")
    assert arena.directors.playing(tid) == 2
    for bot in bots:
        bot.release()


async def test_a_pause_stops_the_director_at_once_and_the_games_under_way_count(
    arena: Arena,
) -> None:
    bots = await arena.bots(*(f"pz{i}" for i in range(4)))
    for bot in bots:
        bot.holding = True
    tid = await arena.tournament("paused", bots, concurrency=1)
    arena.directors.run(tid)

    under_way = await arena.one_under_way(tid)
    [task] = director_tasks(tid)
    await arena.set_status(tid, "paused")
    # Steered, the director reads the status now and stops (its idle look is ten minutes off).
    await asyncio.wait_for(asyncio.shield(task), SOON_S)
    for bot in bots:
        bot.release()

    async def under_way_over() -> list[TournamentGame]:
        games = await arena.games(tid)
        return [g for g in games if g.id == under_way.id and g.status == "finished"]

    await until_read(under_way_over, SOON_S, "the game under way to finish and count")
    # Nothing else started: the director is gone, and with it whatever would start a game.
    games = await arena.games(tid)
    assert sorted(statuses(games)) == ["finished"] + ["pending"] * (len(games) - 1)

    await arena.set_status(tid, "running")

    # Every game, the last one too: a game passed over while the concurrency was reached
    # is looked at again when a place frees, whoever's bots that game had.
    await arena.finished(tid, "the resumed tournament to finish")
    assert statuses(await arena.games(tid)) == ["finished"] * len(games)


async def test_a_tournament_run_twice_has_one_director(arena: Arena) -> None:
    a, b = await arena.bots("tw_a", "tw_b")
    a.holding = True
    tid = await arena.tournament("twice", [a, b])
    arena.directors.run(tid)
    arena.directors.run(tid)
    assert len(director_tasks(tid)) == 1
    a.release()


async def test_stop_waits_for_its_tasks_and_nothing_is_directed_after(arena: Arena) -> None:
    tid, game, _ = await arena.game_held("stopped")
    [director] = director_tasks(tid)
    followers = [t for t in asyncio.all_tasks() if t.get_name() == f"tournament-game-{game.id}"]
    assert len(followers) == 1
    await arena.directors.stop()
    # Stopped means stopped: its tasks are over when stop returns, cancelled (not ended as if
    # the tournament were over).
    assert director.cancelled() and followers[0].done()
    # A server going down directs nothing new, even if asked.
    arena.directors.run(tid)
    assert director_tasks(tid) == []
    # The game under way is left as it is stored: playing, for the next start to settle.
    [left] = [g for g in await arena.games(tid) if g.id == game.id]
    assert (left.status, left.match_id, left.replays) == ("playing", game.match_id, 0)


async def test_a_running_tournament_settles_the_games_a_restart_left_playing(
    arena: Arena, store_match: Any
) -> None:
    """A restart finds a running tournament with three games left ``playing``: one whose match
    was stored finished takes that result; one whose match was stored aborted and one whose
    match was cut off (no result) are played again (on PostgreSQL a referee resumes the cut one
    instead, and its game takes its result), and the tournament then finishes. A game not
    started yet is simply played (it was not cut off: no replay counted)."""
    a, b = await arena.bots("rs_a", "rs_b")
    names = [a.bot_name, b.bot_name]
    tid = await arena.tournament("restarted", [a, b], status="created")
    done = await store_match(arena.database, game="tic_tac_toe", seed=3, bots=names)
    aborted = await store_match(arena.database, game="tic_tac_toe", seed=4, bots=names,
                                finish=False)  # fmt: skip
    cut = await store_match(arena.database, game="tic_tac_toe", seed=5, bots=names, finish=False)
    async with arena.database.session() as session:
        await match_repo.finish_match(
            session, match_id=aborted.match_id, payoffs=[0.0, 0.0], termination="aborted",
            at_fault=None, final_position=None,
        )  # fmt: skip
        tournament = await repo.tournament_by_id(session, tid)
        ids = [a.bot_id, b.bot_id]
        await repo.add_round(session, tournament, 1, [ids])
        await repo.add_round(session, tournament, 2, [ids[::-1]])
        await repo.add_round(session, tournament, 3, [ids])
        await repo.add_round(session, tournament, 4, [ids[::-1]])
        first, second, third, _ = await repo.games_of(session, tournament)
        await repo.game_started(session, first.id, done.match_id)
        await repo.game_started(session, second.id, aborted.match_id)
        await repo.game_started(session, third.id, cut.match_id)
        await repo.set_status(session, tournament, "running")

    await arena.directors.start()
    if not arena.database.is_sqlite:
        # What a server's start does after its directors' (server/app.py does it before: the
        # order does not matter): the match left running by no live process is resumed here.
        # Between starts, only matches of processes whose lease ran out are taken over.
        assert [r.match_id for r in await arena.referee.resume_unfinished()] == [cut.match_id]

    await arena.finished(tid, "the resumed tournament to finish")
    first, second, third, fourth = await arena.games(tid)
    assert (fourth.status, fourth.replays) == ("finished", 0) and fourth.match_id is not None
    assert (first.status, first.match_id, first.replays) == ("finished", done.match_id, 0)
    assert first.termination == "normal" and list(first.payoffs or []) == done.payoffs
    replayed_ones = [(second, aborted), (third, cut)]
    if not arena.database.is_sqlite:
        # Several processes may share PostgreSQL: the match cut off is one a referee takes over
        # (this one's, within a lease); its game takes its result instead of being played twice.
        replayed_ones = [(second, aborted)]
        assert (third.status, third.match_id, third.replays) == ("finished", cut.match_id, 0)
    for replayed, old in replayed_ones:
        assert (replayed.status, replayed.replays) == ("finished", 1)
        assert replayed.match_id not in (None, old.match_id)


async def test_a_new_director_follows_a_match_still_running(arena: Arena) -> None:
    """Directors started while the referee still plays a tournament's match (a director that
    failed and was started again) follow that match: not replayed, and its result counts."""
    tid, game, (a, b) = await arena.game_held("followed")
    await arena.directors.stop()
    assert arena.referee.running_match(game.match_id or "") is not None
    again = arena.more_directors()
    await again.start()
    assert director_tasks(tid) != []

    async def followed() -> bool:
        return again.playing(tid) == 1

    await until_read(followed, SOON_S, "the new director to follow the match")
    [still] = [g for g in await arena.games(tid) if g.id == game.id]
    assert (still.status, still.match_id, still.replays) == ("playing", game.match_id, 0)
    a.release()
    b.release()

    await arena.finished(tid, "the tournament to finish under the new director")
    [over] = [g for g in await arena.games(tid) if g.id == game.id]
    assert (over.status, over.match_id, over.replays) == ("finished", game.match_id, 0)


async def test_a_match_aborted_while_the_server_runs_is_played_again(arena: Arena) -> None:
    tid, game, (a, b) = await arena.game_held("aborted")
    match_task = arena.referee.match_task(game.match_id or "")
    assert match_task is not None
    assert arena.referee.abort_match(game.match_id or "")  # an administrator's abort
    a.release()
    b.release()

    await arena.finished(tid, "the tournament to finish")
    games = await arena.games(tid)
    [again] = [g for g in games if g.id == game.id]
    assert (again.status, again.replays) == ("finished", 1)
    assert again.match_id not in (None, game.match_id)
    async with arena.database.session() as session:
        outcomes = await repo.match_outcomes(session, [game.match_id or ""])
    assert outcomes[game.match_id or ""].status == "aborted"


async def test_a_shutdown_leaves_its_games_playing_for_the_next_start(arena: Arena) -> None:
    """The referee shutting down aborts the match under way: the game stays ``playing`` as
    stored (the next start settles it from the stored match), it is not marked for a replay
    by a server on its way down."""
    tid, game, _ = await arena.game_held("shutdown")
    await arena.referee.shutdown()

    async def nothing_playing() -> bool:
        return arena.directors.playing(tid) == 0

    await until_read(nothing_playing, SOON_S, "the director to see its match end")
    [left] = [g for g in await arena.games(tid) if g.id == game.id]
    assert (left.status, left.match_id, left.replays) == ("playing", game.match_id, 0)


async def test_an_absent_bot_loses_by_no_show_at_its_deadline(
    arena: Arena, caplog: pytest.LogCaptureFixture
) -> None:
    """The no-show comes when the wait is over (not before, and not at a later idle look), and
    the log names the tournament and the absent bot."""
    (here,) = await arena.bots("ns_here")
    (away,) = await arena.bots("ns_away", connected=False)
    tid = await arena.tournament("noshows", [here, away], no_show_s=0.5, rounds=1)
    caplog.set_level(logging.INFO, logger="ply_arena.server.tournaments.director")
    started = time.monotonic()
    arena.directors.run(tid)

    await arena.finished(tid, "both games lost by no-show")
    elapsed = time.monotonic() - started
    games = await arena.games(tid)
    assert statuses(games) == ["no_show", "no_show"]
    assert all(list(g.absent or []) == [g.bot_ids.index(away.bot_id)] for g in games)
    assert elapsed >= 0.5
    lines = [r.getMessage() for r in caplog.records if "did not come" in r.getMessage()]
    assert lines == [
        "tournament noshows, round 1: ns_away did not come (no_show)",
        "tournament noshows, round 2: ns_away did not come (no_show)",
    ]


async def test_no_wait_at_all_still_plays_every_game_whose_bots_are_there(arena: Arena) -> None:
    a, b = await arena.bots("nw_a", "nw_b")
    tid = await arena.tournament("nowait", [a, b], no_show_s=0.0)
    arena.directors.run(tid)

    await arena.finished(tid, "the tournament to finish")
    games = await arena.games(tid)
    assert statuses(games) == ["finished", "finished"]
    assert all(g.match_id is not None and g.termination == "normal" for g in games)


async def test_nothing_starts_while_the_referee_is_closing(arena: Arena) -> None:
    """In the director's one look, the game whose bot is absent is lost by no-show at once
    (no wait), and the game whose bots are there is not started: the server is going down."""
    a, b = await arena.bots("cl_a", "cl_b")
    (away,) = await arena.bots("cl_away", connected=False)
    tid = await arena.tournament("closing", [a, b, away], no_show_s=0.0, concurrency=4)
    arena.referee.closing = True
    arena.directors.run(tid)

    async def a_no_show() -> bool:
        return "no_show" in statuses(await arena.games(tid))

    await until_read(a_no_show, SOON_S, "the absent bot's game to be lost")
    games = await arena.games(tid)
    both_here = [g for g in games if away.bot_id not in g.bot_ids]
    assert both_here and all((g.status, g.match_id) == ("pending", None) for g in both_here)
    arena.referee.closing = False


async def test_a_swiss_bye_goes_to_an_entrant_who_is_there(arena: Arena) -> None:
    """Three entrants, the lowest seed absent when round 1 is drawn: the bye (a free point)
    goes to the lowest seed present; the absent one is paired (and waited for)."""
    first, second = await arena.bots("sw_1", "sw_2")
    (third,) = await arena.bots("sw_3", connected=False)
    tid = await arena.tournament("byes", [first, second, third], format="swiss", rounds=1)
    arena.directors.run(tid)

    async def drawn() -> list[TournamentGame]:
        return await arena.games(tid)

    games = await until_read(drawn, SOON_S, "round 1 to be drawn")
    byes = [g.bot_ids for g in games if g.status == "bye"]
    played = [sorted(g.bot_ids) for g in games if g.status != "bye"]
    assert byes == [[second.bot_id]]
    assert played == [sorted([first.bot_id, third.bot_id])]


async def test_a_swiss_tournament_ends_when_no_round_can_be_paired(arena: Arena) -> None:
    """Two entrants, three rounds asked: round 2 would be a rematch, so the tournament ends
    after round 1 (finished, not stuck drawing)."""
    a, b = await arena.bots("sx_a", "sx_b")
    tid = await arena.tournament("short", [a, b], format="swiss", rounds=3)
    arena.directors.run(tid)

    await arena.finished(tid, "the tournament to end after round 1")
    games = await arena.games(tid)
    assert [(g.round, g.status) for g in games] == [(1, "finished")]


async def test_a_game_ending_in_one_tournament_starts_the_bots_game_in_another(
    arena: Arena,
) -> None:
    """A bot plays one tournament game at a time: the same two bots in two tournaments play
    their games one after the other, each started as the one before ends (in either
    tournament)."""
    a, b = await arena.bots("two_a", "two_b")
    first = await arena.tournament("one", [a, b], rounds=2)
    second = await arena.tournament("other", [a, b], rounds=2)
    arena.directors.run(first)
    arena.directors.run(second)

    async def both_finished() -> bool:
        return await arena.status(first) == await arena.status(second) == "finished"

    await until_read(both_finished, SOON_S, "both tournaments to finish")
    games = [*(await arena.games(first)), *(await arena.games(second))]
    assert statuses(games) == ["finished"] * 8
    # One at a time: each bot's matches (eight) begin only after the one before ended.
    for bot in (a, b):
        assert [kind for kind, _ in bot.seen] == ["match_start", "match_end"] * 8
        assert {m for _, m in bot.seen} == {g.match_id for g in games}


async def test_the_next_round_waits_for_the_results_to_be_stored(arena: Arena) -> None:
    """The last game's result is written behind whatever the database is writing: the
    tournament is not finished (nor a Swiss round drawn) until it is committed."""
    a, b = await arena.bots("wr_a", "wr_b")
    tid = await arena.tournament("written", [a, b], concurrency=1)
    gate = asyncio.Event()
    ends: list[str] = []

    async def held_write(session: Any) -> None:
        await gate.wait()

    def hold_the_writer(message: dict[str, Any]) -> None:
        ends.append(message["match_id"])
        if len(ends) == 2:  # the last game: its game_over is queued behind this
            arena.database.recorder.submit(held_write)

    a.on_match_end = hold_the_writer
    arena.directors.run(tid)

    async def both_ended() -> bool:
        return len(ends) == 2 and arena.directors.playing(tid) == 0

    await until_read(both_ended, SOON_S, "both matches to end")
    [task] = director_tasks(tid)
    # The director is waiting for the write: a second later it still is.
    done, _ = await asyncio.wait([task], timeout=1.0)
    assert not done
    async with arena.database.session() as session:
        assert await repo.status_of(session, tid) == "running"
    gate.set()
    await asyncio.wait_for(asyncio.shield(task), SOON_S)
    assert await arena.status(tid) == "finished"
    assert statuses(await arena.games(tid)) == ["finished", "finished"]
