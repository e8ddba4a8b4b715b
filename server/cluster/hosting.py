"""Matches one process decides and another plays: a tournament director's game whose bots are
connected to another process is played there, so that a tournament's games spread over the
processes as its bots do (the lobby does the same through its leader: shared_lobby.py).

The match is stored first, as running and owned by the process that is to play it, and only
then that process is told (``host`` on its channel) to start it. So the database says, from the
start, who must play it, and the ways a match could be lost or played twice are the ones leases
already settle:

- the host dies before it starts the match, or after: its lease runs out and another process
  takes the match over (server/referee: ``resume_unfinished``), from its first ply or wherever
  it stood;
- the message is lost (the bus is at most once) while the host lives: the host finds, every
  sixth of a lease, the running matches it owns but does not play; one that stays so for a whole
  lease is started then (``sweep``);
- a late start cannot race a replay: whoever decides waits for the stored match to end (a
  director through server/tournaments/match_end.py) and never starts it again while it runs,
  and a host that lost its lease cannot store a result (``matches.owner`` fences it).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from ply_arena import games
from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server.cluster.bus import Message
from ply_arena.server.cluster.directory import Directory, RemoteConnection
from ply_arena.server.repositories import instances as instance_repo
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import resume as resume_repo

if TYPE_CHECKING:
    from ply_arena.server.referee import Referee

log = logging.getLogger(__name__)


class Hosting:
    """This process's side: asks others to play matches, and plays those it is asked to."""

    def __init__(self, referee: Referee, directory: Directory) -> None:
        self.referee = referee
        self.directory = directory
        # Matches stored as this process's that it does not play, and since when (monotonic).
        self._unplayed_since: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        directory.handlers["host"] = self._on_host
        directory.handlers["abort"] = self._on_abort

    def host_of(self, bot_ids: Sequence[int]) -> str:
        """The process that should play a match of these bots: the one its first bot that is
        not a house bot is connected to (house bots play on every process); this one when that
        bot is connected here, or nowhere."""
        referee = self.referee
        for bot_id in bot_ids:
            if referee.is_house(bot_id):
                continue
            conn = referee.connections.get(bot_id)
            if isinstance(conn, RemoteConnection):
                return conn.instance
            break
        return self.directory.me

    async def start_on(
        self,
        host: str,
        game: games.Game,
        seats: Sequence[int],
        time_control: TimeControl,
        policy: Policy,
        *,
        origin: str,
        rated: bool,
        match_id: str,
    ) -> None:
        """Store the match as ``host``'s, seated as given, then tell ``host`` to start it.
        Returns once it is stored (the match exists from then on, whatever befalls ``host``)."""
        await self.referee.database.recorder.submit(
            match_repo.create_match,
            match_id=match_id,
            game=game.name,
            bot_ids=list(seats),
            time_control=time_control.model_dump(),
            policy=policy.value,
            seed=secrets.randbits(64),
            origin=origin,
            rated=rated,
            owner=host,
        )
        self.directory.publish_to(host, {"t": "host", "match": match_id})
        log.info("match %s is played by server process %s", match_id, host)

    def _on_host(self, message: Message) -> None:
        self._spawn(self.play_stored([str(message["match"])]))

    def abort_on(self, host: str, match_id: str) -> None:
        """Ask ``host`` to end a match it plays (or is to play) ``aborted`` (a cancelled
        tournament's: server/tournaments/director.py)."""
        self.directory.publish_to(host, {"t": "abort", "match": match_id})

    def _on_abort(self, message: Message) -> None:
        match_id = str(message["match"])
        if not self.referee.abort_match(match_id):
            # Not started here (yet): end it in the database, if it is still this process's.
            self._spawn(self._abort_stored(match_id))

    async def _abort_stored(self, match_id: str) -> None:
        referee = self.referee
        if referee.owner is None:
            return
        async with referee.database.session() as session:
            if match_id in set(await instance_repo.owned(session, referee.owner)):
                if referee.abort_match(match_id):  # started meanwhile
                    return
                await match_repo.abort_running(session, [match_id])
                await session.commit()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name="host-match")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def play_stored(self, match_ids: Sequence[str]) -> None:
        """Start those of ``match_ids`` that are stored as running, owned by this process and
        not played here yet: from their first ply, or (one that was played elsewhere before it
        became this process's) from where they stand."""
        referee = self.referee
        if referee.closing or referee.owner is None:
            return
        async with referee.database.session() as session:
            mine = set(await instance_repo.owned(session, referee.owner)) & set(match_ids)
            stored = await resume_repo.running_matches(session, sorted(mine)) if mine else []
        for match in stored:
            referee.launch_stored(match)

    async def sweep(self) -> None:
        """Start the running matches this process owns but does not play once they have been so
        for a whole lease (a ``host`` message lost on the bus). Called every sixth of a lease."""
        referee = self.referee
        if referee.owner is None:
            return
        async with referee.database.session() as session:
            owned = await instance_repo.owned(session, referee.owner)
        now = time.monotonic()
        unplayed = {m for m in owned if m not in referee.matches}
        self._unplayed_since = {m: self._unplayed_since.get(m, now) for m in unplayed}
        lease_s = referee.settings.lease_s
        due = [m for m, since in self._unplayed_since.items() if now - since >= lease_s]
        if due:
            log.warning(
                "%d match(es) stored as this process's were never started here (a lost message): "
                "starting them now",
                len(due),
            )
            await self.play_stored(due)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
