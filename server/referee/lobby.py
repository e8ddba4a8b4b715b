"""Lobby queues: one per (game, time control, policy), and who waits in each since when.

Pure bookkeeping, no I/O and no decisions: who meets whom is
``ply_arena.server.referee.pairing.pair``, which the referee calls with a queue's waiting bots
after joins (once per turn of the event loop) and on its periodic tick. A bot is at most once in
a queue (joining again is a no-op and keeps its place and its waiting time) but may wait in
several queues and play several matches at once.

Each queue also keeps its bots as ``pairing.Waiter`` (with their current rating, updated by
``rerated``) in a ``pairing.Waiters``, in arrival order and in rating order, ready for a
decision: building them again from the rating book on every join was a third of a decision over
a thousand waiting bots, and sorting them in both orders on every join 0.65 ms more.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server.referee.pairing import Waiter, Waiters


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
        return _time_control(self.move_ms, self.bank_ms)


@functools.lru_cache(maxsize=256)
def _time_control(move_ms: int, bank_ms: int) -> TimeControl:
    # Asked for every match the lobby pairs; a frozen model, so one instance per time control
    # serves them all (validating a new one each time was a visible share of a pairing).
    return TimeControl(move_ms=move_ms, bank_ms=bank_ms)


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
        # Insertion-ordered: arrival order within each queue. The same bots as pairing's
        # input (``_waiters``: by arrival and by rating, with their ratings in the queue's game).
        self._queues: dict[QueueKey, dict[int, Waiting]] = {}
        self._waiters: dict[QueueKey, Waiters] = {}

    def join(self, key: QueueKey, bot: Waiting, mu: float) -> int:
        """Queue ``bot`` (rated ``mu`` in the queue's game) unless it already waits there; the
        number of bots waiting there now."""
        queue = self._queues.setdefault(key, {})
        if bot.bot_id not in queue:
            queue[bot.bot_id] = bot
            self._waiters.setdefault(key, Waiters()).add(
                Waiter(bot.bot_id, bot.joined_at, mu, bot.house)
            )
        return len(queue)

    def rerated(self, bot_id: int, game: str, mu: float) -> None:
        """The bot's rating in ``game`` changed (it waits here while it plays elsewhere)."""
        for key, waiters in self._waiters.items():
            if key.game == game:
                waiters.rerate(bot_id, mu)

    def remove(self, key: QueueKey, bot_ids: Iterable[int]) -> None:
        """Take bots out of one queue (they were paired)."""
        queue = self._queues.get(key)
        if queue is None:
            return
        waiters = self._waiters[key]
        for bot_id in bot_ids:
            queue.pop(bot_id, None)
            waiters.remove(bot_id)
        if not queue:
            del self._queues[key], self._waiters[key]

    def leave(self, bot_id: int, game: str | None = None) -> int:
        """Take the bot out of every queue (of ``game`` only, when given); how many it left."""
        left = 0
        for key in list(self._queues):
            if game is not None and key.game != game:
                continue
            queue = self._queues[key]
            if queue.pop(bot_id, None) is not None:
                self._waiters[key].remove(bot_id)
                left += 1
                if not queue:
                    del self._queues[key], self._waiters[key]
        return left

    def waiting(self, key: QueueKey) -> list[Waiting]:
        """The bots waiting in the queue, in arrival order."""
        return list(self._queues.get(key, {}).values())

    def waiters(self, key: QueueKey) -> Waiters:
        """The same bots as ``pairing.pair`` takes them, with their current ratings: the queue's
        own, as it stands (read it, do not change it)."""
        return self._waiters.get(key, _NO_WAITERS)

    def names(self, key: QueueKey) -> dict[int, str]:
        """Bot id -> name of the bots waiting in the queue."""
        return {b: w.name for b, w in self._queues.get(key, {}).items()}

    def queues(self) -> list[QueueKey]:
        """Every queue with a bot waiting."""
        return list(self._queues)

    def is_waiting(self, key: QueueKey, bot_id: int) -> bool:
        return bot_id in self._queues.get(key, ())

    def queues_of(self, bot_id: int) -> int:
        """How many queues the bot waits in."""
        return sum(bot_id in q for q in self._queues.values())


_NO_WAITERS = Waiters()
