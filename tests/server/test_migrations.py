"""An SQLite file made by the release before PostgreSQL support (schema 0007, with data) upgrades
to head: nothing lost, every timestamp converted to its aware form and read back as the same UTC
moment, every stored match still re-derives, the ratings equal a rebuild, the schema equals the
models. The file: tests/data/arena-0007.db.gz (its README says how it was made).

(The schema of a database migrated from empty is compared with the models on each store in
test_storage.py.)
"""

from __future__ import annotations

import asyncio
import gzip
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, select

from ply_arena.protocol.verify import verify_record
from ply_arena.server.db.database import Database, alembic_config
from ply_arena.server.db.models import Base, Match, Rating
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.ratings.rebuild import rebuild

pytestmark = pytest.mark.sqlite_only("upgrades an SQLite file made by the previous release")

OLD_FILE = Path(__file__).resolve().parent.parent / "data" / "arena-0007.db.gz"

#: (table, timestamp column) in the 0007 schema; admin_tokens aside (the test's server stores its
#: own admin token on start).
TIMESTAMPS = (
    ("classes", "created_at"),
    ("bots", "created_at"),
    ("matches", "created_at"),
    ("moves", "played_at"),
    ("chance_events", "played_at"),
    ("results", "finished_at"),
    ("ratings", "last_played_at"),
    ("rating_history", "at"),
    ("tournaments", "created_at"),
    ("tournaments", "started_at"),
    ("tournaments", "finished_at"),
    ("tournament_games", "finished_at"),
)
TABLES = sorted({table for table, _ in TIMESTAMPS} | {"seats", "tournament_entrants"})
#: Derived from the results: the server rebuilds them on its start when the rating model's
#: anchors disagree with them (server/ratings/rebuild.py), as with this file.
DERIVED = {"ratings", "rating_history"}


def _old_copy(tmp_path: Path) -> Path:
    path = tmp_path / "arena-0007.db"
    path.write_bytes(gzip.decompress(OLD_FILE.read_bytes()))
    return path


def _read(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(sql).fetchall()


def _diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "compare_server_default": True}
    )
    return list(compare_metadata(context, Base.metadata))


def test_a_database_of_the_previous_release_upgrades_with_all_its_data(
    tmp_path: Path, start_server: Callable[..., Any]
) -> None:
    path = _old_copy(tmp_path)
    assert _read(path, "SELECT version_num FROM alembic_version") == [("0007",)]
    counts = {table: _read(path, f"SELECT count(*) FROM {table}")[0][0] for table in TABLES}
    assert counts["matches"] > 200 and counts["moves"] > 1000 and counts["chance_events"] > 0
    stamps = {
        (table, column): _read(path, f"SELECT rowid, {column} FROM {table} ORDER BY rowid")
        for table, column in TIMESTAMPS
    }
    # The old form: UTC wall time without an offset.
    assert all(
        value is None or (len(value) == 26 and "+" not in value)
        for rows in stamps.values()
        for _, value in rows
    )
    newest_first = [
        row[0] for row in _read(path, "SELECT id FROM matches ORDER BY created_at DESC, id DESC")
    ]
    ratings = _read(path, "SELECT bot_id, game, mu, sigma, matches FROM ratings ORDER BY 1, 2")

    # The server migrates on start, as after an upgrade.
    srv = start_server(db_url=f"sqlite+aiosqlite:///{path}")
    assert srv.app.state.resumed_on_start == 0  # its matches all ended before it stopped

    assert _read(path, "SELECT version_num FROM alembic_version") == [("0014",)]
    for table in TABLES:
        assert _read(path, f"SELECT count(*) FROM {table}")[0][0] == counts[table], table
    for (table, column), rows in stamps.items():
        after = _read(path, f"SELECT rowid, {column} FROM {table} ORDER BY rowid")
        expected = [(rowid, None if value is None else value + "+00:00") for rowid, value in rows]
        if table in DERIVED:
            # Rebuilt on the start (rating anchors came after this file): the same moments,
            # in rows written anew.
            after, expected = sorted(v for _, v in after), sorted(v for _, v in expected)
        assert after == expected, (table, column)
    assert all(v.endswith("+00:00") for (v,) in _read(path, "SELECT created_at FROM admin_tokens"))

    # The API reads the same moments, and lists the matches in the same order.
    listed: list[dict[str, Any]] = []
    while len(listed) < counts["matches"]:
        page = srv.api("GET", "/api/matches", params={"limit": 100, "offset": len(listed)}).json()[
            "matches"
        ]
        assert page
        listed.extend(page)
    assert [m["id"] for m in listed] == newest_first
    created = dict(_read(path, "SELECT id, created_at FROM matches"))
    for match in listed:
        moment = datetime.fromisoformat(created[match["id"]])
        assert moment.tzinfo == UTC
        assert match["created_at"] == moment.isoformat().replace("+00:00", "Z")

    # Every finished match still re-derives from its record.
    finished = [m["id"] for m in listed if m["status"] == "finished"]
    assert len(finished) > 200
    for match_id in finished:
        record = srv.api("GET", f"/api/matches/{match_id}/record").json()
        found = verify_record(record)
        assert found.ok, (match_id, found)

    tournament = srv.api("GET", "/api/tournaments/t1").json()
    assert tournament["status"] == "finished"
    # Its matches, stored before tournament_matches was, still name their tournament game.
    games = _read(
        path, "SELECT match_id, round, board FROM tournament_games WHERE match_id IS NOT NULL"
    )
    assert len(games) == len([g for r in tournament["schedule"] for g in r["games"]]) > 0
    for match_id, round_, board in games:
        record = srv.api("GET", f"/api/matches/{match_id}").json()
        assert record["tournament"] == {"name": "t1", "round": round_, "board": board}
    listed = srv.api("GET", "/api/matches", params={"tournament": "t1", "limit": 200}).json()
    assert sorted(m["id"] for m in listed["matches"]) == sorted(g[0] for g in games)
    srv.stop()

    async def read_back() -> None:
        database = Database(f"sqlite+aiosqlite:///{path}")
        try:
            async with database.engine.connect() as connection:
                assert await connection.run_sync(_diff) == []
            async with database.session() as session:
                match = (await session.scalars(select(Match).limit(1))).one()
                assert match.created_at.tzinfo == UTC
                stored = await _stored_ratings(session)
            # The server rebuilt them on its start (the file's were made before rating anchors,
            # and its house-random is one now): they equal a rebuild with today's model...
            async with database.session() as session:
                await rebuild(session, RatingModel())
            async with database.session() as session:
                assert await _stored_ratings(session) == stored
            # ... and every rated result is kept: without anchors, the file's own ratings.
            async with database.session() as session:
                await rebuild(session, RatingModel(anchors=()))
            async with database.session() as session:
                assert await _stored_ratings(session) == [tuple(row) for row in ratings]
        finally:
            await database.dispose()

    asyncio.run(read_back())


async def _stored_ratings(session: Any) -> list[tuple[Any, ...]]:
    rows = (await session.scalars(select(Rating))).all()
    return sorted((r.bot_id, r.game, r.mu, r.sigma, r.matches) for r in rows)


def test_the_timestamp_migration_downgrades_to_the_old_text(tmp_path: Path) -> None:
    path = _old_copy(tmp_path)
    before = _read(path, "SELECT id, created_at FROM matches ORDER BY id")

    def downgrade(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0007")

    async def up_and_down() -> None:
        database = Database(f"sqlite+aiosqlite:///{path}")
        try:
            await database.migrate()
            assert _read(path, "SELECT version_num FROM alembic_version") == [("0014",)]
            async with database.engine.begin() as connection:
                await connection.run_sync(downgrade)
        finally:
            await database.dispose()

    asyncio.run(up_and_down())
    assert _read(path, "SELECT version_num FROM alembic_version") == [("0007",)]
    assert _read(path, "SELECT id, created_at FROM matches ORDER BY id") == before
