"""Which bots are connected to the other processes (server/cluster/directory.py): a process that
starts after bots logged in elsewhere learns of them; the bots of a process whose lease ran out
stop counting as connected. Server processes of one
PostgreSQL database in the test's own loop (_cluster_in_process.py), in-process bots."""

from __future__ import annotations

import pytest
from _cluster_in_process import LEASE_S, bots, process
from _waiting import until

from ply_arena.protocol.messages import Challenge

pytestmark = [pytest.mark.postgresql_only, pytest.mark.timeout(60)]


async def test_a_process_that_starts_later_learns_of_the_bots_already_connected(
    db_url: str,
) -> None:
    async with process(db_url) as first:
        (early,) = await bots(first, "pr_early")
        async with process(db_url) as later:
            # Nothing was announced since it started: it asked the others.
            await until(lambda: later.is_connected(early.bot_id), 10, "the early bot heard of")
            conn = later.connections.get(early.bot_id)
            assert conn is not None and getattr(conn, "instance", None) == first.owner


async def test_the_bots_of_a_process_that_is_gone_no_longer_count_as_connected(
    db_url: str,
) -> None:
    async with process(db_url) as survivor:
        (here,) = await bots(survivor, "pr_here")
        async with process(db_url) as doomed:
            (there,) = await bots(doomed, "pr_there")
            await until(lambda: survivor.is_connected(there.bot_id), 10, "the bot heard of")
            # Its lease is given up without a word about its bots (as a kill -9 would leave
            # them, but at once): the survivor's look drops them.
            assert doomed.lease is not None
            doomed.directory = None  # says nothing more on the bus
        await until(
            lambda: not survivor.is_connected(there.bot_id), LEASE_S * 5, "the bot forgotten"
        )
        assert survivor.is_connected(here.bot_id)
        # A challenge to it is refused as to any bot not connected.
        with pytest.raises(Exception, match="no bot named 'pr_there' is connected"):
            survivor.challenge(here, Challenge(game="tic_tac_toe", opponents=["pr_there"]))
