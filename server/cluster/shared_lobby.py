"""One lobby for every process of the arena: one process decides, the others forward.

The process that holds the lobby's advisory lock (``pg_try_advisory_lock`` on a connection of
its own, held as long as that connection lives) leads the lobby: it keeps every waiting bot of
every process in its referee's lobby and decides with the same pure ``pairing.pair`` and the
same rules (rating window, no immediate rematch, seat rotation, house bots after the wait). The
other processes keep their own bots' places (to forward them again to a new leader) and forward
each join and leave to the leader over the bus. A group the leader forms is played on the
process of its first bot that is not a house bot (house bots run on every process: that
process's own plays); the leader tells that process to start it, with its id and its seats, and
every process to take the group's bots out of its queues. When the match ends, its process tells
the leader (the bots are coming back; a house bot has room again).

When the leader dies, PostgreSQL drops its connection and with it the lock: the next process to
try (every third of a lease) leads, announces itself, and every process forwards its waiting
bots to it again. No home-made election: the lock is PostgreSQL's.

Messages (on the directory's channels, ``t`` says which): ``leader`` and ``who_leads`` to every
process; ``join``, ``leave`` and ``ended`` to the leader; ``start`` to the process that plays a
group; ``paired`` to every process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ply_arena.protocol.messages import Policy
from ply_arena.server.cluster.bus import Message
from ply_arena.server.referee.lobby import QueueKey, Waiting

if TYPE_CHECKING:
    from ply_arena.server.cluster.directory import Directory
    from ply_arena.server.referee import Referee

log = logging.getLogger(__name__)

#: The lobby's advisory lock key: any 64-bit number no other lock uses.
LOBBY_LOCK_KEY = 0x706C7972_6C6F6262  # "plyr" "lobb"


def key_fields(key: QueueKey) -> list[Any]:
    return [key.game, key.move_ms, key.bank_ms, key.policy.value]


def key_of(fields: Sequence[Any]) -> QueueKey:
    game, move_ms, bank_ms, policy = fields
    return QueueKey(str(game), int(move_ms), int(bank_ms), Policy(policy))


class SharedLobby:
    """This process's part in the one lobby: leading it, or forwarding to its leader."""

    def __init__(self, referee: Referee, directory: Directory, dsn: str, period_s: float) -> None:
        self.referee = referee
        self.directory = directory
        self._dsn = dsn
        self._period_s = period_s
        #: Whether this process decides for every queue.
        self.leading = False
        #: The process that leads (this one's id when leading), None while unknown.
        self.leader: str | None = None
        #: bot id -> the process it waits on, for the waiting bots of other processes (leader).
        self.remote: dict[int, str] = {}
        self._lock_connection: Any = None
        self._task: asyncio.Task[None] | None = None
        for kind, handler in {
            "leader": self._on_leader,
            "who_leads": self._on_who_leads,
            "join": self._on_join,
            "leave": self._on_leave,
            "start": self._on_start,
            "paired": self._on_paired,
            "ended": self._on_ended,
        }.items():
            directory.handlers[kind] = handler

    def start(self) -> None:
        self._task = asyncio.create_task(self._campaign(), name="lobby-leader")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._let_go()

    # --- leading ------------------------------------------------------------------------------

    async def _campaign(self) -> None:
        """Try for the lock now and every period; while leading, check that its connection
        lives (when it dies, so did the lock)."""
        while True:
            try:
                if self.leading:
                    await self._lock_connection.fetchval("SELECT 1")
                elif await self._try_lock():
                    self._lead()
                elif self.leader is None:
                    self.directory.publish_all({"t": "who_leads"})
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self.leading:
                    log.warning("the lobby's lock connection failed (%s): no longer leading", exc)
                    self._step_down()
                await self._let_go()
            await asyncio.sleep(self._period_s)

    async def _try_lock(self) -> bool:
        import asyncpg  # the postgres extra's: only PostgreSQL has several processes

        if self._lock_connection is None:
            self._lock_connection = await asyncpg.connect(
                self._dsn, server_settings={"application_name": "ply-arena lobby lock"}
            )
        return bool(
            await self._lock_connection.fetchval("SELECT pg_try_advisory_lock($1)", LOBBY_LOCK_KEY)
        )

    async def _let_go(self) -> None:
        connection, self._lock_connection = self._lock_connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close(timeout=2)

    def _lead(self) -> None:
        self.leading = True
        self.leader = self.directory.me
        log.info("this process (%s) leads the lobby", self.leader)
        self.referee.lobby_led_here()
        self.directory.publish_all({"t": "leader"})

    def _step_down(self) -> None:
        self.leading = False
        self.leader = None
        for bot_id in list(self.remote):
            self.referee.lobby.leave(bot_id)
        self.remote.clear()

    # --- what this process sends ----------------------------------------------------------

    def forward_join(self, key: QueueKey, bot: Waiting, mu: float) -> None:
        if self.leader is None or self.leading:
            return  # forwarded to the leader once one is known (see _on_leader)
        self.directory.publish_to(
            self.leader,
            {
                "t": "join",
                "key": key_fields(key),
                "bot": bot.bot_id,
                "name": bot.name,
                "waited": max(0.0, time.monotonic() - bot.joined_at),
                "mu": mu,
            },
        )

    def forward_leave(self, bot_id: int, game: str | None) -> None:
        if self.leader is None or self.leading:
            return
        self.directory.publish_to(self.leader, {"t": "leave", "bot": bot_id, "game": game})

    def host_of(self, bot_ids: Sequence[int]) -> str:
        """The process that plays a group: that of its first bot that is not a house bot."""
        for bot_id in bot_ids:
            if bot_id in self.remote:
                return self.remote[bot_id]
            if not self.referee.is_house(bot_id):
                break
        return self.directory.me

    def start_elsewhere(
        self,
        host: str,
        key: QueueKey,
        match_id: str,
        seats: Sequence[tuple[int, str]],
        queued: Sequence[int],
    ) -> None:
        """The leader formed a group played on ``host``: it starts it; everyone drops its bots
        from their queues."""
        self.directory.publish_to(
            host,
            {
                "t": "start",
                "key": key_fields(key),
                "match": match_id,
                "seats": [list(s) for s in seats],
                "queued": list(queued),
            },
        )
        self.paired(key, queued)  # some bot of it waits elsewhere: the host's, at least

    def paired(self, key: QueueKey, bot_ids: Sequence[int]) -> None:
        """Tell the processes of these bots that they were paired (out of the queue): only when
        some waited on another process (a lone process says nothing on the bus)."""
        elsewhere = [self.remote.pop(b) for b in bot_ids if b in self.remote]
        if elsewhere:
            self.directory.publish_all(
                {"t": "paired", "key": key_fields(key), "bots": list(bot_ids)}
            )

    def ended(
        self, match_id: str, key: QueueKey, queued: Sequence[int], bots: Sequence[int]
    ) -> None:
        """A match the leader started here ended: it is told (its bots are coming back)."""
        if self.leader is None or self.leading:
            return
        self.directory.publish_to(
            self.leader,
            {
                "t": "ended",
                "match": match_id,
                "key": key_fields(key),
                "queued": list(queued),
                "bots": list(bots),
            },
        )

    # --- what the others tell this process ----------------------------------------------------

    def _on_leader(self, message: Message) -> None:
        sender = str(message["from"])
        if sender == self.directory.me:
            return
        if self.leading:
            # Cannot happen while the lock holds; if it does, the database knows best.
            log.warning("%s says it leads the lobby too: this process steps down", sender)
            self._step_down()
        self.leader = sender
        # The new leader knows nothing of this process's waiting bots yet.
        for key, waiting, mu in self.referee.local_waiting():
            self.forward_join(key, waiting, mu)

    def _on_who_leads(self, message: Message) -> None:
        if self.leading:
            self.directory.publish_all({"t": "leader"})

    def _on_join(self, message: Message) -> None:
        if not self.leading:
            return  # sent to a former leader: the new one asks for it again
        bot_id = int(message["bot"])
        self.remote[bot_id] = str(message["from"])
        self.referee.join_from_elsewhere(
            key_of(message["key"]),
            Waiting(
                bot_id, str(message["name"]), time.monotonic() - float(message["waited"]), False
            ),
            float(message["mu"]),
        )

    def _on_leave(self, message: Message) -> None:
        if not self.leading:
            return
        bot_id = int(message["bot"])
        game = message.get("game")
        self.referee.lobby.leave(bot_id, None if game is None else str(game))
        if game is None:
            self.remote.pop(bot_id, None)

    def _on_start(self, message: Message) -> None:
        seats = [(int(b), str(n)) for b, n in message["seats"]]
        self.referee.start_led_match(
            key_of(message["key"]),
            str(message["match"]),
            seats,
            [int(b) for b in message["queued"]],
        )

    def _on_paired(self, message: Message) -> None:
        if message.get("from") == self.directory.me:
            return
        self.referee.lobby.remove(key_of(message["key"]), [int(b) for b in message["bots"]])

    def _on_ended(self, message: Message) -> None:
        if self.leading:
            self.referee.led_match_ended(
                str(message["match"]),
                key_of(message["key"]),
                [int(b) for b in message["queued"]],
                [int(b) for b in message["bots"]],
            )
