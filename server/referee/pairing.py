"""Who meets whom in a lobby queue: a pure function of the waiting bots, their ratings and the time.

``pair`` takes everything a decision depends on as arguments (the waiting bots with their join
times and ratings, the bots playing a match that came from this queue, each bot's latest
opponents, the house bots that could fill a seat, the time, a random generator and the
parameters) and returns the groups to start, in the order it formed them. No clock, no state, no
I/O: the referee calls it after joins (once for those of one turn of its event loop) and on a
periodic tick, and tests call it with made-up inputs. Given the same inputs and the same ``rng``
state it returns the same groups.

The rules, for each waiting bot in order of arrival (the longest waiting first), as anchor:

1. **Good opponents** are waiting bots it did not just play (see 4) whose rating (mu) is within
   its *window*: ``window + widen_per_s * seconds waited`` (of whichever of the two has waited
   longer). The anchor meets one of the ``candidates`` closest good opponents, chosen at random
   (three-player games: two of them).
2. **No reason to wait.** With no good opponent waiting, a bot waits only while a better one may
   come: a bot coming back to this queue (``playing``: the referee passes the bots playing a
   match that came from it, or whose match from it ended a moment ago) whose rating is within
   its window. When neither of two bots has such a hope, they meet at once, the closest first:
   with exactly two bots waiting and nobody else coming back, pairing is immediate whatever the
   ratings.
3. **Max wait.** A bot that has waited ``max_wait_s`` meets whoever is there (the closest).
4. **No immediate rematch.** Two bots do not meet again right after their latest match in that
   game (either one's latest) while another waiting bot could take the seat of either, or
   another bot is coming back to the queue (whatever its rating); they meet again only when
   neither has anyone else to meet, now or soon (and, as any pairing outside the window, when
   neither has a reason to wait, or one has waited ``max_wait_s``).
5. **House bots.** When fewer bots wait than a match needs, the longest waiting one (not a house
   bot) has waited ``house_wait_s`` and house bots have room, the missing seats go to house bots
   with room for another match, chosen at random (its latest opponents last), not by rating: they
   are the ladder's anchors, and every bot should meet the strong ones as well as the weak.

Cost: one sort of the waiting bots by rating, then for each anchor a walk outwards from its
rating over the bots not yet paired (a linked list), and a bisection of the bots coming back
(``playing``), which the referee keeps sorted between decisions in a ``Roster`` (passing a plain
sequence sorts it on each call); ``python -m bench.ladder pairing`` has the figures.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

#: Why a group was formed: ``rating`` (good opponents, rule 1), ``no_better`` (rule 2),
#: ``overdue`` (rule 3), ``rematch`` (rule 4), ``house`` (rule 5).
Reason = Literal["rating", "no_better", "overdue", "rematch", "house"]

_NOBODY: frozenset[int] = frozenset()
#: Anchors go in arrival order; ids break ties, so the order never depends on the input's.
_ARRIVAL = attrgetter("joined_at", "bot_id")


@dataclass(frozen=True, slots=True)
class Waiter:
    """A bot waiting in the queue."""

    bot_id: int
    #: When it joined, in seconds on the same clock as ``now`` (the referee: time.monotonic()).
    joined_at: float
    mu: float
    #: A house bot waiting in the queue (house self-play); it never calls for house bots itself.
    house: bool = False


@dataclass(frozen=True, slots=True)
class Player:
    """A bot likely to join this queue again soon (it plays, or just played, a match from it)."""

    bot_id: int
    mu: float


class Roster:
    """Bots by rating (mu, then id), kept in order as they are added, re-rated and removed: the
    bots coming back to a queue, which ``pair`` searches by rating for each anchor.

    The referee keeps one per queue between decisions (server/referee/coming_back.py), so a
    decision no longer reads every such bot's rating and sorts them again: with 400 bots
    thinking 200 ms a move, that re-read on each join was 18% of the event loop's busy time. A
    change is a bisection and a list insertion or deletion (a memmove: a few microseconds for
    ten thousand bots).
    """

    __slots__ = ("_keys", "_mu")

    def __init__(self, players: Iterable[Player] = ()) -> None:
        self._mu: dict[int, float] = {}
        self._keys: list[tuple[float, int]] = []
        for p in players:
            self.add(p.bot_id, p.mu)

    def add(self, bot_id: int, mu: float) -> None:
        """Add the bot, or move it to its new rating."""
        self.remove(bot_id)
        self._mu[bot_id] = mu
        bisect.insort(self._keys, (mu, bot_id))

    def remove(self, bot_id: int) -> bool:
        """Take the bot out; whether it was in."""
        mu = self._mu.pop(bot_id, None)
        if mu is None:
            return False
        del self._keys[bisect.bisect_left(self._keys, (mu, bot_id))]
        return True

    def within(self, lo: float, hi: float) -> list[tuple[float, int]]:
        """(mu, bot id) of the bots rated from ``lo`` to ``hi`` (both included), lowest first."""
        keys = self._keys
        return keys[
            bisect.bisect_left(keys, (lo, -math.inf)) : bisect.bisect_right(keys, (hi, math.inf))
        ]

    def mu(self, bot_id: int) -> float:
        return self._mu[bot_id]

    def __contains__(self, bot_id: object) -> bool:
        return bot_id in self._mu

    def __iter__(self) -> Iterator[int]:
        """The bots, lowest rated first."""
        return (bot_id for _, bot_id in self._keys)

    def __len__(self) -> int:
        return len(self._keys)


@dataclass(frozen=True, slots=True)
class HouseSeat:
    """A house bot that may take a seat: its rating and how many more matches it may start."""

    bot_id: int
    mu: float
    free: int


@dataclass(frozen=True, slots=True)
class Params:
    """The pairing settings (``Settings.pairing_*``, ``house_wait_s``) and the group size."""

    group_size: int = 2
    window: float = 3.0
    widen_per_s: float = 1.0
    max_wait_s: float = 10.0
    candidates: int = 3
    house_wait_s: float = 2.0

    @classmethod
    def from_settings(cls, settings: Any, group_size: int) -> Params:
        return cls(
            group_size=group_size,
            window=settings.pairing_window,
            widen_per_s=settings.pairing_widen_per_s,
            max_wait_s=settings.pairing_max_wait_s,
            candidates=max(1, settings.pairing_candidates),
            house_wait_s=settings.house_wait_s,
        )


@dataclass(frozen=True, slots=True)
class Group:
    """Bots to seat together (the referee decides the seats), and why."""

    bot_ids: tuple[int, ...]
    reason: Reason


def pair(
    waiting: Sequence[Waiter],
    *,
    now: float,
    rng: random.Random,
    params: Params,
    playing: Sequence[Player] | Roster = (),
    last_opponents: Mapping[int, frozenset[int]] | None = None,
    house: Sequence[HouseSeat] = (),
) -> list[Group]:
    """The groups to start now (each waiting bot in at most one), in the order they were formed.

    ``last_opponents`` maps a bot to the bots of its latest match in this game (any bot may be
    missing: no latest match). ``playing`` lists the bots likely to come back to this queue
    soon (bots also in ``waiting`` are ignored there), as a sequence or as a ``Roster`` (read,
    never changed). See the module docstring for the rules.
    """
    return _Pairing(waiting, now, rng, params, playing, last_opponents or {}, house).run()


class _Pairing:
    """One decision; the state of ``pair`` while it walks the anchors."""

    def __init__(
        self,
        waiting: Sequence[Waiter],
        now: float,
        rng: random.Random,
        params: Params,
        playing: Sequence[Player] | Roster,
        last: Mapping[int, frozenset[int]],
        house: Sequence[HouseSeat],
    ) -> None:
        self.now = now
        self.rng = rng
        self.params = params
        self.last = last
        self.house = house
        bots = sorted(waiting, key=_ARRIVAL)
        index = {w.bot_id: i for i, w in enumerate(bots)}
        if len(index) < len(bots):  # a bot listed twice: its first place counts
            seen: set[int] = set()
            firsts: list[Waiter] = []
            for w in bots:
                if w.bot_id not in seen:
                    seen.add(w.bot_id)
                    firsts.append(w)
            bots = firsts
            index = {w.bot_id: i for i, w in enumerate(bots)}
        self.bots = bots
        n = len(bots)
        self.index = index
        waited = [max(0.0, now - w.joined_at) for w in bots]
        base, widen = params.window, params.widen_per_s
        self.window = [base + widen * t for t in waited]
        max_wait = params.max_wait_s
        self.overdue = [t >= max_wait for t in waited]
        self.waited = waited
        # A doubly linked list of the bots not yet paired, in rating order (ids break ties):
        # position p holds bot by_mu[p]; nxt / prv skip the positions already taken.
        self.by_mu = sorted(range(n), key=[(w.mu, w.bot_id) for w in bots].__getitem__)
        self.mu_at = [bots[i].mu for i in self.by_mu]
        self.pos = [0] * n
        for p, i in enumerate(self.by_mu):
            self.pos[i] = p
        self.nxt = list(range(1, n + 1))
        self.prv = list(range(-1, n - 1))
        self.taken = [False] * n
        self.left = n
        # Who named whom as a latest opponent, among the waiting bots (rematches both ways).
        # Latest opponents among the waiting bots, both ways (rule 4), by index.
        linked: dict[int, set[int]] = {}
        if last:
            for i, w in enumerate(bots):
                for other in last.get(w.bot_id, _NOBODY):
                    j = index.get(other)
                    if j is not None and j != i:
                        linked.setdefault(i, set()).add(j)
                        linked.setdefault(j, set()).add(i)
        self.linked = linked
        # Bots playing in this queue, by rating, for the "reason to wait" test (those also
        # waiting are skipped where it is read).
        self.players = playing if isinstance(playing, Roster) else Roster(playing)
        self._hope: list[bool | None] = [None] * n

    # --- the decision -------------------------------------------------------------------------

    def run(self) -> list[Group]:
        need = self.params.group_size - 1
        k = max(self.params.candidates, need)
        groups: list[Group] = []
        #: The widest window (and whether overdue) among anchors left unpaired: a later anchor
        #: looks that far for good opponents, since the longer waiter's window counts.
        self.skipped_window = 0.0
        self.skipped_overdue = False
        bots, taken = self.bots, self.taken
        for a in range(len(bots)):
            if self.left <= need:
                break
            if taken[a]:
                continue
            found = self._partners(a, need, k)
            if found is None:
                if not self.skipped_window:
                    self.skipped_window = self.window[a]
                    self.skipped_overdue = self.overdue[a]
                continue
            partners, reason = found
            members = [a, *partners]
            for i in members:
                self._take(i)
            groups.append(Group(tuple([bots[i].bot_id for i in members]), reason))
        filled = self._house_fill()
        if filled is not None:
            groups.append(filled)
        return groups

    def _partners(self, a: int, need: int, k: int) -> tuple[list[int], Reason] | None:
        bots = self.bots
        window = self.window
        a_window = window[a]
        radius = max(a_window, self.skipped_window)
        rematches = self._rematches(a)
        # Rule 4: meet a latest opponent only when too few others wait to fill the group.
        rematch_allowed = self.left - 1 - len(rematches) < need
        good: list[int] = []
        fallback: list[int] = []
        for d, j in self._outwards(a):
            if j in rematches:
                continue
            if d <= radius and (d <= a_window or d <= window[j]):
                good.append(j)
                if len(good) >= k:
                    break
            elif len(fallback) < need and self._mutual(a, j):
                fallback.append(j)
            if d > radius and (
                len(good) + len(fallback) >= need or not (self.skipped_overdue or self._flexible(a))
            ):
                break
        if len(good) >= need:
            if len(good) == need:
                return good, "rating"
            if need == 1:
                # What rng.sample(good, 1) picks, from the same draw, at a third of its cost.
                return [good[self.rng.randrange(len(good))]], "rating"
            return self.rng.sample(good, need), "rating"
        partners = good + fallback[: need - len(good)]
        if len(partners) == need:
            return partners, "overdue" if self._any_overdue(a, partners) else "no_better"
        if rematch_allowed:
            # ... and only a latest opponent that has nobody else to meet either, now or soon:
            # a bot coming back to the queue, whatever its rating, is worth waiting for rather
            # than playing the same bot again (until one of them is overdue).
            again = sorted(
                (
                    j
                    for j in rematches
                    if self._mutual(a, j)
                    and self.left - 1 - len(self._rematches(j)) < need
                    and (
                        self.overdue[a]
                        or self.overdue[j]
                        or not (self._coming(a) or self._coming(j))
                    )
                ),
                key=lambda j: (abs(bots[j].mu - bots[a].mu), bots[j].bot_id),
            )
            partners += again[: need - len(partners)]
            if len(partners) == need:
                return partners, "rematch"
        return None

    def _house_fill(self) -> Group | None:
        """Rule 5: the bots still waiting, fewer than a group, completed by house bots."""
        n = self.params.group_size
        if not self.house or not 0 < self.left < n:
            return None
        remaining = [i for i in range(len(self.bots)) if not self.taken[i]]
        anchor = next((i for i in remaining if not self.bots[i].house), None)
        if anchor is None or self.waited[anchor] < self.params.house_wait_s:
            return None
        members = {self.bots[i].bot_id for i in remaining}
        # At random among those with room, not by rating: house bots are the ladder's anchors,
        # and a weak bot that only ever met the weakest house bot would never be measured
        # against the strong ones (nor a random bot kept off the top of a young ladder). The
        # anchor's latest opponents come last, so it meets a different one when it can.
        latest = self.last.get(self.bots[anchor].bot_id, _NOBODY)
        seats = sorted(
            (h.bot_id in latest, self.rng.random(), h.bot_id)
            for h in self.house
            if h.free > 0 and h.bot_id not in members
        )
        chosen: list[int] = []
        for _, _, bot_id in seats:
            if bot_id not in chosen:
                chosen.append(bot_id)
        missing = n - len(remaining)
        if len(chosen) < missing:
            return None
        for i in remaining:
            self._take(i)
        members_ids = tuple(self.bots[i].bot_id for i in remaining)
        return Group(members_ids + tuple(chosen[:missing]), "house")

    # --- helpers ------------------------------------------------------------------------------

    def _mutual(self, a: int, j: int) -> bool:
        """Whether a and j (not good opponents) may meet now: one has waited max_wait_s, or
        neither has a reason to wait for someone better."""
        if self.overdue[a] or self.overdue[j]:
            return True
        return not self._hopes(a) and not self._hopes(j)

    def _flexible(self, a: int) -> bool:
        """Whether a may meet a bot outside its window now (overdue, or nothing to wait for).
        Asked only once the walk has gone past the window: most anchors never need it."""
        return self.overdue[a] or not self._hopes(a)

    def _any_overdue(self, a: int, partners: list[int]) -> bool:
        return self.overdue[a] or any(self.overdue[j] for j in partners)

    def _hopes(self, i: int) -> bool:
        """Rule 2: a bot playing in this queue, not one of i's latest opponents (nor one that
        just played i), is within i's window."""
        cached = self._hope[i]
        if cached is not None:
            return cached
        bot = self.bots[i]
        w = self.window[i]
        mine = self.last.get(bot.bot_id, _NOBODY)
        waiting = self.index
        hope = False
        for _, other in self.players.within(bot.mu - w, bot.mu + w):
            if (
                other not in waiting
                and other not in mine
                and bot.bot_id not in self.last.get(other, _NOBODY)
            ):
                hope = True
                break
        self._hope[i] = hope
        return hope

    def _coming(self, i: int) -> bool:
        """Whether a bot other than i's latest opponents (and not one that just played i) is
        coming back to this queue, whatever its rating."""
        bot = self.bots[i]
        mine = self.last.get(bot.bot_id, _NOBODY)
        waiting = self.index
        return any(
            other not in waiting
            and other not in mine
            and bot.bot_id not in self.last.get(other, _NOBODY)
            for other in self.players
        )

    def _rematches(self, a: int) -> AbstractSet[int]:
        """The untaken waiting bots that are a's latest opponents or name a as theirs."""
        linked = self.linked.get(a)
        if not linked:
            return _NOBODY
        taken = self.taken
        return {j for j in linked if not taken[j]}

    def _outwards(self, a: int) -> Iterator[tuple[float, int]]:
        """The untaken bots other than a, closest in rating first: (distance, index)."""
        by_mu, mu_at, prv, nxt = self.by_mu, self.mu_at, self.prv, self.nxt
        p = self.pos[a]
        mu = mu_at[p]
        n = len(by_mu)
        left, right = prv[p], nxt[p]
        dl = mu - mu_at[left] if left >= 0 else math.inf
        dr = mu_at[right] - mu if right < n else math.inf
        while left >= 0 or right < n:
            if dl <= dr:
                yield dl, by_mu[left]
                left = prv[left]
                dl = mu - mu_at[left] if left >= 0 else math.inf
            else:
                yield dr, by_mu[right]
                right = nxt[right]
                dr = mu_at[right] - mu if right < n else math.inf

    def _take(self, i: int) -> None:
        self.taken[i] = True
        self.left -= 1
        p = self.pos[i]
        before, after = self.prv[p], self.nxt[p]
        if before >= 0:
            self.nxt[before] = after
        if after < len(self.by_mu):
            self.prv[after] = before


def first_come(waiting: Sequence[Waiter], group_size: int) -> list[Group]:
    """The lobby's former rule, kept as the benchmark's peer: groups in arrival order."""
    ordered = sorted(waiting, key=lambda w: (w.joined_at, w.bot_id))
    return [
        Group(tuple(w.bot_id for w in ordered[i : i + group_size]), "rating")
        for i in range(0, len(ordered) - group_size + 1, group_size)
    ]
