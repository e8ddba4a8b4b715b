"""Server processes' leases and who plays which running match (server/cluster, the SQL of
server/repositories/instances.py), on the store under test: a lease that ran out is not renewed,
running matches of a gone process are claimed once, and a result is stored only by the match's
owner."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from sqlalchemy import select, update

from ply_arena.server.cluster.lease import Lease
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Instance, Match
from ply_arena.server.repositories import instances as instance_repo
from ply_arena.server.repositories import matches as match_repo

StoreMatch = Callable[..., Awaitable[Any]]


async def _register(database: Database, instance_id: str, lease_s: float = 60.0, **kw: Any) -> None:
    async with database.session() as session:
        await instance_repo.register(
            session,
            instance_id,
            host=kw.get("host", "elsewhere"),
            pid=kw.get("pid", 1),
            process_start=kw.get("process_start"),
            lease_s=lease_s,
        )


async def _run_out(database: Database, instance_id: str) -> None:
    """The lease of ``instance_id`` ran out (as if its process had been gone for a while)."""
    async with database.session() as session:
        await session.execute(
            update(Instance).where(Instance.id == instance_id).values(lease_until=1.0)
        )


async def _owners(database: Database) -> dict[str, str | None]:
    async with database.session() as session:
        rows = (await session.execute(select(Match.id, Match.owner))).all()
        return {match_id: owner for match_id, owner in rows}


async def _running(database: Database, store_match: StoreMatch, n: int) -> list[str]:
    return [
        (
            await store_match(database, game="tic_tac_toe", seed=i, max_plies=2, finish=False)
        ).match_id
        for i in range(n)
    ]


async def test_a_lease_is_renewed_while_it_runs_and_not_once_it_ran_out(database: Database) -> None:
    await _register(database, "a")
    async with database.session() as session:
        assert await instance_repo.renew(session, "a", 60.0)
    await _run_out(database, "a")
    async with database.session() as session:
        assert not await instance_repo.renew(session, "a", 60.0)
        assert [i.id for i in await instance_repo.live(session)] == []
    # Given up at a clean stop: not renewed either (the process is stopping).
    await _register(database, "b")
    async with database.session() as session:
        await instance_repo.give_up(session, "b")
    async with database.session() as session:
        assert not await instance_repo.renew(session, "b", 60.0)


async def test_matches_of_a_gone_process_and_of_none_are_claimed_once(
    database: Database, store_match: StoreMatch
) -> None:
    await _register(database, "alive")
    await _register(database, "gone")
    ids = await _running(database, store_match, 6)
    async with database.session() as session:
        for match_id, owner in zip(
            ids, ["alive", "alive", "gone", "gone", None, None], strict=True
        ):
            await session.execute(update(Match).where(Match.id == match_id).values(owner=owner))
    await _run_out(database, "gone")
    await _register(database, "me")
    async with database.session() as session:
        # Between starts, a process takes the matches of dead ones only.
        taken = await instance_repo.claim_orphans(session, "me", unowned=False)
    assert taken == {ids[2]: "gone", ids[3]: "gone"}  # with their former owner
    async with database.session() as session:
        taken = await instance_repo.claim_orphans(session, "me")  # at a start: no owner too
    assert sorted(taken) == sorted(ids[4:])
    owners = await _owners(database)
    assert [owners[i] for i in ids] == ["alive", "alive", "me", "me", "me", "me"]
    async with database.session() as session:
        assert await instance_repo.claim_orphans(session, "someone") == {}
        assert sorted(await instance_repo.owned(session, "me")) == sorted(ids[2:])


async def test_a_finished_match_is_never_claimed(
    database: Database, store_match: StoreMatch
) -> None:
    await _register(database, "gone")
    finished = await store_match(database, game="tic_tac_toe", seed=1)
    await _run_out(database, "gone")
    async with database.session() as session:
        assert await instance_repo.claim_orphans(session, "me") == {}
    assert (await _owners(database))[finished.match_id] is None


async def test_only_the_owner_stores_a_result(database: Database, store_match: StoreMatch) -> None:
    (match_id,) = await _running(database, store_match, 1)
    async with database.session() as session:
        await session.execute(update(Match).where(Match.id == match_id).values(owner="new"))
    end = {"payoffs": [0.5, 0.5], "termination": "normal", "at_fault": None, "final_position": None}
    with pytest.raises(match_repo.NotOwnerError, match="played by 'new' now"):
        async with database.session() as session:
            await match_repo.finish_match(session, match_id=match_id, owner="old", **end)
    async with database.session() as session:
        await match_repo.finish_match(session, match_id=match_id, owner="new", **end)
    async with database.session() as session:
        assert await match_repo.running_ids(session) == []


async def test_a_dead_process_on_this_machine_is_expired_at_once(database: Database) -> None:
    host = socket.gethostname()
    await _register(database, "dead", host=host, pid=2**22 + 7)  # no such pid
    await _register(database, "living", host=host, pid=os.getpid())
    await _register(database, "far", host="another-machine", pid=2**22 + 7)
    lease = Lease(database, 60.0)
    await lease.acquire()
    async with database.session() as session:
        live = sorted(i.id for i in await instance_repo.live(session))
    if database.is_sqlite:
        # One process serves an SQLite file (the server mark): every other process's lease
        # ends, wherever it ran; another server of this very process (tests) lives on.
        assert live == sorted(["living", lease.instance_id])
    else:
        assert live == sorted(["living", "far", lease.instance_id])


async def test_a_lost_lease_is_reported_and_taken_again_under_a_new_id(database: Database) -> None:
    lost = asyncio.Event()

    async def on_lost() -> None:
        lost.set()

    lease = Lease(database, 60.0, on_lost=on_lost)
    await lease.acquire()
    first = lease.instance_id
    assert await lease.renew() and lease.held()
    await _run_out(database, first)
    assert not await lease.renew()
    assert lost.is_set() and lease.losses == 1
    assert lease.instance_id != first and lease.held()
    async with database.session() as session:
        assert [i.id for i in await instance_repo.live(session)] == [lease.instance_id]
    await lease.release()
    async with database.session() as session:
        assert await instance_repo.live(session) == []
        assert await instance_repo.prune(session, older_than_s=0) == 2


@pytest.mark.postgresql_only
async def test_two_processes_claiming_at_once_split_the_orphans_without_waiting(
    database: Database, store_match: StoreMatch
) -> None:
    ids = await _running(database, store_match, 4)
    await _register(database, "first")
    await _register(database, "second")
    async with database.session() as first:
        # The first claimer is in the middle of its claim: two rows locked.
        await first.execute(select(Match.id).where(Match.id.in_(ids[:2])).with_for_update())
        async with database.session() as second, asyncio.timeout(10):
            # Skipped, not waited for (a wait would run into the timeout: the lock is held
            # until this block ends).
            assert sorted(await instance_repo.claim_orphans(second, "second")) == sorted(ids[2:])
        assert sorted(await instance_repo.claim_orphans(first, "first")) == sorted(ids[:2])
    owners = await _owners(database)
    assert [owners[i] for i in ids] == ["first", "first", "second", "second"]
