"""Who is coming back to each lobby queue, kept in rating order between decisions.

The lobby's rule 2 (``pairing``) lets a waiting bot wait for a closer opponent that is coming
back to its queue: a bot playing a match that came from the queue, or whose match from it ended
less than ``REJOIN_GRACE_S`` ago (its join follows its ``match_end`` by a round trip; meanwhile
it is neither playing nor waiting). ``ComingBack`` keeps those bots of each queue in a
``pairing.Roster`` and updates it as things happen (a match from the queue starts or ends, a bot
joins the queue again, disconnects, or is rated), so that a lobby decision reads it as it
stands. Before, each decision read every such bot's rating from the rating book and sorted
them: on every join, work in the number of bots playing rather than waiting.

Pure bookkeeping, like ``lobby.Lobby``: no I/O, no decisions, the time passed in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ply_arena.server.referee.lobby import QueueKey
from ply_arena.server.referee.pairing import Roster

#: For this long after its match from a queue ends, a bot counts as coming back to the queue.
REJOIN_GRACE_S = 1.0

_EMPTY = Roster()


class ComingBack:
    """The bots coming back to each queue, per queue a ``Roster`` by current rating."""

    def __init__(self, mu: Callable[[int, str], float], grace_s: float = REJOIN_GRACE_S) -> None:
        #: A bot's current rating in a game (the referee's rating book).
        self._mu = mu
        self.grace_s = grace_s
        # Per queue: how many matches from it each bot plays, and the bots whose match from it
        # ended within the grace, with when (in the order they ended: the oldest expire first).
        self._playing: dict[QueueKey, Counter[int]] = {}
        self._returning: dict[QueueKey, dict[int, float]] = {}
        self._rosters: dict[QueueKey, Roster] = {}

    def started(self, key: QueueKey, bot_ids: Iterable[int]) -> None:
        """A match from ``key`` started with these bots (those that came from its queue)."""
        playing = self._playing.setdefault(key, Counter())
        roster = self._rosters.setdefault(key, Roster())
        for bot_id in bot_ids:
            playing[bot_id] += 1
            if bot_id not in roster:
                roster.add(bot_id, self._mu(bot_id, key.game))

    def ended(self, key: QueueKey, bot_ids: Iterable[int], at: float) -> None:
        """A match from ``key`` ended: its bots are on their way back (for the grace)."""
        playing = self._playing.get(key)
        for bot_id in bot_ids:
            if playing is not None and playing[bot_id] > 0:
                playing[bot_id] -= 1
                if playing[bot_id] == 0:
                    del playing[bot_id]
            returning = self._returning.setdefault(key, {})
            returning.pop(bot_id, None)  # to the end: the order is the order of expiry
            returning[bot_id] = at
        if playing is not None and not playing:
            del self._playing[key]

    def joined(self, key: QueueKey, bot_id: int) -> None:
        """The bot waits in the queue again: it is no longer on its way back."""
        returning = self._returning.get(key)
        if returning is not None and returning.pop(bot_id, None) is not None:
            self._drop_unless_coming(key, (bot_id,))

    def disconnected(self, bot_id: int) -> None:
        """A bot that has no connection is not on its way back to any queue (a bot playing a
        match from a queue still counts: it may reconnect to its match)."""
        for key, returning in list(self._returning.items()):
            if returning.pop(bot_id, None) is not None:
                self._drop_unless_coming(key, (bot_id,))

    def rerated(self, bot_id: int, game: str, mu: float) -> None:
        """The bot's rating in ``game`` changed (the rating book's watcher)."""
        for key, roster in self._rosters.items():
            if key.game == game and bot_id in roster:
                roster.add(bot_id, mu)

    def roster(self, key: QueueKey, now: float) -> Roster:
        """The bots coming back to ``key`` at ``now``, by rating (read it, do not change it);
        bots also waiting in the queue may be in it (``pairing.pair`` skips them)."""
        returning = self._returning.get(key)
        if returning:
            expired = []
            for bot_id, ended in returning.items():
                if now - ended < self.grace_s:
                    break
                expired.append(bot_id)
            for bot_id in expired:
                del returning[bot_id]
            self._drop_unless_coming(key, expired)
        return self._rosters.get(key, _EMPTY)

    def bots(self, key: QueueKey) -> set[int]:
        """Every bot counted as coming back to ``key`` (tests)."""
        return set(self._rosters.get(key, ()))

    def _drop_unless_coming(self, key: QueueKey, bot_ids: Iterable[int]) -> None:
        """Take these bots, no longer on their way back, out of the queue's roster unless they
        still play a match from it; forget the queue when nobody is coming back to it."""
        playing = self._playing.get(key, _NO_COUNTS)
        returning = self._returning.get(key)
        roster = self._rosters.get(key)
        if roster is not None:
            for bot_id in bot_ids:
                if playing[bot_id] <= 0:
                    roster.remove(bot_id)
        if returning is not None and not returning:
            del self._returning[key]
        if key not in self._playing and key not in self._returning:
            self._rosters.pop(key, None)


_NO_COUNTS: Counter[int] = Counter()
