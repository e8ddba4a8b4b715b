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

Cost: for each anchor a walk outwards from its rating over the bots not yet paired (a linked
list in rating order), and for an anchor with no good opponent a bisection of the bots coming
back (``playing``). The referee keeps both inputs in order between decisions: the waiting bots
by arrival and by rating in a ``Waiters``, the bots coming back by rating in a ``Roster``, so a
decision sorts nothing and its work besides the walks is a few list copies in the number of
waiting bots (plain sequences are sorted on each call instead: tests, one-off callers). The
table of latest opponents among the waiting bots (rule 4) is built only when an anchor that
found too few partners could have a rematch. ``python -m bench.ladder pairing`` has the
figures.
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import chain
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


def _place(keys: list[float], ids: list[int], key: float, bot_id: int) -> int:
    """Where (key, bot_id) is, or goes, in parallel lists ordered by key, then id."""
    if not keys or keys[-1] < key:  # after all of them: a bot joining a queue, as a rule
        return len(keys)
    lo = bisect.bisect_left(keys, key)
    hi = bisect.bisect_right(keys, key, lo)
    return bisect.bisect_left(ids, bot_id, lo, hi)


class Waiters:
    """The bots waiting in one queue, kept in the two orders a decision reads: by arrival (join
    time, then id: the anchors' order) and by rating (mu, then id: the walk's), as bots join,
    are re-rated and leave.

    The referee keeps one per queue between decisions (server/referee/lobby.py), so that
    ``pair`` does not sort the waiting bots twice on every join (with a thousand waiting, the
    two sorts took 0.65 ms). A change is a bisection and list insertions or deletions
    (memmoves), like ``Roster``'s: about 2 us to add a bot and 2.5 us to remove one, with a
    thousand waiting. Each bot is in once: adding a bot already there changes nothing (it keeps
    its place).
    """

    __slots__ = ("_arrival", "_arrival_ids", "_by_id", "_joined", "_mu_ids", "_mus")

    def __init__(self, waiters: Iterable[Waiter] = ()) -> None:
        self._by_id: dict[int, Waiter] = {}
        # By arrival: the Waiter, and its join time and id to bisect on.
        self._arrival: list[Waiter] = []
        self._joined: list[float] = []
        self._arrival_ids: list[int] = []
        # By rating.
        self._mus: list[float] = []
        self._mu_ids: list[int] = []
        for w in waiters:
            self.add(w)

    def add(self, waiter: Waiter) -> bool:
        """Add the bot unless it waits here already; whether it was added."""
        bot_id = waiter.bot_id
        if bot_id in self._by_id:
            return False
        self._by_id[bot_id] = waiter
        at = _place(self._joined, self._arrival_ids, waiter.joined_at, bot_id)
        self._arrival.insert(at, waiter)
        self._joined.insert(at, waiter.joined_at)
        self._arrival_ids.insert(at, bot_id)
        at = _place(self._mus, self._mu_ids, waiter.mu, bot_id)
        self._mus.insert(at, waiter.mu)
        self._mu_ids.insert(at, bot_id)
        return True

    def rerate(self, bot_id: int, mu: float) -> None:
        """The bot's rating changed (nothing when it does not wait here)."""
        old = self._by_id.get(bot_id)
        if old is None:
            return
        new = Waiter(bot_id, old.joined_at, mu, old.house)
        self._by_id[bot_id] = new
        self._arrival[_place(self._joined, self._arrival_ids, old.joined_at, bot_id)] = new
        at = _place(self._mus, self._mu_ids, old.mu, bot_id)
        del self._mus[at], self._mu_ids[at]
        at = _place(self._mus, self._mu_ids, mu, bot_id)
        self._mus.insert(at, mu)
        self._mu_ids.insert(at, bot_id)

    def remove(self, bot_id: int) -> bool:
        """Take the bot out; whether it was in."""
        old = self._by_id.pop(bot_id, None)
        if old is None:
            return False
        at = _place(self._joined, self._arrival_ids, old.joined_at, bot_id)
        del self._arrival[at], self._joined[at], self._arrival_ids[at]
        at = _place(self._mus, self._mu_ids, old.mu, bot_id)
        del self._mus[at], self._mu_ids[at]
        return True

    def get(self, bot_id: int) -> Waiter | None:
        return self._by_id.get(bot_id)

    def by_rating(self) -> list[int]:
        """The bots' ids, lowest rated first (ids break ties)."""
        return list(self._mu_ids)

    def __contains__(self, bot_id: object) -> bool:
        return bot_id in self._by_id

    def __iter__(self) -> Iterator[Waiter]:
        """The bots, in order of arrival (ids break ties)."""
        return iter(self._arrival)

    def __len__(self) -> int:
        return len(self._arrival)


class Roster:
    """Bots by rating (mu, then id), kept in order as they are added, re-rated and removed: the
    bots coming back to a queue, which ``pair`` searches by rating for each anchor.

    The referee keeps one per queue between decisions (server/referee/coming_back.py), so a
    decision no longer reads every such bot's rating and sorts them again: with 400 bots
    thinking 200 ms a move, that re-read on each join was 18% of the event loop's busy time. A
    change is a bisection and a list insertion or deletion (a memmove: a few microseconds for
    ten thousand bots).
    """

    __slots__ = ("_ids", "_mu", "_mus")

    def __init__(self, players: Iterable[Player] = ()) -> None:
        self._mu: dict[int, float] = {}
        # Two parallel lists rather than one of (mu, id) tuples: a bisection of floats compares
        # at C speed, and a decision reads the ids of a rating band as a slice (``ids_within``).
        self._mus: list[float] = []
        self._ids: list[int] = []
        for p in players:
            self.add(p.bot_id, p.mu)

    def add(self, bot_id: int, mu: float) -> None:
        """Add the bot, or move it to its new rating."""
        self.remove(bot_id)
        self._mu[bot_id] = mu
        at = _place(self._mus, self._ids, mu, bot_id)
        self._mus.insert(at, mu)
        self._ids.insert(at, bot_id)

    def remove(self, bot_id: int) -> bool:
        """Take the bot out; whether it was in."""
        mu = self._mu.pop(bot_id, None)
        if mu is None:
            return False
        at = _place(self._mus, self._ids, mu, bot_id)
        del self._mus[at], self._ids[at]
        return True

    def within(self, lo: float, hi: float) -> list[tuple[float, int]]:
        """(mu, bot id) of the bots rated from ``lo`` to ``hi`` (both included), lowest first."""
        mus = self._mus
        start = bisect.bisect_left(mus, lo)
        stop = bisect.bisect_right(mus, hi, start)
        return list(zip(mus[start:stop], self._ids[start:stop], strict=True))

    def ids_within(self, lo: float, hi: float) -> list[int]:
        """The ids of ``within(lo, hi)``, in the same order."""
        mus = self._mus
        start = bisect.bisect_left(mus, lo)
        return self._ids[start : bisect.bisect_right(mus, hi, start)]

    def mu(self, bot_id: int) -> float:
        return self._mu[bot_id]

    def __contains__(self, bot_id: object) -> bool:
        return bot_id in self._mu

    def __iter__(self) -> Iterator[int]:
        """The bots, lowest rated first."""
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


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
    waiting: Sequence[Waiter] | Waiters,
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
    """One decision; the state of ``pair`` while it walks the anchors.

    Bots are numbered by arrival (index ``i``, the anchors' order); the list of bots not yet
    paired is kept in rating order (position ``p``). The walk reads flat lists of numbers, not
    ``Waiter`` attributes, and is written out in ``_partners`` rather than as a generator: each
    anchor's walk was most of a decision's time (5-8 us per anchor over a thousand bots).
    """

    def __init__(
        self,
        waiting: Sequence[Waiter] | Waiters,
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
        if isinstance(waiting, Waiters):
            # Kept in both orders between decisions: read as they stand, never changed here.
            bots = waiting._arrival
            ids = waiting._arrival_ids
            joined = waiting._joined
            index = dict(zip(ids, range(len(ids)), strict=True))
            mus = [w.mu for w in bots]
            by_mu = [index[b] for b in waiting._mu_ids]
            mu_at = waiting._mus
        else:
            bots = sorted(waiting, key=_ARRIVAL)
            ids = [w.bot_id for w in bots]
            index = dict(zip(ids, range(len(ids)), strict=True))
            if len(index) < len(bots):  # a bot listed twice: its first place counts
                seen: set[int] = set()
                firsts: list[Waiter] = []
                for w in bots:
                    if w.bot_id not in seen:
                        seen.add(w.bot_id)
                        firsts.append(w)
                bots = firsts
                ids = [w.bot_id for w in bots]
                index = dict(zip(ids, range(len(ids)), strict=True))
            joined = [w.joined_at for w in bots]
            mus = [w.mu for w in bots]
            by_mu = sorted(range(len(bots)), key=list(zip(mus, ids, strict=True)).__getitem__)
            mu_at = [mus[i] for i in by_mu]
        self.bots = bots
        self.ids = ids
        self.index = index
        self.mus = mus
        n = len(bots)
        # max(0.0, t), without a call per bot.
        waited = [t if t > 0.0 else 0.0 for t in [now - at for at in joined]]
        base, widen = params.window, params.widen_per_s
        self.window = [base + widen * t for t in waited]
        max_wait = params.max_wait_s
        self.overdue = [t >= max_wait for t in waited]
        self.waited = waited
        # A doubly linked list of the bots not yet paired, in rating order (ids break ties):
        # position p holds bot by_mu[p], rated mu_at[p]; nxt / prv skip the positions taken.
        self.by_mu = by_mu
        self.mu_at = mu_at
        pos = [0] * n
        for p, i in enumerate(by_mu):
            pos[i] = p
        self.pos = pos
        self.nxt = list(range(1, n + 1))
        self.prv = list(range(-1, n - 1))
        self.taken = [False] * n
        self.left = n
        # Latest opponents among the waiting bots (rule 4): built when first asked (``_linked``,
        # ``_named``), since the walk tests each neighbour against the anchor's latest opponents
        # itself, and only an anchor left without enough partners may need the tables.
        self._linked_table: dict[int, set[int]] | None = None
        self._named_table: Counter[int] | None = None
        # Bots playing in this queue, by rating, for the "reason to wait" test (those also
        # waiting are skipped where it is read).
        self.players = playing if isinstance(playing, Roster) else Roster(playing)
        self._anyone_coming = len(self.players) > 0
        self._hope: list[bool | None] = [None] * n
        #: The widest window (and whether overdue) among anchors left unpaired: a later anchor
        #: looks that far for good opponents, since the longer waiter's window counts.
        self.skipped_window = 0.0
        self.skipped_overdue = False

    # --- the decision -------------------------------------------------------------------------

    def run(self) -> list[Group]:
        need = self.params.group_size - 1
        k = max(self.params.candidates, need)
        groups: list[Group] = []
        ids, taken, pos, prv, nxt = self.ids, self.taken, self.pos, self.prv, self.nxt
        n = len(ids)
        # What each anchor's walk reads, in one attribute (``_partners`` unpacks it).
        self._walk = (
            self.window,
            self.overdue,
            ids,
            self.last.get,
            self.by_mu,
            self.mu_at,
            pos,
            prv,
            nxt,
        )
        partners_of = self._partners
        for a in range(n):
            if self.left <= need:
                break
            if taken[a]:
                continue
            found = partners_of(a, need, k)
            if found is None:
                if not self.skipped_window:
                    self.skipped_window = self.window[a]
                    self.skipped_overdue = self.overdue[a]
                continue
            partners, reason = found
            members = [a, *partners]
            for i in members:  # out of the linked list
                taken[i] = True
                p = pos[i]
                before, after = prv[p], nxt[p]
                if before >= 0:
                    nxt[before] = after
                if after < n:
                    prv[after] = before
            self.left -= len(members)
            groups.append(Group(tuple([ids[i] for i in members]), reason))
        filled = self._house_fill()
        if filled is not None:
            groups.append(filled)
        return groups

    def _partners(self, a: int, need: int, k: int) -> tuple[list[int], Reason] | None:
        window, overdue, ids, last_get, by_mu, mu_at, pos, prv, nxt = self._walk
        a_window = window[a]
        skipped = self.skipped_window
        radius = skipped if skipped > a_window else a_window  # max(a_window, skipped)
        a_id = ids[a]
        # Rule 4: a's latest opponents, and the bots that name a as theirs, are skipped.
        mine = last_get(a_id, _NOBODY)
        good: list[int] = []
        fallback: list[int] = []
        skipped_overdue = self.skipped_overdue
        a_free: bool | None = None  # _flexible(a), once the walk meets a bot not a good opponent
        # The untaken bots other than a, closest in rating first (distance d, index j): a walk
        # outwards over the linked list from a's position, the closer side first on each step.
        n = len(by_mu)
        p = pos[a]
        mu = mu_at[p]
        left, right = prv[p], nxt[p]
        dl = mu - mu_at[left] if left >= 0 else math.inf
        dr = mu_at[right] - mu if right < n else math.inf
        while left >= 0 or right < n:
            if dl <= dr:
                d = dl
                j = by_mu[left]
                left = prv[left]
                dl = mu - mu_at[left] if left >= 0 else math.inf
            else:
                d = dr
                j = by_mu[right]
                right = nxt[right]
                dr = mu_at[right] - mu if right < n else math.inf
            j_id = ids[j]
            if j_id in mine or a_id in last_get(j_id, _NOBODY):
                continue
            if d <= radius and (d <= a_window or d <= window[j]):
                good.append(j)
                if len(good) >= k:
                    break
            else:
                # Not a good opponent. Whether a may meet it anyway is _mutual(a, j), written
                # with _flexible(a) asked once per anchor: overdue[j] or (a_free and (overdue[a]
                # or not hopes(j))), the same answer, as no reason to wait changes in a decision.
                if a_free is None:
                    a_free = self._flexible(a)
                if len(fallback) < need and (
                    overdue[j] or (a_free and (overdue[a] or not self._hopes(j)))
                ):
                    fallback.append(j)
            if d > radius and (
                len(good) + len(fallback) >= need or not (skipped_overdue or a_free)
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
            if overdue[a]:
                return partners, "overdue"
            for j in partners:
                if overdue[j]:
                    return partners, "overdue"
            return partners, "no_better"
        # Rule 4: meet a latest opponent only when too few others wait to fill the group. At
        # most len(mine) + (the waiting bots naming a) are a's rematches: when even that many
        # leave enough others, no rematch (most anchors that wait stop here).
        if self.left - 1 - len(mine) - self._named().get(a_id, 0) >= need:
            return None
        rematches = self._rematches(a)
        if self.left - 1 - len(rematches) < need:
            # ... and only a latest opponent that has nobody else to meet either, now or soon:
            # a bot coming back to the queue, whatever its rating, is worth waiting for rather
            # than playing the same bot again (until one of them is overdue).
            mus = self.mus
            again = sorted(
                (
                    j
                    for j in rematches
                    if self._mutual(a, j)
                    and self.left - 1 - len(self._rematches(j)) < need
                    and (overdue[a] or overdue[j] or not (self._coming(a) or self._coming(j)))
                ),
                key=lambda j: (abs(mus[j] - mus[a]), ids[j]),
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
        # The last step of a decision: nothing reads which bots are taken after it.
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
        Asked only once the walk meets a bot that is not a good opponent: most anchors never
        need it."""
        return self.overdue[a] or not self._hopes(a)

    def _hopes(self, i: int) -> bool:
        """Rule 2: a bot playing in this queue, not one of i's latest opponents (nor one that
        just played i), is within i's window (worked out once per bot and decision)."""
        hope = self._hope[i]
        if hope is not None:
            return hope
        hope = False
        if self._anyone_coming:
            bot_id = self.ids[i]
            mu = self.mus[i]
            w = self.window[i]
            last_get = self.last.get
            mine = last_get(bot_id, _NOBODY)
            waiting = self.index
            for other in self.players.ids_within(mu - w, mu + w):
                if (
                    other not in waiting
                    and other not in mine
                    and bot_id not in last_get(other, _NOBODY)
                ):
                    hope = True
                    break
        self._hope[i] = hope
        return hope

    def _coming(self, i: int) -> bool:
        """Whether a bot other than i's latest opponents (and not one that just played i) is
        coming back to this queue, whatever its rating."""
        bot_id = self.ids[i]
        mine = self.last.get(bot_id, _NOBODY)
        waiting = self.index
        return any(
            other not in waiting
            and other not in mine
            and bot_id not in self.last.get(other, _NOBODY)
            for other in self.players
        )

    def _rematches(self, a: int) -> AbstractSet[int]:
        """The untaken waiting bots that are a's latest opponents or name a as theirs."""
        linked = self._linked().get(a)
        if not linked:
            return _NOBODY
        taken = self.taken
        return {j for j in linked if not taken[j]}

    def _named(self) -> Counter[int]:
        """How many waiting bots name each bot among their latest opponents: built on the first
        call of a decision (only anchors left without enough partners ask)."""
        named = self._named_table
        if named is None:
            last_get = self.last.get
            named = self._named_table = Counter(
                chain.from_iterable([last_get(bot_id, _NOBODY) for bot_id in self.ids])
            )
        return named

    def _linked(self) -> dict[int, set[int]]:
        """Latest opponents among the waiting bots, both ways (rule 4), by index: built on the
        first call of a decision (only anchors left without enough partners ask)."""
        linked = self._linked_table
        if linked is None:
            linked = self._linked_table = {}
            index, last = self.index, self.last
            if last:
                for i, bot_id in enumerate(self.ids):
                    for other in last.get(bot_id, _NOBODY):
                        j = index.get(other)
                        if j is not None and j != i:
                            linked.setdefault(i, set()).add(j)
                            linked.setdefault(j, set()).add(i)
        return linked


def first_come(waiting: Sequence[Waiter], group_size: int) -> list[Group]:
    """The lobby's former rule, kept as the benchmark's peer: groups in arrival order."""
    ordered = sorted(waiting, key=lambda w: (w.joined_at, w.bot_id))
    return [
        Group(tuple(w.bot_id for w in ordered[i : i + group_size]), "rating")
        for i in range(0, len(ordered) - group_size + 1, group_size)
    ]
