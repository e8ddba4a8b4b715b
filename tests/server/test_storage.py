"""Storage on a real database (an SQLite file; a PostgreSQL database with --store postgresql):
schema vs migration, pragmas, every move persisted, aborting unfinished matches on restart, tokens
stored only as hashes, and concurrent writers."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, select, text
from sqlalchemy.exc import IntegrityError

from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Base
from ply_arena.server.repositories import bots, matches


def _diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "compare_server_default": True}
    )
    return list(compare_metadata(context, Base.metadata))


async def test_migration_creates_exactly_the_models(database: Database) -> None:
    async with database.engine.connect() as conn:
        assert await conn.run_sync(_diff) == []
        version = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()
    assert version == "0014"
    # Migrating again is a no-op.
    await database.migrate()


@pytest.mark.sqlite_only("SQLite's own pragmas: WAL journal, foreign keys, busy timeout")
async def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(database: Database) -> None:
    async with database.session() as session:
        assert (await session.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
        assert (await session.execute(text("PRAGMA foreign_keys"))).scalar() == 1
        assert (await session.execute(text("PRAGMA busy_timeout"))).scalar_one() >= 1000


async def test_foreign_keys_are_enforced(database: Database) -> None:
    with pytest.raises(IntegrityError):
        async with database.session() as session:
            await matches.record_move(
                session,
                match_id="nope",
                ply=0,
                seat=0,
                move="a1",
                think_ms=1,
                info=None,
                forced=None,
            )


async def test_every_move_is_persisted_with_think_time_and_info(
    database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="tic_tac_toe", seed=11)
    async with database.session() as session:
        record = await matches.get_match(session, m.match_id)
    assert record is not None
    assert record["status"] == "finished"
    assert [(e["ply"], e["seat"], e["move"]) for e in record["moves"]] == m.events
    assert record["plies"] == len(m.events)
    assert all(
        e["think_ms"] is not None and e["info"]["comment"] == f"ply {e['ply']}"
        for e in record["moves"]
    )
    assert record["result"] == {
        "payoffs": m.payoffs,
        "termination": "normal",
        "at_fault": None,
        "final_position": m.final_position,
    }
    assert [s["bot"] for s in record["seats"]] == m.bots
    assert record["seed"] is not None and int(record["seed"]) >= 0


async def test_chance_events_are_stored_in_order_with_the_moves(
    database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="backgammon", seed=5, max_plies=40)
    async with database.session() as session:
        record = await matches.get_match(session, m.match_id)
        raw = (await session.execute(text("SELECT count(*) FROM chance_events"))).scalar()
    assert record is not None
    assert [(e["ply"], e["seat"], e["move"]) for e in record["moves"]] == m.events
    assert raw == sum(1 for _, seat, _ in m.events if seat is None) > 0


async def test_seed_is_hidden_while_running_and_moves_survive_abort(
    database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="tic_tac_toe", seed=2, max_plies=4, finish=False)
    other = await store_match(database, game="tic_tac_toe", seed=3, max_plies=2, finish=False)
    async with database.session() as session:
        record = await matches.get_match(session, m.match_id)
    assert record is not None and record["status"] == "running" and record["seed"] is None
    async with database.session() as session:
        assert await matches.abort_running(session, [m.match_id, "no-such-id"]) == [m.match_id]
    async with database.session() as session:
        assert await matches.abort_running(session, [m.match_id]) == []  # over already
        assert await matches.abort_running(session) == [other.match_id]
        assert await matches.abort_running(session) == []
        record = await matches.get_match(session, m.match_id)
    assert record is not None
    assert record["status"] == "aborted"
    assert record["result"]["termination"] == "aborted"
    assert record["result"]["payoffs"] is None
    assert record["seed"] is not None
    assert [(e["ply"], e["seat"], e["move"]) for e in record["moves"]] == m.events


async def test_finish_with_plies_needs_every_ply_stored(
    database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="backgammon", seed=4, max_plies=12, finish=False)
    finish = {
        "match_id": m.match_id,
        "payoffs": [0.0, 0.0],
        "termination": "move_limit",
        "at_fault": None,
        "final_position": {},
    }
    # One ply short (or one too many) of what is stored: nothing is written.
    for plies in (len(m.events) + 1, len(m.events) - 1):
        with pytest.raises(matches.IncompleteMatchError):
            async with database.session() as session:
                await matches.finish_match(session, **finish, plies=plies)
    async with database.session() as session:
        assert (await matches.get_match(session, m.match_id) or {})["status"] == "running"
    # Through the recorder, queued behind the last moves' writes, with the exact count.
    await database.recorder.submit(matches.finish_match, **finish, plies=len(m.events))
    async with database.session() as session:
        record = await matches.get_match(session, m.match_id)
    assert record is not None and record["status"] == "finished"
    assert record["plies"] == len(m.events)


async def test_finishing_twice_is_refused(database: Database, store_match: Any) -> None:
    m = await store_match(database, seed=3)
    with pytest.raises(matches.MatchOverError):
        async with database.session() as session:
            await matches.finish_match(
                session,
                match_id=m.match_id,
                payoffs=[0, 0],
                termination="normal",
                at_fault=None,
                final_position={},
            )


def test_a_restart_resumes_matches_left_running_and_an_admin_can_abort_them(
    start_server: Any, db_url: str, store_match: Any
) -> None:
    async def crash_leftovers() -> Any:
        db = Database(db_url)
        await db.migrate()
        try:
            done = await store_match(db, seed=7)
            left = await store_match(db, seed=8, max_plies=3, finish=False)
            broken = await store_match(db, seed=9, max_plies=3, finish=False)
            async with db.session() as session:
                # The mover's bank as stored with its move: the resumed clock starts there.
                await session.execute(
                    text("UPDATE moves SET bank_ms = 4321 WHERE match_id = :m AND ply = 2"),
                    {"m": left.match_id},
                )
                # A stored move the rules refuse: that match cannot be resumed.
                await session.execute(
                    text("UPDATE moves SET move = 'z9' WHERE match_id = :m AND ply = 1"),
                    {"m": broken.match_id},
                )
        finally:
            await db.dispose()
        return done, left, broken

    done, left, broken = asyncio.run(crash_leftovers())
    srv = start_server(resume_wait_s=60)
    assert srv.app.state.resumed_on_start == 1
    record = srv.api("GET", f"/api/matches/{left.match_id}").json()
    assert record["status"] == "running"
    assert [(e["ply"], e["seat"], e["move"]) for e in record["moves"]] == left.events
    assert [r["ply"] for r in record["resumed"]] == [3]
    runner = srv.app.state.referee.running_match(left.match_id)
    assert runner is not None and runner.resumed_at == 3
    snapshot = runner.snapshot()
    seat_of_ply_2 = left.events[2][1]
    assert snapshot.clocks_ms is not None and snapshot.clocks_ms[seat_of_ply_2] == 4321
    assert snapshot.clocks_ms[1 - seat_of_ply_2] == 10_000  # no bank stored: the full one
    unresumable = srv.api("GET", f"/api/matches/{broken.match_id}").json()
    assert unresumable["status"] == "aborted" and len(unresumable["moves"]) == 3
    assert srv.api("GET", f"/api/matches/{done.match_id}").json()["status"] == "finished"

    # The admin ends the resumed match by hand (an instructor's token is not enough).
    path = f"/api/matches/{left.match_id}/abort"
    assert srv.api("POST", path).status_code == 401
    answer = srv.api("POST", path, admin=True)
    assert answer.status_code == 200 and answer.json() == {"aborted": [left.match_id]}
    record = srv.api("GET", f"/api/matches/{left.match_id}").json()
    assert record["status"] == "aborted" and record["termination"] == "aborted"
    assert record["rated"] is False and record["result"]["payoffs"] == [0.0, 0.0]
    again = srv.api("POST", path, admin=True)
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    missing = srv.api("POST", "/api/matches/nope/abort", admin=True)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    bad = srv.api("POST", "/api/matches/abort", admin=True, json={})
    assert bad.status_code == 400 and '{"all": true}' in bad.json()["error"]["message"]
    assert srv.api("POST", "/api/matches/abort", admin=True, json={"all": True}).json() == {
        "aborted": []
    }
    srv.stop()
    assert start_server().app.state.resumed_on_start == 0


def _database_bytes(db_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))


async def _every_stored_value(database: Database) -> str:
    """Every row of every table, as text (what a dump of the database would show)."""
    async with database.session() as session:
        rows = [
            row
            for table in Base.metadata.sorted_tables
            for row in (await session.execute(select(table))).all()
        ]
    return "\n".join(repr(tuple(row)) for row in rows)


async def test_tokens_are_stored_only_as_hashes(database: Database, db_url: str) -> None:
    async with database.session() as session:
        _bot, token = await bots.create_bot(session, "alice")
        await bots.set_admin_token(session, "the-admin-secret-token")
    stored = await _every_stored_value(database)
    assert token not in stored and "the-admin-secret-token" not in stored
    if db_url.startswith("sqlite"):  # the file's bytes too, its journal and free pages included
        stored_bytes = _database_bytes(Path(db_url.partition(":///")[2]))
        assert token.encode() not in stored_bytes
        assert b"the-admin-secret-token" not in stored_bytes
    async with database.session() as session:
        digest = await session.scalar(text("SELECT token_hash FROM bots WHERE name = 'alice'"))
    assert digest == hashlib.sha256(token.encode()).hexdigest()
    async with database.session() as session:
        assert (await bots.bot_by_token(session, token)).name == "alice"  # type: ignore[union-attr]
        assert await bots.bot_by_token(session, token + "x") is None
        assert await bots.bot_by_token(session, "") is None
        new = await bots.rotate_token(session, "alice")
    async with database.session() as session:
        assert await bots.bot_by_token(session, token) is None
        assert (await bots.bot_by_token(session, new)).name == "alice"  # type: ignore[union-attr]
        assert bots.token_matches("the-admin-secret-token", await bots.admin_token_hash(session))


async def test_bot_names_are_unique_and_validated(database: Database) -> None:
    async with database.session() as session:
        await bots.create_bot(session, "bob")
    with pytest.raises(bots.BotExistsError):
        async with database.session() as session:
            await bots.create_bot(session, "bob")
    for bad in ("", "has space", "x" * 65, "-dash", "é"):
        with pytest.raises(bots.BotNameError):
            async with database.session() as session:
                await bots.create_bot(session, bad)
    async with database.session() as session:
        assert [b.name for b in await bots.list_bots(session)] == ["bob"]
        assert not (await bots.set_enabled(session, "bob", False)).enabled
        with pytest.raises(bots.UnknownBotError):
            await bots.set_enabled(session, "nobody", True)


def test_admin_token_is_generated_printed_once_and_kept(
    start_server: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    srv = start_server(admin_token=None, print_admin_token=True)
    err = capfd.readouterr().err
    assert "Admin token" in err
    token = err.split("ARENA_ADMIN_TOKEN):", 1)[1].split()[0]
    assert (
        srv.api(
            "POST", "/api/bots", json={"name": "a"}, headers={"Authorization": f"Bearer {token}"}
        ).status_code
        == 201
    )
    srv.stop()
    srv2 = start_server(admin_token=None, print_admin_token=True)
    assert "Admin token" not in capfd.readouterr().err
    auth = {"Authorization": f"Bearer {token}"}
    assert srv2.api("POST", "/api/bots", json={"name": "b"}, headers=auth).status_code == 201
    srv2.stop()
    # A token from the environment replaces the stored one.
    srv3 = start_server(admin_token="from-env-token-1234")
    assert srv3.api("POST", "/api/bots", json={"name": "c"}, headers=auth).status_code == 401
    assert srv3.api("POST", "/api/bots", admin=True, json={"name": "c"}).status_code == 201


@pytest.mark.slow
async def test_concurrent_writers_lose_nothing(
    database: Database, db_url: str, store_match: Any
) -> None:
    # 30 matches written at once by this engine, a second engine (like a second worker) and a
    # separate process creating bots through the CLI: SQLite has one writer at a time, the busy
    # timeout makes the others wait instead of failing.
    other = Database(db_url)
    cli = subprocess.Popen(
        [sys.executable, "-c", _CLI_CREATES, db_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        stored = await asyncio.gather(
            *(
                store_match(database if i % 2 else other, game="tic_tac_toe", seed=100 + i)
                for i in range(30)
            )
        )
    finally:
        await other.dispose()
    _out, err = cli.communicate(timeout=60)
    assert cli.returncode == 0, err.decode()
    async with database.session() as session:
        for m in stored:
            record = await matches.get_match(session, m.match_id)
            assert record is not None and record["status"] == "finished"
            assert [(e["ply"], e["seat"], e["move"]) for e in record["moves"]] == m.events
        names = {b.name for b in await bots.list_bots(session)}
    assert {f"cli{i}" for i in range(10)} <= names


_CLI_CREATES = """
import sys
from typer.testing import CliRunner
from ply_arena.server.cli import app
runner = CliRunner()
for i in range(10):
    result = runner.invoke(app, ["bots", "create", f"cli{i}", "--db", sys.argv[1]])
    assert result.exit_code == 0, result.output
"""


async def test_bot_names_are_unique_whatever_their_case(db_url: str) -> None:
    """Migration 0002 keys names in lower case; look-alikes an older database already holds keep
    working (the later one's key gets its id), and no new look-alike can be created."""
    database = Database(db_url)
    try:
        await database.migrate("0001")
        async with database.engine.begin() as conn:
            for name, token in (("Alice", "a" * 64), ("alice", "b" * 64), ("bob", "c" * 64)):
                await conn.execute(
                    text(
                        "INSERT INTO bots (name, token_hash, enabled, created_at) "
                        "VALUES (:n, :t, :e, '2026-11-01 00:00:00')"
                    ),
                    {"n": name, "t": token, "e": True},
                )
        await database.migrate()
        async with database.session() as session:
            keys = (
                await session.execute(text("SELECT name, name_key FROM bots ORDER BY id"))
            ).all()
            assert [tuple(k) for k in keys] == [
                ("Alice", "alice"),
                ("alice", "alice#2"),
                ("bob", "bob"),
            ]
            for taken in ("BOB", "ALICE", "alice"):
                with pytest.raises(bots.BotExistsError, match="already exists"):
                    await bots.create_bot(session, taken)
            for look_alike in ("bob.", "bob-", "_bob", "bob\n"):
                with pytest.raises(bots.BotNameError, match="ending with a letter or digit"):
                    await bots.create_bot(session, look_alike)
            created, _ = await bots.create_bot(session, "Carol.Smith")
            assert created.name_key == "carol.smith"
    finally:
        await database.dispose()
