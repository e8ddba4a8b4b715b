"""Lobby queues: one per (game, time control, policy), and who waits in each since when.

Pure bookkeeping, no I/O and no decisions: who meets whom is
``ply_arena.server.referee.pairing.pair``, which the referee calls with a queue's waiting bots
after joins (once per turn of the event loop) and on its periodic tick. A bot is at most once in
a queue (joining again is a no-op and keeps its place and its waiting time) but may wait in
several queues and play several matches at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ply_arena.protocol.messages import Policy, TimeControl


@dataclass(frozen=True, slots=True)
class QueueKey:
    game: str
    move_ms: int
    bank_ms: int
    policy: Policy

    @classmethod
    def of(cls, game: str, tc: TimeControl, policy: Policy) -> QueueKey:
        return cls(game, tc.move_ms, tc.bank_ms, policy)

    def time_control(self) -> TimeControl:
        return TimeControl(move_ms=self.move_ms, bank_ms=self.bank_ms)


@dataclass(frozen=True, slots=True)
class Waiting:
    bot_id: int
    name: str
    #: When it joined (time.monotonic()).
    joined_at: float
    #: A house bot waiting in the queue (house self-play).
    house: bool


class Lobby:
    def __init__(self) -> None:
        # Insertion-ordered: arrival order within each queue.
        self._queues: dict[QueueKey, dict[int, Waiting]] = {}

    def join(self, key: QueueKey, bot: Waiting) -> int:
        """Queue ``bot`` unless it already waits there; the number of bots waiting there now."""
        queue = self._queues.setdefault(key, {})
        queue.setdefault(bot.bot_id, bot)
        return len(queue)

    def remove(self, key: QueueKey, bot_ids: Iterable[int]) -> None:
        """Take bots out of one queue (they were paired)."""
        queue = self._queues.get(key)
        if queue is None:
            return
        for bot_id in bot_ids:
            queue.pop(bot_id, None)
        if not queue:
            del self._queues[key]

    def leave(self, bot_id: int, game: str | None = None) -> int:
        """Take the bot out of every queue (of ``game`` only, when given); how many it left."""
        left = 0
        for key in list(self._queues):
            if game is not None and key.game != game:
                continue
            queue = self._queues[key]
            if queue.pop(bot_id, None) is not None:
                left += 1
                if not queue:
                    del self._queues[key]
        return left

    def waiting(self, key: QueueKey) -> list[Waiting]:
        """The bots waiting in the queue, in arrival order."""
        return list(self._queues.get(key, {}).values())

    def queues(self) -> list[QueueKey]:
        """Every queue with a bot waiting."""
        return list(self._queues)

    def is_waiting(self, key: QueueKey, bot_id: int) -> bool:
        return bot_id in self._queues.get(key, ())

    def queues_of(self, bot_id: int) -> int:
        """How many queues the bot waits in."""
        return sum(bot_id in q for q in self._queues.values())
