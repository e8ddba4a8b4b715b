"""Which server process directs which tournament (the SQL of
server/repositories/tournament_directors.py), on the store under test: a live director keeps
its tournaments, those of a process whose lease ran out (or of none) are claimed once, the
process that starts a tournament directs it unless a live one does, and a round is drawn only
by the director."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select, update

from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Instance, Tournament
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import instances as instance_repo
from ply_arena.server.repositories import tournament_directors as direction_repo
from ply_arena.server.repositories import tournaments as repo


async def _register(database: Database, *instance_ids: str) -> None:
    async with database.session() as session:
        for instance_id in instance_ids:
            await instance_repo.register(
                session, instance_id, host="elsewhere", pid=1, process_start=None, lease_s=60.0
            )


async def _run_out(database: Database, instance_id: str) -> None:
    async with database.session() as session:
        await session.execute(
            update(Instance).where(Instance.id == instance_id).values(lease_until=1.0)
        )


async def _tournaments(database: Database, statuses: list[str]) -> list[int]:
    """One tournament of two new bots per status given; their ids."""
    ids = []
    async with database.session() as session:
        bots = [(await bot_repo.create_bot(session, f"td{i}"))[0] for i in range(2)]
        for n, status in enumerate(statuses):
            tournament = await repo.create_tournament(
                session, name=f"td-{n}", game="tic_tac_toe", format="round_robin", rounds=1,
                move_ms=1000, bank_ms=10_000, policy="forfeit", concurrency=1, rated=False,
                no_show_s=60.0, classroom=None, entrants=bots,
            )  # fmt: skip
            if status != "created":
                await repo.set_status(session, tournament, status)
            ids.append(tournament.id)
    return ids


async def _set_directors(database: Database, directors: dict[int, str | None]) -> None:
    async with database.session() as session:
        for tournament_id, director in directors.items():
            await session.execute(
                update(Tournament).where(Tournament.id == tournament_id).values(director=director)
            )


async def _directors(database: Database) -> dict[int, str | None]:
    async with database.session() as session:
        rows = (await session.execute(select(Tournament.id, Tournament.director))).all()
        return {tournament_id: director for tournament_id, director in rows}


async def test_tournaments_being_played_of_a_gone_director_or_of_none_are_claimed_once(
    database: Database,
) -> None:
    await _register(database, "alive", "gone", "me")
    ids = await _tournaments(
        database, ["running", "running", "paused", "running", "created", "finished", "running"]
    )
    directors: list[str | None] = ["alive", "gone", "gone", None, None, "gone", "me"]
    await _set_directors(database, dict(zip(ids, directors, strict=True)))
    await _run_out(database, "gone")
    async with database.session() as session:
        claimed = await direction_repo.claim(session, "me")
    assert claimed == [
        direction_repo.Claimed(ids[1], "running", False),
        direction_repo.Claimed(ids[2], "paused", False),
        direction_repo.Claimed(ids[3], "running", False),
        direction_repo.Claimed(ids[6], "running", True),
    ]
    now = await _directors(database)
    assert [now[i] for i in ids] == ["alive", "me", "me", "me", None, "gone", "me"]
    async with database.session() as session:
        assert await direction_repo.claim(session, "someone") == []
        # Asked about one: only that one.
        assert await direction_repo.claim(session, "alive", [ids[0]]) == [
            direction_repo.Claimed(ids[0], "running", True)
        ]


async def test_the_process_that_starts_a_tournament_directs_it_unless_a_live_one_does(
    database: Database,
) -> None:
    await _register(database, "alive", "gone", "me")
    new, resumed, elsewhere = await _tournaments(database, ["running", "running", "running"])
    await _set_directors(database, {resumed: "gone", elsewhere: "alive"})
    await _run_out(database, "gone")
    async with database.session() as session:
        assert await direction_repo.take_on_start(session, new, "me")
        assert await direction_repo.take_on_start(session, resumed, "me")
        assert not await direction_repo.take_on_start(session, elsewhere, "me")
        assert await direction_repo.direction_of(session, elsewhere) == ("running", "alive")
    directors = await _directors(database)
    assert [directors[t] for t in (new, resumed, elsewhere)] == ["me", "me", "alive"]
    async with database.session() as session:
        assert await direction_repo.lock_if_director(session, new, "me")
        assert not await direction_repo.lock_if_director(session, elsewhere, "me")


@pytest.mark.postgresql_only
async def test_a_tournament_locked_by_its_director_drawing_a_round_is_not_claimed(
    database: Database,
) -> None:
    await _register(database, "director", "other")
    (tournament_id,) = await _tournaments(database, ["running"])
    await _set_directors(database, {tournament_id: "director"})
    async with database.session() as drawing:
        assert await direction_repo.lock_if_director(drawing, tournament_id, "director")
        # Its lease runs out while it draws: the other's claim skips the locked row (no wait:
        # a wait would run into the timeout, the lock is held until this block ends).
        await _run_out(database, "director")
        async with database.session() as other, asyncio.timeout(10):
            assert await direction_repo.claim(other, "other") == []
    async with database.session() as session:
        assert await direction_repo.claim(session, "other") == [
            direction_repo.Claimed(tournament_id, "running", False)
        ]
