"""``arena db copy``: an SQLite arena (the previous release's file, with matches, ratings, a class
and a tournament) copied into the store under test (``db_url``: PostgreSQL with
``--store postgresql``), then served from there: every row arrived, every match re-derives, the
ratings equal a rebuild, new rows get new ids; a target that holds data is refused untouched."""

from __future__ import annotations

import asyncio
import gzip
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

from ply_arena.protocol.verify import verify_record
from ply_arena.server.db.copy import copy_database
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Base, Rating
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.ratings.rebuild import rebuild

OLD_FILE = Path(__file__).resolve().parent.parent / "data" / "arena-0007.db.gz"


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "source.db"
    path.write_bytes(gzip.decompress(OLD_FILE.read_bytes()))
    return path


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ply_arena", *args],
        capture_output=True,
        text=True,
        timeout=90,
    )


async def _ratings(url: str, *, rebuilt: RatingModel | None = None) -> list[tuple[Any, ...]]:
    """The stored ratings (after a rebuild with the model ``rebuilt``, if given)."""
    database = Database(url)
    try:
        if rebuilt is not None:
            async with database.session() as session:
                await rebuild(session, rebuilt)
        async with database.session() as session:
            rows = (await session.scalars(select(Rating))).all()
            return sorted((r.bot_id, r.game, r.mu, r.sigma, r.matches, r.wins) for r in rows)
    finally:
        await database.dispose()


def test_a_copied_arena_serves_every_match_and_the_same_ratings(
    tmp_path: Path, db_url: str, start_server: Callable[..., Any]
) -> None:
    source = _source(tmp_path)
    done = _arena("db", "copy", "--from", str(source), "--to", db_url)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "copied" in done.stdout and "arena serve --db" in done.stdout
    with sqlite3.connect(source) as connection:
        counts = {
            t.name: connection.execute(f"SELECT count(*) FROM {t.name}").fetchone()[0]
            for t in Base.metadata.sorted_tables
        }
    for name, rows in counts.items():
        assert f"  {name:<20} {rows:>9,} row(s)" in done.stdout, name

    ratings = asyncio.run(_ratings(f"sqlite+aiosqlite:///{source}"))
    assert asyncio.run(_ratings(db_url)) == ratings
    srv = start_server()
    listed = srv.api("GET", "/api/matches", params={"limit": 1}).json()
    assert listed["total"] == counts["matches"]
    finished = [
        m["id"]
        for m in srv.api("GET", "/api/matches", params={"limit": 200, "status": "finished"}).json()[
            "matches"
        ]
    ]
    finished += [
        m["id"]
        for m in srv.api(
            "GET", "/api/matches", params={"limit": 200, "offset": 200, "status": "finished"}
        ).json()["matches"]
    ]
    assert len(finished) == 210
    for match_id in finished:
        found = verify_record(srv.api("GET", f"/api/matches/{match_id}/record").json())
        assert found.ok, (match_id, found)
    assert srv.api("GET", "/api/tournaments/t1").json()["status"] == "finished"
    # New rows get new ids (PostgreSQL's sequences were moved past the copied ones).
    name, _ = srv.create_bot("after-the-copy")
    assert srv.api("GET", f"/api/bots/{name}").status_code == 200
    srv.stop()
    # The server rebuilt the ratings on its start: the old file's were made before rating
    # anchors (server/ratings/anchors.py), and its house-random is one now.
    served = asyncio.run(_ratings(db_url))
    assert served != ratings
    assert asyncio.run(_ratings(db_url, rebuilt=RatingModel())) == served
    # Every rated result arrived: without anchors, a rebuild gives the old file's ratings.
    assert asyncio.run(_ratings(db_url, rebuilt=RatingModel(anchors=()))) == ratings


def test_a_target_that_holds_data_is_refused_and_left_alone(tmp_path: Path, db_url: str) -> None:
    source = _source(tmp_path)
    asyncio.run(copy_database(f"sqlite+aiosqlite:///{source}", db_url))
    before = asyncio.run(_ratings(db_url))
    again = _arena("db", "copy", "--from", str(source), "--to", db_url)
    assert again.returncode == 1
    assert "already holds data" in again.stderr and "new, empty database" in again.stderr
    assert asyncio.run(_ratings(db_url)) == before
