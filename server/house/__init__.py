"""House bots: reference agents the server runs itself as ladder members.

Configured by ``settings.house_bots`` (``ARENA_HOUSE_BOTS``, read by
:mod:`ply_arena.server.house.config`). Each is a real bot in the ``bots`` table (``house`` true,
``agent`` its spec, a name such as ``house-mcts-200``, no token anyone knows), so its matches,
clocks, records and ratings are those of any bot, and a restart finds the same bot again. It
connects to the referee in-process (:mod:`ply_arena.server.house.bot`) and searches in a process
pool (:mod:`ply_arena.server.house.pool`), never on the event loop.

The lobby calls on them (``ply_arena.server.referee.pairing``): a bot that waits alone in any queue
for ``house_wait_s`` meets a house bot, chosen at random among those that play fewer than
``house_max_matches`` matches. With ``house_self_play`` they also wait in their games' default
queues and play each other.

``House`` is started and stopped by the app's lifespan, after the referee starts and after it
stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import ErrorMessage
from ply_arena.server.house.bot import HouseBot
from ply_arena.server.house.config import HouseConfigError, HouseSpec, house_name, parse_house_bots
from ply_arena.server.house.pool import SearchPool
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.settings import Settings

__all__ = [
    "House",
    "HouseBot",
    "HouseConfigError",
    "HouseSpec",
    "house_name",
    "parse_house_bots",
]

log = logging.getLogger(__name__)


class House:
    def __init__(
        self, referee: Referee, settings: Settings, specs: list[HouseSpec] | None = None
    ) -> None:
        self.referee = referee
        self.settings = settings
        self.specs = parse_house_bots(settings.house_bots) if specs is None else specs
        self.pool = SearchPool(settings.house_workers)
        self.bots: list[HouseBot] = []
        self._warm_up: asyncio.Task[list[int]] | None = None

    async def start(self) -> None:
        """Find or create each house bot, log it in to the referee, start the search processes."""
        if not self.specs:
            return
        async with self.referee.database.session() as session:
            rows = []
            for spec in self.specs:
                row = await bot_repo.ensure_house_bot(session, spec.name, spec.spec)
                rows.append((spec, row.id, row.enabled))
        for spec, bot_id, enabled in rows:
            if not enabled:
                log.info("house bot %s is disabled: it does not play", spec.name)
                continue
            bot = HouseBot(
                referee=self.referee,
                pool=self.pool,
                spec=spec,
                bot_id=bot_id,
                self_play=self.settings.house_self_play,
            )
            self.referee.add_house_bot(bot, spec.games)
            self.bots.append(bot)
        if not self.bots:
            return
        log.info(
            "house bots: %s; %d search process(es)",
            ", ".join(f"{b.bot_name} ({', '.join(b.spec.games)})" for b in self.bots),
            self.pool.workers,
        )
        agents = [(g, b.spec.agent, b.spec.options) for b in self.bots for g in b.spec.games]
        self._warm_up = asyncio.create_task(self.pool.warm_up(agents), name="house-warm-up")
        for bot in self.bots:
            bot.join_queues()

    async def ready(self) -> list[int]:
        """Wait until every search process is up with its agents made; their pids."""
        if self._warm_up is None:
            return []
        return await asyncio.shield(self._warm_up)

    async def stop(self) -> None:
        """Stop the search processes (the referee has stopped the house bots' matches: they
        resume with the next server)."""
        stopping = ErrorMessage(
            code=ErrorCode.shutting_down, message="the server is shutting down", fatal=True
        )
        for bot in self.bots:
            bot.close_with(stopping)
        if self._warm_up is not None:
            self._warm_up.cancel()
            with contextlib.suppress(BaseException):
                await self._warm_up
        await self.pool.close()
