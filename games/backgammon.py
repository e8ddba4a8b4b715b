"""Backgammon, single game (no doubling cube), with dice as chance nodes.

Seats: 0 is white, 1 is black (rendered ``X`` and ``O``). Each side numbers the points 1..24
from its own home board: a checker moves from high points to low ones, enters from the bar
(point 25 in the tables below) and bears off to point 0. White's point ``p`` is black's point
``25 - p``.

The game starts at a chance node with the 30 non-tied ordered pairs (white's die, black's die),
1/30 each (ties are rerolled, so they are left out). The higher die moves first and plays both
numbers: the next state is already a decision node. After every play comes a chance node with the
21 distinct rolls ``(high, low)``, 1/36 for doubles and 2/36 otherwise.

A move is one whole turn's play: a tuple of single-die steps ``(from, to)`` from the mover's point
of view, sorted in descending order (which is always a legal order to play them in), e.g.
``((13, 11), (8, 5))``; ``25`` is the bar, ``0`` is off; ``()`` is the forced pass. ``actions()``
gives exactly one play per distinct resulting position. Notation is gnubg's: ``24/18 13/11``,
``bar/22``, ``6/off``, ``13/7*`` for a hit, ``8/5(2)``, ``24/18*/13``.

The hot path (random playouts) is move generation. Two facts keep it fast: with two different dice
two plays lead to the same position only when one checker travels both dice through either of two
intermediate points without hitting, and with doubles different multisets of steps always give
different positions. So plays are generated directly, one per position, without building
positions; pairs of steps come from tables built at import.

    >>> from ply_arena import games
    >>> g = games.get("backgammon")
    >>> s = g.initial_state().result((3, 1))     # white 3, black 1: white plays 3-1
    >>> s.player, s.dice, len(s.actions())
    (0, (3, 1), 16)
    >>> g.format_move(s, g.parse_move(s, "8/5 6/5"))
    '8/5 6/5'
"""

from __future__ import annotations

import re
from itertools import compress
from typing import Any

from ply_arena.games._api import (
    CHANCE,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    State,
    illegal_move_message,
)

Point = int  # 0 = borne off, 1..24 = points counted from the owner's home board, 25 = bar
Step = tuple[Point, Point]  # one die: (from, to)
Play = tuple[Step, ...]  # a whole turn, steps in descending order
Board = tuple[int, ...]  # 26 checker counts indexed by Point, in the owner's own numbering
Roll = tuple[int, int]

WHITE, BLACK = 0, 1
OFF, BAR = 0, 25
NUM_CHECKERS = 15
PASS: Play = ()

_start = [0] * 26
_start[24], _start[13], _start[8], _start[6] = 2, 5, 3, 5
START: Board = tuple(_start)

#: Interned steps: STEP[f][t] is the tuple (f, t), so plays share them and compare by identity.
STEP: list[list[Step]] = [[(f, t) for t in range(26)] for f in range(26)]

ROLLS: tuple[Roll, ...] = tuple((hi, lo) for hi in range(1, 7) for lo in range(1, hi + 1))
_ROLL_OUTCOMES: list[tuple[Move, float]] = [(r, (1 if r[0] == r[1] else 2) / 36) for r in ROLLS]
OPENING_ROLLS: tuple[Roll, ...] = tuple((w, b) for w in range(1, 7) for b in range(1, 7) if w != b)
_OPENING_OUTCOMES: list[tuple[Move, float]] = [(r, 1 / 30) for r in OPENING_ROLLS]

_R26 = range(26)
_NO_RETURNS = (0.0, 0.0)


def _pair_tables(hi: int, lo: int, single: bool) -> list[list[Play]]:
    """T[a][b]: the sorted play "a checker from a by hi, one from b by lo", or () to skip it.

    Skipped: b where the first checker lands (that play is the chain a -> a-hi -> a-hi-lo) and
    b = a + lo (the chain through a), which the chain rule adds once, and with a ``single``
    checker on a, b = a.
    """
    table: list[list[Play]] = [[() for _ in range(26)] for _ in range(26)]
    for a in range(hi + 1, 25):
        for b in range(lo + 1, 25):
            if b == a - hi or b == a + lo or (single and b == a):
                continue
            s, t = STEP[a][a - hi], STEP[b][b - lo]
            table[a][b] = (s, t) if s > t else (t, s)
    return table


#: _PAIRS[hi, lo] = (table when a holds two or more checkers, table when it holds one), hi > lo.
_PAIRS: dict[tuple[int, int], tuple[list[list[Play]], list[list[Play]]]] = {
    (hi, lo): (_pair_tables(hi, lo, False), _pair_tables(hi, lo, True))
    for hi in range(2, 7)
    for lo in range(1, hi)
}


# --------------------------------------------------------------------------------------------
# Move generation. `me` is the mover's board, `opr` the opponent's board reversed, so that
# opr[p] is the number of opponent checkers on the mover's point p (1..24).


def _steps(me: Board | list[int], opr: Board, d: int, outside: int, top: int = BAR) -> list[Step]:
    """Every legal single step with die d from a point <= top, in descending order.

    ``outside`` is the number of the mover's checkers on the bar or on points 7..24.
    """
    if me[BAR]:
        if top < BAR:
            return []
        t = BAR - d
        return [STEP[BAR][t]] if opr[t] < 2 else []
    first = top if top < 24 else 24
    if not outside and first > 6:
        first = 6  # all at home: nothing above 6
    row = STEP
    out = [row[p][p - d] for p in compress(range(first, d, -1), me[first:d:-1]) if opr[p - d] < 2]
    if not outside:
        if me[d]:
            if d <= top:
                out.append(STEP[d][OFF])
        else:
            # A higher die bears off from the highest occupied point only.
            high = 6
            while high and not me[high]:
                high -= 1
            if 0 < high < d and high <= top:
                out.append(STEP[high][OFF])
    return out


def _plays_generic(me: Board, opr: Board, hi: int, lo: int) -> list[Play]:
    """All plays, one per resulting position, by plain enumeration (any position, any roll)."""
    outside = NUM_CHECKERS - me[OFF] - sum(me[1:7])
    if hi == lo:
        return _plays_double_generic(me, opr, hi, outside)
    found: dict[Play, None] = {}
    first_hi = _steps(me, opr, hi, outside)
    first_lo = _steps(me, opr, lo, outside)
    for first, second in ((first_hi, lo), (first_lo, hi)):
        for s in first:
            f, t = s
            m = list(me)
            m[f] -= 1
            m[t] += 1
            out2 = outside - (f > 6 and t <= 6)
            for s2 in _steps(m, opr, second, out2):
                found[(s, s2) if s >= s2 else (s2, s)] = None
    if found:
        # One checker moved through either intermediate point: one position unless a hit differs.
        chains: dict[Step, Play] = {}
        for play in list(found):
            (a, m1), (m2, c) = play
            if m1 == m2 and opr[m1] != 1:
                other = chains.get(STEP[a][c])
                if other is None:
                    chains[STEP[a][c]] = play
                else:
                    # Keep the route through the lower intermediate point (the higher die first).
                    del found[play if m1 > other[0][1] else other]
        return list(found)
    if first_hi:
        return [(s,) for s in first_hi]
    if first_lo:
        return [(s,) for s in first_lo]
    return [PASS]


def _plays_double_generic(
    me: Board, opr: Board, d: int, outside: int, prefix: Play = ()
) -> list[Play]:
    """Doubles: every multiset of up to four steps, sources non-increasing, longest only."""
    best: list[list[Play]] = [[]]  # best[0]: plays of the longest length found so far
    longest = [0]

    def extend(m: list[int], out: int, top: int, steps: tuple[Step, ...]) -> None:
        nxt = _steps(m, opr, d, out, top) if len(steps) < 4 else []  # prefix counts
        if not nxt:
            n = len(steps)
            if n > longest[0]:
                longest[0] = n
                best[0] = [steps]
            elif n == longest[0]:
                best[0].append(steps)
            return
        for s in nxt:
            f, t = s
            m[f] -= 1
            m[t] += 1
            extend(m, out - (f > 6 and t <= 6), f, (*steps, s))
            m[f] += 1
            m[t] -= 1

    extend(list(me), outside, BAR, prefix)
    plays = best[0]
    return plays if longest[0] else [PASS]


def _plays(me: Board, opr: Board, hi: int, lo: int) -> list[Play]:
    """All plays for the roll (hi, lo), one per distinct resulting position."""
    home = me[OFF] + me[1] + me[2] + me[3] + me[4] + me[5] + me[6]
    # The fast paths need: no checker on the bar, and enough checkers outside the home board
    # that nobody can bear off during this turn (2 for two dice, 4 for doubles).
    if hi == lo:
        return _plays_double(me, opr, hi, home)
    if me[BAR]:
        return _plays_entering(me, opr, hi, lo)
    if home > 13:
        return _plays_generic(me, opr, hi, lo)
    occ = list(compress(_R26, me))
    # Fast path for two different dice: no checker on the bar and at least two outside the home
    # board, so nobody bears off this turn and one step never changes what the other may do,
    # except that a checker arriving on a point can move on (a chain, handled separately).
    shi = [a for a in occ if a > hi and opr[a - hi] < 2]
    slo = [b for b in occ if b > lo and opr[b - lo] < 2]
    plays: list[Play] = []
    if shi and slo:
        many, single = _PAIRS[hi, lo]
        extend = plays.extend
        for a in shi:
            extend(filter(None, map((many if me[a] > 1 else single)[a].__getitem__, slo)))
    both = hi + lo
    for a in occ:
        if a > both and opr[a - both] < 2:
            mh = a - hi
            ml = a - lo
            c = a - both
            if opr[mh] < 2:
                plays.append((STEP[a][mh], STEP[mh][c]))
                if opr[ml] < 2 and (opr[mh] == 1 or opr[ml] == 1):
                    plays.append((STEP[a][ml], STEP[ml][c]))
            elif opr[ml] < 2:
                plays.append((STEP[a][ml], STEP[ml][c]))
    if plays:
        return plays
    if shi:
        return [(STEP[a][a - hi],) for a in reversed(shi)]
    if slo:
        return [(STEP[b][b - lo],) for b in reversed(slo)]
    return [PASS]


def _plays_entering(me: Board, opr: Board, hi: int, lo: int) -> list[Play]:
    """Two different dice with checkers on the bar (nobody bears off: the entered one is out)."""
    eh = BAR - hi
    el = BAR - lo
    can_h = opr[eh] < 2
    can_l = opr[el] < 2
    if me[BAR] > 1:
        if can_h and can_l:
            return [(STEP[BAR][el], STEP[BAR][eh])]
        return [(STEP[BAR][eh],)] if can_h else [(STEP[BAR][el],)] if can_l else [PASS]
    plays: list[Play] = []
    occ = list(compress(_R26, me))
    if can_h:
        e = STEP[BAR][eh]
        plays += [(e, STEP[b][b - lo]) for b in occ if lo < b < BAR and b != eh and opr[b - lo] < 2]
    if can_l:
        e = STEP[BAR][el]
        plays += [(e, STEP[b][b - hi]) for b in occ if hi < b < BAR and b != el and opr[b - hi] < 2]
    # The entering checker moves on: through either entry point, distinct only if a hit differs.
    c = BAR - hi - lo
    if opr[c] < 2:
        if can_h:
            plays.append((STEP[BAR][eh], STEP[eh][c]))
            if can_l and (opr[eh] == 1 or opr[el] == 1):
                plays.append((STEP[BAR][el], STEP[el][c]))
        elif can_l:
            plays.append((STEP[BAR][el], STEP[el][c]))
    if plays:
        return plays
    return [(STEP[BAR][eh],)] if can_h else [(STEP[BAR][el],)] if can_l else [PASS]


#: _DROW[d][p]: the step (p, p - d) for p > d.
_DROW: list[list[Any]] = [[STEP[p][p - d] if p > d else () for p in range(26)] for d in range(7)]


def _plays_double(me: Board, opr: Board, d: int, home: int) -> list[Play]:
    """Doubles: up to four steps of d, as many as possible; one play per multiset of steps."""
    prefix: Play = ()
    steps = 4
    if me[BAR]:
        e = BAR - d
        if opr[e] >= 2:
            return [PASS]
        # Entering checkers go first and land outside the home board, so no bearing off follows.
        n = me[BAR] if me[BAR] < 4 else 4
        prefix = (STEP[BAR][e],) * n
        steps -= n
        if not steps:
            return [prefix]
        m = list(me)
        m[BAR] -= n
        m[e] += n
        me = tuple(m)
    elif home > 11:
        # Fewer than four checkers outside: bearing off may start during the turn.
        return _plays_double_generic(me, opr, d, NUM_CHECKERS - home)
    # Points a checker could move from during the turn: its landing point is open, it is not
    # blocked itself, and a checker is there or can arrive from a point above.
    row = _DROW[d]
    cand: list[int] = []
    incand = [False] * 31
    for p in range(24, d, -1):
        if opr[p - d] < 2 and opr[p] < 2 and (me[p] or incand[p + d]):
            cand.append(p)
            incand[p] = True
    n = len(cand)
    av = list(me)
    plays: list[Play] = []
    if steps == 4:
        moves = [row[p] for p in cand]
        for i in range(n):
            p1 = cand[i]
            if not av[p1]:
                continue
            s1 = moves[i]
            q1 = p1 - d
            av[p1] -= 1
            av[q1] += 1
            for j in range(i, n):
                p2 = cand[j]
                if not av[p2]:
                    continue
                s2 = moves[j]
                q2 = p2 - d
                av[p2] -= 1
                av[q2] += 1
                # The last two steps at once: from p3 >= p4 among the points holding a checker
                # now, p4 = p3 again only if two are there, or p4 = where the third one landed.
                live = [k for k in range(j, n) if av[cand[k]]]
                lm = [moves[k] for k in live]
                for x, k in enumerate(live):
                    p3 = cand[k]
                    s3 = moves[k]
                    plays += [(s1, s2, s3, s4) for s4 in lm[x if av[p3] > 1 else x + 1 :]]
                    q3 = p3 - d
                    if incand[q3] and not av[q3]:
                        plays.append((s1, s2, s3, row[q3]))
                av[p2] += 1
                av[q2] -= 1
            av[p1] += 1
            av[q1] -= 1
    else:
        _extend_double(av, cand, incand, 0, steps, prefix, row, d, plays)
    if plays:
        return plays
    # Not all steps can be played (rare): plain search for the longest plays.
    return _plays_double_generic(me, opr, d, NUM_CHECKERS - sum(me[:7]), prefix)


def _extend_double(
    av: list[int],
    cand: list[int],
    incand: list[bool],
    i: int,
    left: int,
    done: Play,
    row: list[Step],
    d: int,
    out: list[Play],
) -> None:
    """Append to out every way to add `left` steps from cand[i:], sources non-increasing."""
    if left == 1:
        out += [(*done, row[p]) for p in cand[i:] if av[p]]
        return
    if left == 2:
        # As in the four-step loops: the last two steps at once.
        live = [p for p in cand[i:] if av[p]]
        lm = [row[p] for p in live]
        for x, p in enumerate(live):
            s = lm[x]
            out += [(*done, s, s4) for s4 in lm[x if av[p] > 1 else x + 1 :]]
            if incand[p - d] and not av[p - d]:
                out.append((*done, s, row[p - d]))
        return
    for j in range(i, len(cand)):
        p = cand[j]
        if av[p]:
            av[p] -= 1
            av[p - d] += 1
            _extend_double(av, cand, incand, j, left - 1, (*done, row[p]), row, d, out)
            av[p] += 1
            av[p - d] -= 1


# --------------------------------------------------------------------------------------------
# States


class BackgammonState(State):
    """A position: both boards, whose turn, the dice (at a decision node).

    ``me`` is the board of ``mover`` (the seat that moves now, or rolls next at a chance node)
    and ``op`` the other seat's, each a 26-tuple of counts in its owner's numbering (0 = off,
    1..24 = points, 25 = bar). Use ``checkers(seat)``, ``pip_count(seat)``, ``blots(seat)`` and
    ``made_points(seat)`` rather than these raw fields in evaluations.
    """

    __slots__ = ("_actions", "_returns", "dice", "me", "mover", "op", "opening", "player")

    me: Board
    op: Board
    mover: int
    player: int
    dice: Roll | None
    opening: bool
    _actions: tuple[Any, ...] | None  # plays, or rolls at a chance node
    _returns: tuple[float, float] | None

    def actions(self) -> tuple[Any, ...]:
        acts = self._actions
        if acts is None:
            if self._returns is not None:
                acts = ()
            elif self.player == CHANCE:
                acts = OPENING_ROLLS if self.opening else ROLLS
            else:
                dice = self.dice
                assert dice is not None
                # A tuple, so that a caller can never reorder the cached list.
                acts = tuple(_plays(self.me, self.op[::-1], dice[0], dice[1]))
            self._actions = acts
        return acts

    def chance_outcomes(self) -> list[tuple[Move, float]]:
        if self.player != CHANCE:
            return []
        return list(_OPENING_OUTCOMES if self.opening else _ROLL_OUTCOMES)

    def result(self, move: Move) -> BackgammonState:
        if self.player == CHANCE:
            return self._roll(move)
        acts = self.actions()
        if move not in acts:
            raise ValueError(f"{move!r} is not a legal backgammon play here")
        me = list(self.me)
        op = self.op
        opl: list[int] | None = None
        for f, t in move:  # type: ignore[attr-defined]
            me[f] -= 1
            me[t] += 1
            if t and (opl or op)[25 - t] == 1:
                if opl is None:
                    opl = list(op)
                opl[25 - t] = 0
                opl[BAR] += 1
        s = object.__new__(BackgammonState)
        s.me = op if opl is None else tuple(opl)
        s.op = tuple(me)
        s.mover = 1 - self.mover
        s.dice = None
        s.opening = False
        s._actions = None
        if me[OFF] == NUM_CHECKERS:
            s.player = s.mover
            s._returns = _returns_for(self.mover, s.me)
        else:
            s.player = CHANCE
            s._returns = None
        return s

    def _roll(self, roll: Move) -> BackgammonState:
        s = object.__new__(BackgammonState)
        s._actions = None
        s._returns = None
        s.opening = False
        if self.opening:
            if roll not in _OPENING_SET:
                raise ValueError(
                    f"{roll!r} is not an opening roll: expected (white die, black die)"
                )
            w, b = roll
            if w > b:
                s.mover, s.me, s.op, s.dice = WHITE, self.me, self.op, (w, b)
            else:
                s.mover, s.me, s.op, s.dice = BLACK, self.op, self.me, (b, w)
        else:
            if roll not in _ROLL_SET:
                raise ValueError(f"{roll!r} is not a roll: expected (high die, low die)")
            s.mover, s.me, s.op, s.dice = self.mover, self.me, self.op, roll
        s.player = s.mover
        return s

    def is_terminal(self) -> bool:
        return self._returns is not None

    def returns(self) -> tuple[float, float]:
        r = self._returns
        return _NO_RETURNS if r is None else r

    # -- evaluation helpers ---------------------------------------------------------------

    def checkers(self, seat: int) -> Board:
        """Seat's 26 counts in its own numbering: [0] borne off, [1..24] points, [25] bar."""
        return self.me if seat == self.mover else self.op

    def pip_count(self, seat: int) -> int:
        """Pips the seat still has to move to bear everything off (bar = 25)."""
        b = self.checkers(seat)
        return sum(p * b[p] for p in range(1, 26))

    def blots(self, seat: int) -> int:
        """Points 1..24 where the seat has exactly one checker."""
        return self.checkers(seat)[1:25].count(1)

    def made_points(self, seat: int) -> int:
        """Points 1..24 where the seat has two or more checkers (blocks for the opponent)."""
        b = self.checkers(seat)
        return sum(1 for p in range(1, 25) if b[p] >= 2)

    def points(self) -> tuple[int, ...]:
        """24 signed counts from white's point 1 to 24: positive white, negative black."""
        w, b = self.checkers(WHITE), self.checkers(BLACK)
        return tuple(w[p] - b[25 - p] for p in range(1, 25))

    # -- identity -----------------------------------------------------------------------

    def _key(self) -> tuple[Any, ...]:
        return (self.me, self.op, self.mover, self.player, self.dice, self.opening)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BackgammonState) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"BackgammonState(points={self.points()}, bar={self.bar()}, off={self.off()}, "
            f"player={self.player}, mover={self.mover}, dice={self.dice}, opening={self.opening})"
        )

    def bar(self) -> tuple[int, int]:
        return self.checkers(WHITE)[BAR], self.checkers(BLACK)[BAR]

    def off(self) -> tuple[int, int]:
        return self.checkers(WHITE)[OFF], self.checkers(BLACK)[OFF]


_OPENING_SET = frozenset(OPENING_ROLLS)
_ROLL_SET = frozenset(ROLLS)


def _returns_for(winner: int, loser: Board) -> tuple[float, float]:
    """1 for a single game, 2 for a gammon, 3 for a backgammon (loser's 19..25 = winner's home)."""
    value = 1.0
    if loser[OFF] == 0:
        value = 3.0 if any(loser[19:26]) else 2.0
    return (value, -value) if winner == WHITE else (-value, value)


def _make(
    me: Board,
    op: Board,
    mover: int,
    player: int,
    dice: Roll | None,
    opening: bool,
) -> BackgammonState:
    s = object.__new__(BackgammonState)
    s.me, s.op, s.mover, s.player, s.dice, s.opening = me, op, mover, player, dice, opening
    s._actions = None
    s._returns = None
    if op[OFF] == NUM_CHECKERS:
        s._returns = _returns_for(1 - mover, me)
    return s


# --------------------------------------------------------------------------------------------
# Notation

_TOKEN = re.compile(r"(bar|\d{1,2})\*?((?:/(?:off|\d{1,2})\*?)+)(?:\((\d)\))?")
_EXPECTED = (
    "expected a backgammon play such as '24/18 13/11', 'bar/22', '6/off', '13/7*', '8/5(2)' "
    "or '24/18/13' (points 1-24 from the mover's side, 'bar', 'off'), or 'pass'"
)


def _hit_points(me: Board, op: Board, play: Play) -> list[bool]:
    """For each step of the play (in order), whether it hits an opponent blot."""
    hit: list[bool] = []
    gone: set[int] = set()
    for _, t in play:
        h = 0 < t < 25 and op[25 - t] == 1 and t not in gone
        if h:
            gone.add(t)
        hit.append(h)
    return hit


def _point_name(p: int) -> str:
    return "bar" if p == BAR else "off" if p == OFF else str(p)


def _format_play(me: Board, op: Board, play: Play) -> str:
    if not play:
        return "pass"
    hits = _hit_points(me, op, play)
    # Chain the steps of one checker: a step from where an earlier step landed continues it.
    paths: list[list[tuple[int, bool]]] = []
    for (f, t), h in zip(play, hits, strict=True):
        for path in paths:
            if path[-1][0] == f:
                path.append((t, h))
                break
        else:
            paths.append([(f, False), (t, h)])
    # Intermediate points are written only where the checker hit.
    shown: list[tuple[tuple[int, ...], str]] = []
    for path in paths:
        nodes = [path[0]] + [n for n in path[1:-1] if n[1]] + [path[-1]]
        text = "/".join(_point_name(p) + ("*" if h else "") for p, h in nodes)
        shown.append((tuple(p for p, _ in nodes), text))
    shown.sort(key=lambda item: item[0], reverse=True)
    groups: list[list[Any]] = []  # [points, text, count]
    for pts, text in shown:
        if groups and groups[-1][0] == pts:
            groups[-1][2] += 1
            if "*" in text:
                groups[-1][1] = text
        else:
            groups.append([pts, text, 1])
    return " ".join(text if n == 1 else f"{text}({n})" for _, text, n in groups)


def _parse_segments(text: str) -> list[tuple[int, int]] | None:
    """Text -> hops (from, to) between named points; None for 'pass'. Raises InvalidMoveError."""
    words = text.strip().lower().replace(",", " ").split()
    if words == ["pass"] or words == ["-"]:
        return None
    if not words:
        raise InvalidMoveError(f"cannot parse backgammon play {text!r}: {_EXPECTED}")
    hops: list[tuple[int, int]] = []
    for word in words:
        m = _TOKEN.fullmatch(word)
        if m is None:
            raise InvalidMoveError(
                f"cannot parse backgammon play {text!r} at {word!r}: {_EXPECTED}"
            )
        names = [m.group(1)] + [x.rstrip("*") for x in m.group(2).split("/")[1:]]
        pts: list[int] = []
        for i, name in enumerate(names):
            if name == "bar":
                p = BAR
            elif name == "off":
                p = OFF
            else:
                p = int(name)
                if not 1 <= p <= 24:
                    raise InvalidMoveError(
                        f"cannot parse backgammon play {text!r}: point {p} is not 1-24; {_EXPECTED}"
                    )
            if (p == BAR and i > 0) or (p == OFF and i < len(names) - 1):
                raise InvalidMoveError(
                    f"cannot parse backgammon play {text!r}: 'bar' only starts and 'off' only "
                    f"ends a move; {_EXPECTED}"
                )
            if pts and p >= pts[-1]:
                raise InvalidMoveError(
                    f"cannot parse backgammon play {text!r}: {word!r} must move to lower points; "
                    f"{_EXPECTED}"
                )
            pts.append(p)
        count = int(m.group(3)) if m.group(3) else 1
        if not 1 <= count <= 4:
            raise InvalidMoveError(
                f"cannot parse backgammon play {text!r}: repeat 1-4; {_EXPECTED}"
            )
        for _ in range(count):
            hops.extend((pts[i], pts[i + 1]) for i in range(len(pts) - 1))
    return hops


DieStep = tuple[int, int, int]  # (from, to, die)


def _realizations(
    f: int, t: int, dice: tuple[int, ...]
) -> list[tuple[list[DieStep], tuple[int, ...]]]:
    """Ways to move one checker from f to t with some of the dice: (steps, dice left)."""
    out: list[tuple[list[DieStep], tuple[int, ...]]] = []
    for i, d in enumerate(dice):
        if d in dice[:i]:
            continue
        rest = dice[:i] + dice[i + 1 :]
        nxt = f - d
        if nxt == t or (t == OFF and nxt < 0):
            out.append(([(f, t, d)], rest))
        elif nxt > t and nxt >= 1:
            for steps, left in _realizations(nxt, t, rest):
                out.append(([(f, nxt, d), *steps], left))
    return out


def _position_after(me: Board, op: Board, play: Play) -> tuple[Board, Board]:
    """Both boards after a legal play (the same arithmetic as ``result``)."""
    m, o = list(me), list(op)
    for f, t in play:
        m[f] -= 1
        m[t] += 1
        if t and o[25 - t] == 1:
            o[25 - t] = 0
            o[BAR] += 1
    return tuple(m), tuple(o)


def _apply_checked(me: Board, op: Board, steps: list[DieStep]) -> tuple[Board, Board] | None:
    """Play the die steps in descending order, checking each; both boards after, or None."""
    opr = op[::-1]
    m = list(me)
    play: list[Step] = []
    for f, t, d in sorted(steps, reverse=True):
        outside = NUM_CHECKERS - m[OFF] - sum(m[1:7])
        if STEP[f][t] not in _steps(m, opr, d, outside, f):
            return None
        m[f] -= 1
        m[t] += 1
        play.append(STEP[f][t])
    return _position_after(me, op, tuple(play))


class Backgammon(Game):
    name = "backgammon"
    num_players = 2
    has_chance = True
    summary = "Single-game backgammon, no cube; dice are chance nodes; gammon 2, backgammon 3."
    seat_names = ("white", "black")
    min_utility = -3.0
    max_utility = 3.0
    constant_sum = 0.0

    def initial_state(self) -> BackgammonState:
        return _make(START, START, WHITE, CHANCE, None, True)

    def format_move(self, state: State, move: Move) -> str:
        assert isinstance(state, BackgammonState)
        if state.player == CHANCE:
            roll: Any = move
            return f"{roll[0]}-{roll[1]}"
        return _format_play(state.me, state.op, move)  # type: ignore[arg-type]

    def parse_move(self, state: State, text: str) -> Move:
        assert isinstance(state, BackgammonState)
        if state.is_terminal():
            raise IllegalMoveError(illegal_move_message(self, state, text))
        if state.player == CHANCE:
            return self._parse_roll(state, text)
        hops = _parse_segments(text)
        legal = state.actions()
        if hops is None:
            if legal == (PASS,):
                return PASS
            raise IllegalMoveError(illegal_move_message(self, state, text))
        me, op = state.me, state.op
        assert state.dice is not None
        hi, lo = state.dice
        dice = (hi,) * 4 if hi == lo else (hi, lo)
        used = len(legal[0])  # every legal play uses the same number of dice
        # Position -> legal play; hits are part of the position, so routes that hit differ.
        by_key = {_position_after(me, op, p): p for p in legal}
        opr = op[::-1]
        matches: dict[Play, int] = {}  # play -> fewest hits on points the text did not name

        def realize(i: int, left: tuple[int, ...], steps: list[DieStep], hidden: int) -> None:
            if i == len(hops):
                if len(steps) == used:
                    play = by_key.get(_apply_checked(me, op, steps))  # type: ignore[arg-type]
                    if play is not None:
                        matches[play] = min(matches.get(play, 99), hidden)
                return
            f, t = hops[i]
            for seq, rest in _realizations(f, t, left):
                blots = sum(1 for _, x, _ in seq[:-1] if opr[x] == 1)
                realize(i + 1, rest, steps + seq, hidden + blots)

        realize(0, dice, [], 0)
        if not matches:
            raise IllegalMoveError(illegal_move_message(self, state, text))
        fewest = min(matches.values())
        best = [p for p, h in matches.items() if h == fewest]
        if len(best) > 1:
            shown = ", ".join(_format_play(me, op, p) for p in best)
            raise IllegalMoveError(
                f"ambiguous backgammon play {text!r}: it could be {shown}; "
                "name the intermediate point"
            )
        return best[0]

    def _parse_roll(self, state: BackgammonState, text: str) -> Roll:
        m = re.fullmatch(r"\s*([1-6])\s*[-, ]?\s*([1-6])\s*", text)
        if m is None:
            raise InvalidMoveError(
                f"cannot parse dice {text!r}: expected two dice such as '6-5' "
                "(at the opening: white's die, then black's)"
            )
        a, b = int(m.group(1)), int(m.group(2))
        roll = (a, b) if state.opening else (max(a, b), min(a, b))
        if roll not in state.actions():
            raise IllegalMoveError(illegal_move_message(self, state, text))
        return roll

    # -- JSON ---------------------------------------------------------------------------------

    def state_to_json(self, state: State) -> dict[str, Any]:
        assert isinstance(state, BackgammonState)
        return {
            "points": list(state.points()),
            "bar": list(state.bar()),
            "off": list(state.off()),
            "player": state.player,
            "turn": None if state.opening else state.mover,
            "dice": None if state.dice is None else list(state.dice),
            "opening": state.opening,
        }

    def state_from_json(self, data: dict[str, Any]) -> BackgammonState:
        def fail(why: str) -> ValueError:
            return ValueError(
                f"backgammon JSON: {why}; expected {{'points': 24 signed ints (white positive, "
                "from white's point 1), 'bar': [w, b], 'off': [w, b], 'player': 0|1|-1, "
                "'turn': 0|1|null, 'dice': [high, low]|null, 'opening': bool}"
            )

        if not isinstance(data, dict):
            raise fail("not an object")

        def ints(key: str, n: int) -> list[int]:
            v = data.get(key)
            if not isinstance(v, list) or len(v) != n or not all(type(x) is int for x in v):
                raise fail(f"{key!r} must be a list of {n} integers")
            return v

        points = ints("points", 24)
        bar, off = ints("bar", 2), ints("off", 2)
        if min(bar + off) < 0:
            raise fail("bar and off counts cannot be negative")
        white = [off[0], *[max(x, 0) for x in points], bar[0]]
        black = [off[1], *[max(-x, 0) for x in reversed(points)], bar[1]]
        for seat, board in ((WHITE, white), (BLACK, black)):
            if sum(board) != NUM_CHECKERS:
                raise fail(f"{self.seat_names[seat]} has {sum(board)} checkers, not 15")
        player, turn, dice, opening = (data.get(k) for k in ("player", "turn", "dice", "opening"))
        if type(opening) is not bool:
            raise fail("'opening' must be true or false")
        if player not in (WHITE, BLACK, CHANCE) or type(player) is not int:
            raise fail("'player' must be 0, 1 or -1")
        if dice is not None:
            if (
                not isinstance(dice, list)
                or len(dice) != 2
                or not all(type(x) is int and 1 <= x <= 6 for x in dice)
                or dice[0] < dice[1]
            ):
                raise fail("'dice' must be null or [high, low] with dice 1-6")
            dice = (dice[0], dice[1])
        if opening:
            if player != CHANCE or dice is not None or turn is not None:
                raise fail("the opening is a chance node: player -1, dice null, turn null")
            if tuple(white) != START or tuple(black) != START:
                raise fail("the opening needs the starting position")
            return _make(START, START, WHITE, CHANCE, None, True)
        if turn not in (WHITE, BLACK) or type(turn) is not int:
            raise fail("'turn' must be 0 or 1 (the seat to move or to roll next)")
        me, op = (white, black) if turn == WHITE else (black, white)
        if off[0] == NUM_CHECKERS and off[1] == NUM_CHECKERS:
            raise fail("both sides cannot have borne off everything")
        if NUM_CHECKERS in off:
            if dice is not None or player != turn or op[OFF] != NUM_CHECKERS:
                raise fail(
                    "a finished game has dice null and player = turn = the loser (the side "
                    "that would move next)"
                )
        elif player == CHANCE:
            if dice is not None:
                raise fail("a chance node has dice null")
        elif player != turn or dice is None:
            raise fail("at a decision node player equals turn and dice are given")
        return _make(tuple(me), tuple(op), turn, player, dice, False)

    # -- text board ---------------------------------------------------------------------------

    def render(self, state: State) -> str:
        assert isinstance(state, BackgammonState)
        pts = state.points()

        def cell(p: int) -> str:
            v = pts[p - 1]
            return f"{abs(v)}{'X' if v > 0 else 'O'}".rjust(3) if v else "  ."

        top = " ".join(f"{p:>3}" for p in range(13, 25))
        bottom = " ".join(f"{p:>3}" for p in range(12, 0, -1))
        row1 = " ".join(cell(p) for p in range(13, 25))
        row2 = " ".join(cell(p) for p in range(12, 0, -1))
        bar, off = state.bar(), state.off()
        if state.is_terminal():
            r = state.returns()
            winner = WHITE if r[0] > 0 else BLACK
            status = f"{self.seat_names[winner]} wins {abs(r[0]):g}"
        elif state.opening:
            status = "opening roll"
        elif state.player == CHANCE:
            status = f"{self.seat_names[state.mover]} to roll"
        else:
            assert state.dice is not None
            status = f"{self.seat_names[state.mover]} to play {state.dice[0]}-{state.dice[1]}"
        return "\n".join(
            [
                top,
                row1,
                row2,
                bottom,
                f"bar X {bar[0]} O {bar[1]}   off X {off[0]} O {off[1]}   "
                f"(X = white, points numbered from white's side)",
                status,
            ]
        )
