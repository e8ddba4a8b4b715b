"""When the lobby decides, in the test's own loop with an in-process referee: the joins that
arrive together (bots coming back from matches that ended together) are paired in one decision
at the end of that turn of the loop, not one decision per join."""

from __future__ import annotations

from _in_process import Bot
from _waiting import until

from ply_arena.protocol.messages import JoinLobby
from ply_arena.server.db.database import Database
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.settings import Settings


async def test_joins_that_arrive_together_are_paired_in_one_decision(database: Database) -> None:
    referee = Referee(database, Settings(db_url=database.url, house_bots=""))
    await referee.start()
    try:
        bots = []
        async with database.session() as session:
            for i in range(10):
                row, _ = await bot_repo.create_bot(session, f"together{i}")
                bots.append(Bot(referee, row.id, row.name))
        for bot in bots:
            referee.login(bot)
        for bot in bots:
            assert referee.join(bot, JoinLobby(game="tic_tac_toe")) is True
        # Nothing is decided while the joins come in (each would have walked the queue again)
        assert list(referee.pairing_log) == []
        await until(lambda: len(referee.pairing_log) == 5, 10, "five pairs")
        decisions = list(referee.pairing_log)
        # ... then one decision pairs them all: every group formed at the same moment.
        assert len({d.at for d in decisions}) == 1
        assert sorted(b for d in decisions for b in d.bot_ids) == sorted(b.bot_id for b in bots)
        assert {d.reason for d in decisions} == {"rating"}
        assert decisions[-1].others_waiting == ()
    finally:
        await referee.stop()
