"""This process's part in an arena of several processes on one PostgreSQL database: the bus, the
directory of bots, the hosting of matches decided elsewhere and the shared lobby, started after
the referee holds its lease and stopped after the referee. On SQLite (one process) there is
none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ply_arena.server.cluster.bus import Bus, asyncpg_dsn, open_bus
from ply_arena.server.cluster.directory import Directory
from ply_arena.server.cluster.hosting import Hosting
from ply_arena.server.cluster.shared_lobby import SharedLobby
from ply_arena.server.referee.house_load import HouseLoad

if TYPE_CHECKING:
    from ply_arena.server.referee import Referee


class Membership:
    def __init__(self, referee: Referee, bus: Bus) -> None:
        self.referee = referee
        self.bus = bus

    @classmethod
    async def join(cls, referee: Referee) -> Membership | None:
        """Start the bus, the directory and the shared lobby (None on SQLite)."""
        if referee.database.is_sqlite:
            return None
        url = referee.database.url
        bus = open_bus(url, on_gap=lambda: _gap(referee))
        await bus.start()
        referee.directory = Directory(referee, bus, lambda: referee.owner)
        await referee.directory.start()
        referee.hosting = Hosting(referee, referee.directory)
        referee.house_load = HouseLoad(referee.settings.lease_s)
        referee.shared_lobby = SharedLobby(
            referee, referee.directory, asyncpg_dsn(url), period_s=referee.settings.lease_s / 3
        )
        referee.shared_lobby.start()
        return cls(referee, bus)

    async def leave(self) -> None:
        if self.referee.hosting is not None:
            await self.referee.hosting.stop()
        if self.referee.shared_lobby is not None:
            await self.referee.shared_lobby.stop()
        if self.referee.directory is not None:
            self.referee.directory.stop()
        await self.bus.close()


def _gap(referee: Referee) -> None:
    """The bus lost messages: the directory announces this process's bots again."""
    if referee.directory is not None:
        referee.directory.gap()
