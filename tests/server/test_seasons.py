"""Seasons and retired bots on a real server, end to end: an instructor starts a new season of a
class (its leaderboard rates the class's bots afresh, the ended season stays as it was, over REST,
pages, CSV and the command line, and equal to what a ratings rebuild gives), retires bots (kept
under their names in every record and season, their records still verify, the names free for
next term), and a database of the previous schema (0013) upgrades to seasons."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from _api import error_of as _error
from _api import get as _get
from _api import post as _post
from click.testing import Result
from conftest import LiveServer
from sqlalchemy import text
from typer.testing import CliRunner

from ply_arena.protocol.client import BotClient
from ply_arena.protocol.verify import verify_record
from ply_arena.reference_agents.registry import make
from ply_arena.server.cli import app
from ply_arena.server.db.database import Database
from ply_arena.server.ratings.ledger import Ledger, RatedResult
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.ratings.rebuild import rebuild
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import classes as class_repo

GAME = "tic_tac_toe"


def _new_class(srv: LiveServer, name: str) -> dict[str, Any]:
    response = _post(srv, "/api/classes", srv.admin_token, name=name)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _register(srv: LiveServer, code: str, name: str, owner: str) -> str:
    response = _post(srv, "/api/register", code=code, name=name, owner=owner)
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


async def _play(srv: LiveServer, tokens: list[str], games: int) -> None:
    """The bots of ``tokens`` meet in the lobby until each has played ``games`` rated games."""
    clients = [
        BotClient(srv.ws_url, token, agent=lambda g: make("random", g), game=GAME, games=games)
        for token in tokens
    ]
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 60)


def _board(srv: LiveServer, query: str) -> dict[str, Any]:
    response = _get(srv, f"/api/leaderboard/{GAME}?{query}")
    assert response.status_code == 200, response.text
    board: dict[str, Any] = response.json()
    return board


def _by_bot(board: dict[str, Any]) -> dict[str, tuple[float, float, int]]:
    return {r["bot"]: (r["mu"], r["sigma"], r["matches"]) for r in board["ranking"]}


async def _cli(runner: CliRunner, command: Any, args: list[str]) -> Result:
    """An ``arena`` command, in a thread: it runs its own event loop."""
    return await asyncio.to_thread(runner.invoke, command, args)


def _season_matches(srv: LiveServer) -> list[str]:
    """The class's matches, oldest first."""
    listed = _get(srv, "/api/matches?class=ai-2026").json()["matches"]
    return [m["id"] for m in reversed(listed)]


def _replayed(srv: LiveServer, match_ids: list[str]) -> dict[str, tuple[float, float, int]]:
    """What a fresh ledger gives the bots of these matches (two bots, no anchor among them)."""
    ledger = Ledger(RatingModel())
    names: dict[str, int] = {}
    for match_id in match_ids:
        record = _get(srv, f"/api/matches/{match_id}").json()
        seats = sorted(record["seats"], key=lambda s: s["seat"])
        ids = tuple(names.setdefault(s["bot"], len(names)) for s in seats)
        payoffs = tuple(float(s["payoff"]) for s in seats)
        ledger.record(RatedResult(match_id, GAME, ids, payoffs, "normal", None, datetime.now(UTC)))
    return {
        name: (round(st.mu, 3), round(st.sigma, 3), st.matches)
        for name, bot_id in names.items()
        for st in [ledger.states[(bot_id, GAME)]]
    }


async def test_a_new_season_rates_the_class_afresh_and_keeps_the_old_one(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server()
    created = _new_class(srv, "ai-2026")
    code, instructor = created["join_code"], created["instructor_token"]
    tokens = [_register(srv, code, n, f"{n}@uni.es") for n in ("ana-bot", "ben-bot")]
    await _play(srv, tokens, games=2)

    # Season 1 opened with the class: its board is the bots' global ratings.
    first = _board(srv, "class=ai-2026")
    assert first["season"]["number"] == 1 and first["season"]["current"] is True
    everyone = _by_bot(_board(srv, ""))
    assert _by_bot(first) == {b: everyone[b] for b in ("ana-bot", "ben-bot")}
    assert all(matches == 2 for _, _, matches in _by_bot(first).values())

    # Only the admin or the class's instructor starts a season.
    _error(_post(srv, "/api/classes/ai-2026/seasons"), 401, "unauthorized")
    _error(_post(srv, "/api/classes/ai-2026/seasons", tokens[0]), 401, "unauthorized")
    started = _post(srv, "/api/classes/ai-2026/seasons", instructor)
    assert started.status_code == 201, started.text
    assert started.json()["season"]["number"] == 2
    assert started.json()["ended"]["number"] == 1 and started.json()["ended"]["ended_at"]

    # The new season starts empty; the ended one reads as it ended.
    assert _board(srv, "class=ai-2026")["total"] == 0
    ended = _board(srv, "class=ai-2026&season=1")
    assert ended["season"]["current"] is False
    assert ended["ranking"] == first["ranking"]

    await _play(srv, tokens, games=2)
    second = _board(srv, "class=ai-2026")
    assert second["season"]["number"] == 2
    # Fresh: two matches each in the season, four on the global leaderboard.
    assert {b: m for b, (_, _, m) in _by_bot(second).items()} == {"ana-bot": 2, "ben-bot": 2}
    now = _by_bot(_board(srv, ""))
    assert all(m == 4 for b, (_, _, m) in now.items())
    assert all(now[b][1] < sigma for b, (_, sigma, _) in _by_bot(second).items())
    # Exactly the season's two matches replayed from the initial ratings.
    assert _by_bot(second) == _replayed(srv, _season_matches(srv)[-2:])
    assert _board(srv, "class=ai-2026&season=1")["ranking"] == first["ranking"]  # read-only

    # Exports: the ended season as CSV, as JSON (the document above); an unknown season is 404.
    exported = _get(srv, f"/api/leaderboard/{GAME}?class=ai-2026&season=1&format=csv")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    assert "ai-2026-season1-tic_tac_toe.csv" in exported.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [(r["bot"], float(r["mu"])) for r in rows] == [
        (r["bot"], r["mu"]) for r in first["ranking"]
    ]
    _error(_get(srv, f"/api/leaderboard/{GAME}?class=ai-2026&season=3"), 404, "not_found")
    _error(_get(srv, f"/api/leaderboard/{GAME}?season=1"), 400, "bad_request")
    listed = _get(srv, "/api/classes/ai-2026/seasons").json()["seasons"]
    assert [(s["number"], s["current"]) for s in listed] == [(1, False), (2, True)]

    # Pages: the current season by default, the others selectable, the ended one read-only.
    page = _get(srv, "/classes/ai-2026")
    assert page.status_code == 200 and 'data-season="2"' in page.text
    assert 'href="/classes/ai-2026?season=1"' in page.text
    old = _get(srv, "/classes/ai-2026?season=1")
    assert old.status_code == 200 and 'data-season="1"' in old.text and "read-only" in old.text
    assert "season=1&amp;format=csv" in old.text
    table = _get(srv, f"/leaderboard/{GAME}?class=ai-2026&season=1")
    assert table.status_code == 200 and "ended, read-only" in table.text
    assert _get(srv, "/classes/ai-2026?season=7").status_code == 404

    # The command line reads the same seasons from the database.
    runner = CliRunner()
    args = ["leaderboard", GAME, "--db", srv.db_option, "--class", "ai-2026", "--season", "1"]
    shown = await _cli(runner, app, [*args, "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["ranking"] == first["ranking"]
    seasons = await _cli(
        runner, app, ["classes", "season", "list", "ai-2026", "--db", srv.db_option]
    )
    assert seasons.exit_code == 0 and "(current)" in seasons.stdout, seasons.output

    # Derived data: after a rebuild of every rating, each season's board is the same.
    before = [_board(srv, f"class=ai-2026&season={n}") for n in (1, 2)]
    srv.stop()
    database = Database(srv.db_url)
    try:
        async with database.session() as session:
            await rebuild(session, RatingModel())
    finally:
        await database.dispose()
    srv = start_server()
    assert [_board(srv, f"class=ai-2026&season={n}") for n in (1, 2)] == before

    # And from the command line: a third season.
    third = await _cli(
        runner, app, ["classes", "season", "start", "ai-2026", "--db", srv.db_option]
    )
    assert third.exit_code == 0 and "season 3" in third.stdout, third.output
    assert _board(srv, "class=ai-2026")["season"]["number"] == 3


async def test_a_retired_bot_keeps_its_records_and_frees_its_name(
    live_server: LiveServer,
) -> None:
    srv = live_server
    created = _new_class(srv, "ai-2026")
    code, instructor = created["join_code"], created["instructor_token"]
    old_tokens = [_register(srv, code, n, "term 1") for n in ("ana-bot", "ben-bot")]
    await _play(srv, old_tokens, games=2)
    matches = _get(srv, "/api/matches?class=ai-2026").json()["matches"]
    assert len(matches) == 2

    # The instructor retires ana-bot over REST; its name is taken: no other bot is retired.
    _error(_post(srv, "/api/bots/ana-bot/retire", old_tokens[1]), 401, "unauthorized")
    retired = _post(srv, "/api/bots/ana-bot/retire", instructor)
    assert retired.status_code == 200, retired.text
    assert retired.json()["enabled"] is False and retired.json()["retired_at"]
    _error(_post(srv, "/api/bots/ana-bot/enable", instructor), 404, "not_found")
    # Its name is free: a student of next term takes it (in any case).
    new_token = _register(srv, code, "Ana-Bot", "term 2")
    assert new_token
    assert _get(srv, "/api/bots/ana-bot").json()["matches"] == 0  # the new one
    # ben-bot retired on the database file, with the command line.
    runner = CliRunner()
    done = await _cli(runner, app, ["bots", "retire", "ben-bot", "--db", srv.db_option])
    assert done.exit_code == 0, done.output
    listed = await _cli(runner, app, ["bots", "list", "--db", srv.db_option])
    assert listed.stdout.count("retired") == 2, listed.output
    refused = await _cli(runner, app, ["bots", "retire", "nobody", "--db", srv.db_option])
    assert refused.exit_code == 1

    # The old records keep the old names, and still verify.
    for match in matches:
        record = _get(srv, f"/api/matches/{match['id']}/record").json()
        assert {s["bot"] for s in record["seats"]} == {"ana-bot", "ben-bot"}
        assert verify_record(record).ok
    page = _get(srv, f"/matches/{matches[0]['id']}")
    assert page.status_code == 200 and "ben-bot" in page.text

    # The current season leaves retired bots out; once ended, the season shows them, marked.
    assert _board(srv, "class=ai-2026")["total"] == 0
    assert _post(srv, "/api/classes/ai-2026/seasons", instructor).status_code == 201
    old = _board(srv, "class=ai-2026&season=1")
    assert {(r["bot"], r["retired"], r["matches"]) for r in old["ranking"]} == {
        ("ana-bot", True, 2),
        ("ben-bot", True, 2),
    }
    shown = _get(srv, "/classes/ai-2026?season=1").text
    assert "ana-bot" in shown and "retired" in shown
    # A retired bot whose name nobody took still has its page.
    assert _get(srv, "/api/bots/ben-bot").json()["matches"] == 2
    assert _get(srv, "/bots/ben-bot").status_code == 200


async def test_a_database_of_schema_0013_upgrades_to_seasons(db_url: str) -> None:
    """Every class gets its season 1 from its creation; bot names stop being unique (a retired
    bot's name can be taken) with the foreign keys to bots intact."""
    database = Database(db_url)
    try:
        await database.migrate("0013")
        async with database.engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO classes (id, name, name_key, join_code, join_open, "
                    "instructor_token_hash, created_at) VALUES (7, 'old', 'old', 'ABCD2345', "
                    "true, 'x', :at)"
                ),
                {"at": datetime(2026, 1, 5, 10, tzinfo=UTC)},
            )
            await connection.execute(
                text(
                    "INSERT INTO bots (id, name, name_key, token_hash, enabled, created_at, "
                    "house, class_id, checker) VALUES (3, 'ana', 'ana', 'h', true, :at, false, "
                    "7, false)"
                ),
                {"at": datetime(2026, 1, 6, 10, tzinfo=UTC)},
            )
            await connection.execute(
                text(
                    "INSERT INTO matches (id, game, status, move_ms, bank_ms, policy, seed, "
                    "created_at, origin, rated, dice) VALUES ('m1', 'tic_tac_toe', 'aborted', "
                    "1000, 0, 'forfeit', '1', :at, 'lobby', false, 'sha256-v1')"
                ),
                {"at": datetime(2026, 1, 6, 11, tzinfo=UTC)},
            )
            await connection.execute(
                text("INSERT INTO seats (match_id, seat, bot_id) VALUES ('m1', 0, 3)")
            )
        await database.migrate()
        async with database.session() as session:
            classroom = await class_repo.require_class(session, "old")
            seasons = await class_repo.seasons(session, classroom)
            assert [(s.number, s.started_at, s.ended_at) for s in seasons] == [
                (1, classroom.created_at, None)
            ]
            await bot_repo.retire_bot(session, "ana")
            again, _ = await bot_repo.create_bot(session, "ana")
            assert again.id != 3
        async with database.engine.connect() as connection:
            names = (await connection.execute(text("SELECT id, name FROM bots ORDER BY id"))).all()
            assert sorted(tuple(r) for r in names) == sorted([(3, "ana"), (again.id, "ana")])
            seat = (await connection.execute(text("SELECT bot_id FROM seats"))).scalar_one()
            assert seat == 3
            if database.is_sqlite:
                check = await connection.exec_driver_sql("PRAGMA foreign_key_check")
                assert check.all() == []
                enforced = await connection.exec_driver_sql("PRAGMA foreign_keys")
                assert enforced.scalar_one() == 1  # on again after the migration
    finally:
        await database.dispose()


@pytest.mark.sqlite_only("downgrades an SQLite file through the seasons' revision")
async def test_the_seasons_revision_downgrades(db_url: str) -> None:
    database = Database(db_url)
    try:
        await database.migrate()

        def downgrade(connection: Any) -> None:
            from alembic import command

            from ply_arena.server.db.database import alembic_config

            config = alembic_config()
            config.attributes["connection"] = connection
            command.downgrade(config, "0013")

        async with database.engine.begin() as connection:
            await connection.run_sync(downgrade)
            version = await connection.execute(text("SELECT version_num FROM alembic_version"))
            assert version.scalar_one() == "0013"
    finally:
        await database.dispose()
