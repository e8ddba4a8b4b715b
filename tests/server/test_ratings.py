"""Ratings: every finished lobby match is rated with its result, in one transaction; challenges
and aborted matches are not; forfeits are; three players are rated by finishing order; and a
rebuild from the stored matches gives exactly the incremental ratings."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from _rated import store_rated
from _server_process import start_server_process
from _ws_client import Message, WsBot, start_pair
from conftest import LiveServer
from sqlalchemy import select, text

from ply_arena.protocol.client import BotClient
from ply_arena.server.db import server_mark
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Rating, RatingChange, Result
from ply_arena.server.ratings import RatingBook, RatingModel, places
from ply_arena.server.ratings.rebuild import needs_rebuild, rebuild
from ply_arena.server.repositories import bots as bot_repo


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


def snapshot_rows(rows: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in rows)


async def snapshot(database: Database) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every rating row and every history row, as plain tuples (floats exact)."""
    async with database.session() as session:
        ratings = await session.execute(
            select(
                Rating.bot_id, Rating.game, Rating.mu, Rating.sigma, Rating.conservative,
                Rating.matches, Rating.wins, Rating.draws, Rating.losses, Rating.timeouts,
                Rating.illegal_moves, Rating.disconnects, Rating.last_played_at,
            )
        )  # fmt: skip
        history = await session.execute(
            select(
                RatingChange.match_id, RatingChange.bot_id, RatingChange.game, RatingChange.seat,
                RatingChange.rank, RatingChange.mu_before, RatingChange.sigma_before,
                RatingChange.mu, RatingChange.sigma, RatingChange.conservative, RatingChange.at,
            )
        )  # fmt: skip
        return snapshot_rows(ratings), snapshot_rows(history)


async def play(bot: WsBot, match_id: str, moves: list[str] | None = None) -> Message:
    """Answer every turn: the scripted moves first, then the first legal move."""
    script = list(moves or [])
    return await bot.play(
        match_id, lambda turn: script.pop(0) if script else turn["legal_moves"][0], timeout=15
    )


async def lobby_match(
    srv: LiveServer, a: WsBot, b: WsBot, *, move_ms: int = 3000, policy: str = "forfeit"
) -> tuple[str, WsBot, WsBot]:
    """a and b meet in the tic-tac-toe lobby: (match id, seat 0's bot, seat 1's bot)."""
    join = {
        "type": "join",
        "game": "tic_tac_toe",
        "time_control": {"move_ms": move_ms},
        "policy": policy,
    }
    await a.send(join)
    await b.send(join)
    start = await a.expect("match_start", timeout=10)
    first, second = (a, b) if start["your_seat"] == 0 else (b, a)
    return start["match_id"], first, second


async def test_lobby_matches_are_rated_and_a_rebuild_gives_the_same_numbers(
    live_server: LiveServer,
    open_database: Callable[[str], Database],
) -> None:
    srv = live_server
    bots = [await WsBot.connect(srv.ws_url, srv.create_bot()[1]) for _ in range(3)]
    ends = []
    # X (seat 0) wins with the a-file every time: a sure result to rate.
    for a, b in [(0, 1), (1, 2), (0, 2), (0, 1), (2, 1), (2, 0)]:
        mid, first, second = await lobby_match(srv, bots[a], bots[b])
        end, _ = await asyncio.gather(
            play(first, mid, ["a1", "a2", "a3"]), play(second, mid, ["b1", "b2"])
        )
        ends.append(end)
    assert all(e["termination"] == "normal" and e["payoffs"] == [1.0, -1.0] for e in ends)
    database = open_database(srv.db_url)
    ratings, history = await snapshot(database)
    assert len(history) == 2 * len(ends)
    by_bot: dict[int, tuple[Any, ...]] = {row[0]: row for row in ratings}
    assert sum(row[5] for row in ratings) == 2 * len(ends)  # matches counted per seat
    assert sum(row[6] for row in ratings) == len(ends) == sum(row[8] for row in ratings)
    async with database.session() as session:
        seqs = (await session.scalars(select(Result.rated_seq).order_by(Result.finished_at))).all()
        book = srv.app.state.referee.ratings
        for bot_id, row in by_bot.items():
            assert book.get(bot_id, "tic_tac_toe") == (row[2], row[3])  # the referee's book
    assert seqs == sorted(seqs) and len(set(seqs)) == len(ends)

    # Derived data: recomputed from the stored matches, exactly the same.
    async with database.session() as session:
        assert not await needs_rebuild(session)
        done = await rebuild(session, RatingModel())
    assert done.matches == len(ends)
    assert await snapshot(database) == (ratings, history)


async def test_challenges_are_unrated_unless_the_server_allows_it(
    start_server: Callable[..., LiveServer],
    open_database: Callable[[str], Database],
) -> None:
    for allowed in (False, True):
        srv = start_server(rated_challenges=allowed)
        _, token_a = srv.create_bot()
        name_b, token_b = srv.create_bot()
        a = await WsBot.connect(srv.ws_url, token_a)
        b = await WsBot.connect(srv.ws_url, token_b)
        await a.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [name_b]})
        received = await b.expect("challenge_received")
        await b.send({"type": "accept", "challenge_id": received["challenge_id"]})
        start = await a.expect("match_start")
        await asyncio.gather(play(a, start["match_id"]), play(b, start["match_id"]))
        _, history = await snapshot(open_database(srv.db_url))
        assert len(history) == (2 if allowed else 0), allowed
        page = srv.api("GET", "/api/leaderboard/tic_tac_toe").json()
        assert page["total"] == (2 if allowed else 0)
        srv.stop()


async def test_forfeits_are_rated_as_stored_and_aborts_are_not(
    start_server: Callable[..., LiveServer],
    open_database: Callable[[str], Database],
) -> None:
    srv = start_server()
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    # A timeout after both have moved: the silent seat loses and its timeouts count goes up
    # (one before every seat has moved is not rated: test_rated_only_played.py).
    a, b, start_a, _ = await start_pair(srv.ws_url, ta, tb, move_ms=1000)
    mid = start_a["match_id"]
    first, second = (a, b) if start_a["your_seat"] == 0 else (b, a)
    for bot in (first, second):
        turn = await bot.expect("turn", match_id=mid)
        await bot.send({"type": "move", "match_id": mid, "ply": turn["ply"],
                        "move": turn["legal_moves"][0]})  # fmt: skip
    end = await second.expect("match_end", match_id=mid, timeout=10)  # first stops moving
    assert (end["termination"], end["at_fault"]) == ("timeout", 0)
    page = srv.api("GET", "/api/leaderboard/tic_tac_toe").json()
    rows = {row["bot"]: row for row in page["ranking"]}
    loser = next(s["bot"] for s in start_a["seats"] if s["seat"] == 0)
    winner = next(s["bot"] for s in start_a["seats"] if s["seat"] == 1)
    assert (rows[loser]["losses"], rows[loser]["timeouts"]) == (1, 1)
    assert (rows[winner]["wins"], rows[winner]["timeouts"]) == (1, 0)
    assert rows[winner]["mu"] > rows[loser]["mu"]
    # An aborted match (an administrator's abort) is stored but not rated.
    await first.send({"type": "join", "game": "tic_tac_toe"})
    await second.send({"type": "join", "game": "tic_tac_toe"})
    started = await first.expect("match_start")
    before = await snapshot(open_database(srv.db_url))
    path = f"/api/matches/{started['match_id']}/abort"
    assert srv.api("POST", path, admin=True).json() == {"aborted": [started["match_id"]]}
    assert (await first.expect("match_end"))["termination"] == "aborted"
    srv.stop()
    database = Database(srv.db_url)
    try:
        assert await snapshot(database) == before
        async with database.session() as session:
            aborted = await session.scalar(
                text("SELECT count(*) FROM results WHERE termination = 'aborted'")
            )
            unrated = await session.scalar(
                text(
                    "SELECT count(*) FROM results WHERE termination = 'aborted' "
                    "AND rated_seq IS NULL"
                )
            )
            # ... and its record says so: rated false, as GET /api/matches/{id} serves it.
            flagged = await session.scalar(
                text("SELECT count(*) FROM matches WHERE status = 'aborted' AND rated")
            )
        assert aborted == unrated == 1
        assert flagged == 0
    finally:
        await database.dispose()


async def test_three_players_are_rated_by_finishing_order(database: Database) -> None:
    """Chinese checkers: payoffs (1, 0, -1) are places 1, 2, 3; a win with the others level,
    (1, -0.5, -0.5), is a tie for second; every seat's rating and record moves accordingly."""
    book = RatingBook(RatingModel())
    async with database.session() as session:
        ids = [(await bot_repo.create_bot(session, f"cc{i}"))[0].id for i in range(3)]
    for k, payoffs in enumerate([[1.0, 0.0, -1.0], [-0.5, 1.0, -0.5]]):
        await store_rated(
            database,
            book,
            match_id=f"cc-match-{k}",
            game="chinese_checkers",
            bot_ids=ids,
            payoffs=payoffs,
            seed=k,
        )
    ratings, history = await snapshot(database)
    first = [row for row in history if row[0] == "cc-match-0"]
    assert [row[4] for row in sorted(first, key=lambda r: r[3])] == places([1.0, 0.0, -1.0])
    mu_after_first = {row[1]: row[7] for row in first}
    assert mu_after_first[ids[0]] > mu_after_first[ids[1]] > mu_after_first[ids[2]]
    second = {row[1]: row[4] for row in history if row[0] == "cc-match-1"}
    assert second == {ids[0]: 2, ids[1]: 1, ids[2]: 2}
    record = {row[0]: row[6:9] for row in ratings}  # wins, draws, losses
    assert record == {ids[0]: (1, 0, 1), ids[1]: (1, 0, 1), ids[2]: (0, 0, 2)}
    async with database.session() as session:
        await rebuild(session, RatingModel())
    assert await snapshot(database) == (ratings, history)


async def test_the_server_rebuilds_missing_ratings_on_start(
    start_server: Callable[..., LiveServer],
    open_database: Callable[[str], Database],
) -> None:
    """A database whose rated results have no rating rows (one from before ratings, or with its
    rating tables emptied) gets them back, computed from the matches, when the server starts."""
    srv = start_server()
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a, b, start, _ = await start_pair(srv.ws_url, ta, tb, move_ms=3000)
    mid = start["match_id"]
    await asyncio.gather(play(a, mid), play(b, mid))
    before = await snapshot(open_database(srv.db_url))
    assert before[1]
    srv.stop()
    database = Database(srv.db_url)
    try:
        async with database.session() as session:
            await session.execute(text("DELETE FROM rating_history"))
            await session.execute(text("DELETE FROM ratings"))
    finally:
        await database.dispose()
    again = start_server()
    assert await snapshot(open_database(again.db_url)) == before
    assert again.app.state.referee.ratings.get(before[0][0][0], "tic_tac_toe") == before[0][0][2:4]


async def test_a_kill_9_during_rated_play_leaves_results_and_ratings_together(
    db_url: str, db_store: str
) -> None:
    """`arena serve` is killed with SIGKILL while two bots play fast rated matches: after a
    restart every rated result has its rating rows and every rating row its result, and the
    ratings equal a rebuild from the stored matches."""
    srv = start_server_process(db_url)
    tokens = [srv.create_bot(f"k9_{i}") for i in range(2)]
    clients = [
        BotClient(srv.ws_url, token, first_legal, game="tic_tac_toe", games=0, max_retries=0)
        for token in tokens
    ]
    playing = [asyncio.create_task(client.run()) for client in clients]
    async with httpx.AsyncClient(base_url=srv.url, timeout=10) as http:

        async def rated_so_far() -> int:
            ranking = (await http.get("/api/leaderboard/tic_tac_toe")).json()["ranking"]
            return int(ranking[0]["matches"]) if ranking else 0

        while await rated_so_far() < 40:
            await asyncio.sleep(0.05)
    srv.proc.send_signal(signal.SIGKILL)  # in the middle of play: no shutdown at all
    try:
        srv.proc.wait(timeout=10)
        mark = server_mark.mark_path(db_url)
        if db_store == "sqlite":
            assert mark is not None and mark.exists()  # left behind, stale: ignored below
        # The house bots' search processes go by themselves when the server is gone.
        deadline = time.monotonic() + 10
        while srv.leftovers() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert srv.leftovers() == []
    finally:
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        srv.stop()

    async def rows(sql: str) -> set[tuple[Any, ...]]:
        database = Database(db_url)
        try:
            async with database.session() as session:
                return {tuple(row) for row in (await session.execute(text(sql))).all()}
        finally:
            await database.dispose()

    rated = await rows("SELECT match_id FROM results WHERE rated_seq IS NOT NULL")
    with_rows = await rows("SELECT DISTINCT match_id FROM rating_history")
    finished = await rows("SELECT id FROM matches WHERE status = 'finished' AND rated")
    ((seats,),) = await rows("SELECT count(*) FROM rating_history")
    assert rated and rated == with_rows == finished
    assert seats == 2 * len(rated)

    again = start_server_process(db_url)  # the match the kill cut (if any) is resumed
    again.stop()
    assert "ratings rebuilt" not in again.log  # nothing was missing
    # A match the kill cut (if any) was resumed, and stays to be resumed: none is aborted.
    assert await rows("SELECT id FROM matches WHERE status = 'aborted'") == set()
    database = Database(db_url)
    try:
        stored = await snapshot(database)
        async with database.session() as session:
            await rebuild(session, RatingModel())
        assert await snapshot(database) == stored
    finally:
        await database.dispose()


@pytest.mark.sqlite_only("the server mark beside an SQLite file (server/db/server_mark.py)")
def test_rebuild_and_a_second_server_refuse_a_database_a_server_runs_on(tmp_path: Path) -> None:
    # The server holds the ratings in memory: a rebuild behind its back would be overwritten
    # by its next result, and a second server would abort the first one's matches.
    from typer.testing import CliRunner

    from ply_arena.server.cli import app

    db = tmp_path / "arena.db"
    srv = start_server_process(db)
    try:
        rebuilt = CliRunner().invoke(app, ["ratings", "rebuild", "--db", str(db)])
        assert rebuilt.exit_code == 1, rebuilt.output
        assert f"a server (pid {srv.proc.pid}, started" in rebuilt.output, rebuilt.output
        assert "is running on this database; stop it first" in rebuilt.output
        second = subprocess.run(
            [sys.executable, "-m", "ply_arena", "serve", "--port",
             "1", "--db", str(db)],
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert second.returncode == 1, second.stdout + second.stderr
        assert f"a server (pid {srv.proc.pid}" in second.stderr
        assert "is already running on this database" in second.stderr
    finally:
        srv.stop()
    assert "Finished server process" in srv.log
    assert not (tmp_path / "arena.db.server").exists()  # removed at a clean stop
    rebuilt = CliRunner().invoke(app, ["ratings", "rebuild", "--db", str(db)])
    assert rebuilt.exit_code == 0, rebuilt.output


def first_legal(state: Any, legal_moves: list[str], clock: Any) -> str:
    return legal_moves[0]
