"""A match decided on one process and played on another (server/cluster/hosting.py): two
referees on one PostgreSQL database, each with its own lease and bus connection, as two
processes; in-process bots. The match is stored as the host's first, then the host is told: a
host that never hears of it starts it after a lease, a host that is gone has it taken over,
and a process that does not own a match never plays it."""

from __future__ import annotations

import pytest
from _cluster_in_process import bots, process
from _sql import rows
from _waiting import until, until_read

from ply_arena import games
from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server.referee import new_match_id
from ply_arena.server.repositories import matches as match_repo

pytestmark = [pytest.mark.postgresql_only, pytest.mark.timeout(60)]

TC = TimeControl(move_ms=5_000, bank_ms=5_000)


async def _status(db_url: str, match_id: str) -> tuple[str, str | None, str | None] | None:
    """(status, owner, termination) of the stored match; None before it is stored."""
    found = await rows(
        db_url,
        "SELECT m.status, m.owner, r.termination FROM matches m"
        " LEFT JOIN results r ON r.match_id = m.id WHERE m.id = :m",
        m=match_id,
    )
    return None if not found else (str(found[0][0]), found[0][1], found[0][2])


async def _over(db_url: str, match_id: str) -> tuple[str, str | None, str | None]:
    async def ended() -> tuple[str, str | None, str | None] | None:
        found = await _status(db_url, match_id)
        return found if found is not None and found[0] == "finished" else None

    found: tuple[str, str | None, str | None] = await until_read(ended, 30, "the match's end")
    return found


async def test_a_match_stored_for_another_process_is_played_there(db_url: str) -> None:
    async with process(db_url) as decider, process(db_url) as host:
        a, b = await bots(host, "ho_a", "ho_b")
        assert decider.hosting is not None and host.owner is not None
        # The bots are connected to the host; the decider hears of them over the bus.
        await until(lambda: decider.is_connected(a.bot_id), 10, "the bots heard of")
        assert decider.hosting.host_of([a.bot_id, b.bot_id]) == host.owner
        match_id = new_match_id()
        await decider.hosting.start_on(
            host.owner, games.get("tic_tac_toe"), [a.bot_id, b.bot_id], TC, Policy.forfeit,
            origin="tournament", rated=False, match_id=match_id,
        )  # fmt: skip
        assert await _over(db_url, match_id) == ("finished", host.owner, "normal")
        assert decider.running_match(match_id) is None
        # Played once, seated as given: each bot heard of it once.
        assert a.seen == [("match_start", match_id), ("match_end", match_id)]
        assert b.seen == a.seen
        ((seat0,),) = await rows(
            db_url, "SELECT bot_id FROM seats WHERE match_id = :m AND seat = 0", m=match_id
        )
        assert seat0 == a.bot_id


async def test_a_host_that_never_heard_of_its_match_starts_it_after_a_lease(db_url: str) -> None:
    """The ``host`` message lost on the bus: the match stored as the host's is started by the
    host's own look, once it has gone unplayed for a whole lease; and only once."""
    async with process(db_url) as host:
        a, b = await bots(host, "lost_a", "lost_b")
        match_id = new_match_id()
        async with host.database.session() as session:
            await match_repo.create_match(
                session, match_id=match_id, game="tic_tac_toe", bot_ids=[a.bot_id, b.bot_id],
                time_control=TC.model_dump(), policy="forfeit", seed=11, origin="tournament",
                owner=host.owner,
            )  # fmt: skip
        assert host.running_match(match_id) is None
        assert await _over(db_url, match_id) == ("finished", host.owner, "normal")
        assert a.seen == [("match_start", match_id), ("match_end", match_id)]


async def test_a_match_stored_for_a_process_that_is_gone_is_taken_over(db_url: str) -> None:
    """The host stopped (its lease given up) before it started the match: another process
    takes it over, as any match of a process that is gone, and plays it from its first ply."""
    async with process(db_url) as decider:
        a, b = await bots(decider, "gone_a", "gone_b")
        assert decider.hosting is not None
        async with process(db_url) as host:
            gone = host.owner
            assert gone is not None
        match_id = new_match_id()
        await decider.hosting.start_on(
            gone, games.get("tic_tac_toe"), [a.bot_id, b.bot_id], TC, Policy.forfeit,
            origin="tournament", rated=False, match_id=match_id,
        )  # fmt: skip
        assert await _over(db_url, match_id) == ("finished", decider.owner, "normal")
        assert ("match_end", match_id) in a.seen


async def test_a_process_plays_no_match_it_does_not_own(db_url: str) -> None:
    """A ``host`` message that comes late (the match was taken over meanwhile) starts nothing:
    only the owner plays a match."""
    async with process(db_url) as owner, process(db_url) as other:
        a, b = await bots(owner, "own_a", "own_b")
        for bot in (a, b):
            bot.holding = True  # the match stays running while the other process is asked
        runner = owner.start_match(
            games.get("tic_tac_toe"), [(a.bot_id, a.bot_name), (b.bot_id, b.bot_name)], TC,
            Policy.forfeit,
        )  # fmt: skip
        await until_read(lambda: _status(db_url, runner.match_id), 10, "the match stored")
        assert other.hosting is not None
        await other.hosting.play_stored([runner.match_id])
        assert other.running_match(runner.match_id) is None
        for bot in (a, b):
            bot.release()
        assert await _over(db_url, runner.match_id) == ("finished", owner.owner, "normal")
