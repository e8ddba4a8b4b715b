"""Lobby queues: one per (game, time control, policy), first come first paired.

Pure bookkeeping, no I/O: the referee asks ``join`` and starts a match when it returns a full
group. A bot is at most once in a queue (joining again is a no-op) but may wait in several queues
and play several matches at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.messages import Policy, TimeControl


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


class Lobby:
    def __init__(self) -> None:
        self._queues: dict[QueueKey, list[Waiting]] = {}

    def join(
        self, key: QueueKey, bot: Waiting, group_size: int
    ) -> tuple[int, list[Waiting] | None]:
        """Queue ``bot``; returns (bots waiting including it, the group to start or None).

        The group is the first ``group_size`` bots in arrival order; they leave the queue.
        """
        queue = self._queues.setdefault(key, [])
        if not self.is_waiting(key, bot.bot_id):
            queue.append(bot)
        waiting = len(queue)
        if waiting < group_size:
            return waiting, None
        group, queue[:] = queue[:group_size], queue[group_size:]
        if not queue:
            del self._queues[key]
        return waiting, group

    def leave(self, bot_id: int, game: str | None = None) -> int:
        """Take the bot out of every queue (of ``game`` only, when given); how many it left."""
        left = 0
        for key in list(self._queues):
            if game is not None and key.game != game:
                continue
            queue = self._queues[key]
            kept = [w for w in queue if w.bot_id != bot_id]
            left += len(queue) - len(kept)
            if kept:
                self._queues[key] = kept
            else:
                del self._queues[key]
        return left

    def waiting(self, key: QueueKey) -> list[Waiting]:
        return list(self._queues.get(key, ()))

    def is_waiting(self, key: QueueKey, bot_id: int) -> bool:
        return any(w.bot_id == bot_id for w in self._queues.get(key, ()))

    def queues_of(self, bot_id: int) -> int:
        """How many queues the bot waits in."""
        return sum(any(w.bot_id == bot_id for w in q) for q in self._queues.values())
