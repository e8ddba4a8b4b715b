"""Server processes of one PostgreSQL database inside the test's own loop: each a referee with
its own database pool, lease and bus connection (server/cluster/membership.py), as ``arena
serve`` has them, without the web server; in-process bots (_in_process.Bot) log in to one."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from _in_process import Bot

from ply_arena.server.cluster.membership import Membership
from ply_arena.server.db.database import Database
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.settings import Settings

#: Short leases: what a lost lease or a lost message brings comes within a few seconds.
LEASE_S = 1.2


@contextlib.asynccontextmanager
async def process(db_url: str, **settings: object) -> AsyncIterator[Referee]:
    """A server process on ``db_url`` (``settings``: more of its settings), stopped at the end
    as a clean stop does (its lease given up)."""
    database = Database(db_url)
    await database.migrate()
    options: dict[str, object] = {"house_bots": "", "lease_s": LEASE_S, "resume_wait_s": 5}
    referee = Referee(database, Settings(db_url=db_url, **{**options, **settings}))
    await referee.start()
    membership = await Membership.join(referee)
    assert membership is not None and referee.hosting is not None
    try:
        yield referee
    finally:
        await referee.stop()
        await membership.leave()
        await database.dispose()


async def bots(referee: Referee, *names: str) -> list[Bot]:
    """New bots, logged in to ``referee``'s process."""
    made = []
    async with referee.database.session() as session:
        for name in names:
            row, _ = await bot_repo.create_bot(session, name)
            made.append(Bot(referee, row.id, name))
    for bot in made:
        referee.login(bot)
    return made
