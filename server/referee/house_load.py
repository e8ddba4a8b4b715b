"""How many matches each house bot plays on every process of the arena (PostgreSQL, several
processes: server/cluster), so that ``house_max_matches`` bounds a house bot once, not once per
process.

House bots run on every process (each with its search pool), and any of them may start a house
bot's match: the lobby's leader, a challenge answered on the process that received it, a
tournament's director. Each process counts, for each house bot, the union of

- the matches it plays itself (known at once),
- the matches stored as running anywhere (read from the database every sixth of a lease, and
  at once before a house bot answers a challenge),
- the matches the lobby's leader started on another process a moment ago (not stored yet when
  they were decided; counted until they are seen stored, or for a lease at most),

less the matches it knows have just ended (the last read may predate their end). Between two
reads a match another process started can be missed (a house bot may then play one more than
its most, for a moment); nothing is counted twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class HouseLoad:
    def __init__(self, memory_s: float) -> None:
        #: How long a match decided elsewhere (or ended) is remembered without the database's
        #: word on it: a lease.
        self.memory_s = memory_s
        self._here: dict[int, set[str]] = {}
        self._stored: dict[int, set[str]] = {}
        # match id -> (when, its house bots): started on another process by this leader.
        self._sent: dict[str, tuple[float, tuple[int, ...]]] = {}
        # match id -> when it ended (here or elsewhere, as this process heard).
        self._ended: dict[str, float] = {}

    def started_here(self, match_id: str, bots: Iterable[int]) -> None:
        for bot_id in bots:
            self._here.setdefault(bot_id, set()).add(match_id)

    def started_elsewhere(self, match_id: str, bots: Iterable[int], now: float) -> None:
        self._sent[match_id] = (now, tuple(bots))

    def ended(self, match_id: str, bots: Iterable[int], now: float) -> None:
        for bot_id in bots:
            self._here.get(bot_id, set()).discard(match_id)
            self._stored.get(bot_id, set()).discard(match_id)
        self._sent.pop(match_id, None)
        self._ended[match_id] = now

    def read(self, stored: Mapping[int, set[str]], now: float) -> None:
        """What the database said, for the bots it names (a read made before ``now``)."""
        self._forget(now)
        for bot_id, ids in stored.items():
            self._stored[bot_id] = set(ids) - self._ended.keys()
            for match_id in ids & self._sent.keys():
                # Stored: counted through the read from now on, for this bot (a read of one
                # bot says nothing of the match's other house bots).
                when, bots = self._sent[match_id]
                left = tuple(b for b in bots if b != bot_id)
                if left:
                    self._sent[match_id] = (when, left)
                else:
                    del self._sent[match_id]

    def count(self, bot_id: int, now: float) -> int:
        """How many matches the bot plays now, on every process."""
        self._forget(now)
        ids = self._here.get(bot_id, set()) | self._stored.get(bot_id, set())
        ids |= {m for m, (_, bots) in self._sent.items() if bot_id in bots}
        return len(ids - self._ended.keys())

    def _forget(self, now: float) -> None:
        horizon = now - self.memory_s
        if self._sent:
            self._sent = {m: v for m, v in self._sent.items() if v[0] > horizon}
        if self._ended:
            self._ended = {m: t for m, t in self._ended.items() if t > horizon}
