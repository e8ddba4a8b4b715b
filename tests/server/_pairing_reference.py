"""The lobby's decision as ``pairing.pair`` made it until 2026-11-27 (commit 0a64434), kept
verbatim as the reference that the faster walk must agree with (test_pairing.py): one sort by
arrival and one by rating per decision, each anchor's walk a generator, the table of rematches
built up front. Only the name of ``pair`` changed (``reference_pair``), and the data classes
are the module's own."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from operator import attrgetter

from ply_arena.server.referee.pairing import (
    Group,
    HouseSeat,
    Params,
    Player,
    Reason,
    Roster,
    Waiter,
)

_NOBODY: frozenset[int] = frozenset()
_ARRIVAL = attrgetter("joined_at", "bot_id")


def reference_pair(
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
