"""insert_rows: on SQLite, multi-row INSERTs that store exactly what SQLAlchemy's executemany
stores (the recorder's hot writes go through it), in chunks under SQLite's parameter limit."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Table, create_engine, insert

from ply_arena.server.db import many_rows
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Base

_T0 = datetime(2026, 11, 27, 8, 30, 15, 123456, tzinfo=UTC)


def _table(name: str) -> Table:
    return Base.metadata.tables[name]


def _rows() -> dict[str, list[dict[str, Any]]]:
    """Rows of every table the recorder writes, with the awkward values: JSON objects and
    nulls, timestamps, booleans, unicode, large integers."""
    return {
        "bots": [
            {
                "id": i,
                "name": f"bot-{i}",
                "name_key": f"bot-{i}",
                "token_hash": f"h{i}",
                "created_at": _T0,
            }
            for i in (1, 2)
        ],
        "matches": [
            {
                "id": f"m{i}",
                "game": "tic_tac_toe",
                "status": "running",
                "move_ms": 1000,
                "bank_ms": 0,
                "policy": "forfeit",
                "seed": str(2**64 - 1),
                "origin": "lobby",
                "rated": i % 2 == 0,
                "created_at": _T0 + timedelta(seconds=i),
            }
            for i in range(3)
        ],
        "seats": [
            {"match_id": f"m{i}", "seat": s, "bot_id": 1 + s, "payoff": None}
            for i in range(3)
            for s in (0, 1)
        ],
        "moves": [
            {
                "match_id": f"m{ply % 3}",
                "ply": ply,
                "seat": ply % 2,
                "move": "a1" if ply % 5 else "ü→ b2",
                "think_ms": None if ply % 7 == 0 else ply,
                "info": None if ply % 2 else {"depth": ply, "pv": ["a1", "b2"], "score": 0.5},
                "forced": None if ply % 3 else "timeout",
                "bank_ms": ply * 10,
                "played_at": _T0 + timedelta(milliseconds=ply),
            }
            for ply in range(1200)  # more rows than one statement holds: three chunks
        ],
        "chance_events": [
            {"match_id": "m0", "ply": p, "outcome": "3-5", "played_at": _T0} for p in range(4)
        ],
        "results": [
            {
                "match_id": "m0",
                "termination": "normal",
                "at_fault": None,
                "final_position": {"board": "xo.", "to_move": None},
                "finished_at": _T0,
                "rated_seq": 7,
            },
            {
                "match_id": "m1",
                "termination": "timeout",
                "at_fault": 1,
                "final_position": None,
                "finished_at": _T0,
                "rated_seq": None,
            },
        ],
    }


def _stored(path: Path, table: str) -> list[tuple[Any, ...]]:
    """Every row as SQLite holds it: each value and its storage class."""
    with sqlite3.connect(path) as raw:
        columns = [row[1] for row in raw.execute(f"PRAGMA table_info({table})")]
        select = ", ".join(f"{c}, typeof({c})" for c in columns)
        return raw.execute(f"SELECT {select} FROM {table} ORDER BY rowid").fetchall()


def _fresh(path: Path) -> Connection:
    database = Database(f"sqlite+aiosqlite:///{path}")
    asyncio.run(database.migrate())
    asyncio.run(database.dispose())
    return create_engine(f"sqlite:///{path}").connect()


def test_insert_rows_stores_what_executemany_stores(tmp_path: Path) -> None:
    expected, ours = _fresh(tmp_path / "executemany.db"), _fresh(tmp_path / "insert_rows.db")
    for name, rows in _rows().items():
        with expected.begin():
            expected.execute(insert(_table(name)), rows)
        with ours.begin():
            many_rows.insert_rows(ours, _table(name), rows)
    for name in _rows():
        assert _stored(tmp_path / "insert_rows.db", name) == _stored(
            tmp_path / "executemany.db", name
        ), name
    assert len(_stored(tmp_path / "insert_rows.db", "moves")) == 1200


def test_insert_rows_fills_defaults_as_sqlalchemy_does(tmp_path: Path) -> None:
    # A match given without its created_at, origin, rated or dice: the model's Python-side
    # defaults (a callable and scalars) are filled in, as an executemany would.
    connection = _fresh(tmp_path / "defaults.db")
    row = {k: v for k, v in _rows()["matches"][0].items() if k not in ("created_at", "origin")}
    del row["rated"]
    before = datetime.now(UTC)
    with connection.begin():
        many_rows.insert_rows(connection, _table("matches"), [row, {**row, "id": "m9"}])
        expected = connection.execute(
            insert(_table("matches")), [{**row, "id": "e0"}, {**row, "id": "e1"}]
        )
    stored = {r[0]: r for r in _stored(tmp_path / "defaults.db", "matches")}
    columns = [c.name for c in _table("matches").columns]

    def value(match_id: str, column: str) -> Any:
        return stored[match_id][2 * columns.index(column)]

    for ours, theirs in (("m0", "e0"), ("m9", "e1")):
        for column in ("origin", "rated", "dice"):
            assert value(ours, column) == value(theirs, column) is not None, column
        created = datetime.fromisoformat(value(ours, "created_at")).replace(tzinfo=UTC)
        assert before - timedelta(seconds=1) <= created <= datetime.now(UTC)
    assert expected.rowcount == 2


def test_a_chunk_stays_under_sqlites_parameter_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With SQLite's old limit of 999 parameters, 1,200 moves of 9 columns go in statements of
    # at most 111 rows, and all of them arrive.
    monkeypatch.setattr(many_rows, "_MAX_PARAMETERS", 999)
    connection = _fresh(tmp_path / "limit.db")
    statements: list[int] = []
    original = many_rows._execute

    def counting(connection: Connection, sql: str, values: list[Any]) -> None:
        assert sql.count("?") == len(values)
        statements.append(len(values))
        original(connection, sql, values)

    monkeypatch.setattr(many_rows, "_execute", counting)
    rows = _rows()
    with connection.begin():
        for name in ("bots", "matches", "moves"):
            many_rows.insert_rows(connection, _table(name), rows[name])
    assert max(statements) <= 999
    assert len(statements) == 1 + 1 + 11  # bots, matches, then 1,200 moves by 111
    assert len(_stored(tmp_path / "limit.db", "moves")) == 1200


def test_run_many_and_fetch_all_do_what_sqlalchemy_does(tmp_path: Path) -> None:
    # The recorder's updates (a match's status, the seats' payoffs) and its status query,
    # through the driver directly, against the same statements through SQLAlchemy.
    from ply_arena.server.repositories import matches

    expected, ours = _fresh(tmp_path / "executemany.db"), _fresh(tmp_path / "direct.db")
    rows = _rows()
    for connection in (expected, ours):
        with connection.begin():
            for name in ("bots", "matches", "seats", "moves"):
                many_rows.insert_rows(connection, _table(name), rows[name])
    status = [{"b_id": "m0", "b_status": "finished", "b_rated": True}]
    status.append({"b_id": "m2", "b_status": "aborted", "b_rated": False})
    payoffs = [{"b_match_id": "m0", "b_seat": s, "b_payoff": p} for s, p in ((0, 1.0), (1, -1))]
    with expected.begin():
        expected.execute(matches._SET_STATUS, status)
        expected.execute(matches._SET_PAYOFF, payoffs)
    with ours.begin():
        many_rows.run_many(ours, matches._SET_STATUS, status)
        many_rows.run_many(ours, matches._SET_PAYOFF, payoffs)
    for name in ("matches", "seats"):
        assert _stored(tmp_path / "direct.db", name) == _stored(tmp_path / "executemany.db", name)
    with ours.begin():
        for match_id in ("m0", "m1", "nope"):
            theirs = [
                tuple(r) for r in ours.execute(matches._STATUS_AND_PLIES_OF, {"id": match_id}).all()
            ]
            found = many_rows.fetch_all(ours, matches._STATUS_AND_PLIES_OF, {"id": match_id})
            assert found == theirs
    assert found == [] and theirs == []
    assert many_rows.fetch_all(ours, matches._STATUS_AND_PLIES_OF, {"id": "m0"}) == [
        ("m0", "finished", None, 400)  # no owner: stored by hand, not by a server process
    ]
