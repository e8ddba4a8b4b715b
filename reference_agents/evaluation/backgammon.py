"""Backgammon evaluation: pip count, blots and made points, as an estimate of the expected payoff.

The notes (000, "Juegos de azar") warn that expectiminimax only works when eval(n) is a *positive
linear transformation of the expected utility* of n: at a RAND node the values of the children are
averaged, so an evaluation that merely orders positions (as minimax would accept) can change the
decision. So this evaluation is not a score but an estimate of the expected payoff itself, in the
game's own units (a single game is worth 1):

    P(white wins) ~ logistic(x),  x = weighted features;   E[payoff of white] ~ 2 P - 1

with the features of every beginner's backgammon program:

- pip count: the race. A lead of ``d`` pips matters more when few pips are left, so the lead is
  divided by a term that grows with the pips still to go; the side on roll is credited half an
  average roll (it moves first);
- blots: a single checker can be hit and sent back 25 pips - but only while the opponent still
  has checkers behind it, so blots are counted only while contact remains;
- made points: two or more checkers on a point block the opponent.

The value lies in (-1, 1), strictly inside the utility range [-3, 3], so a real win (or a gammon)
always counts for more than any estimate.

    >>> from ply_arena import games
    >>> s = games.get("backgammon").initial_state()
    >>> evaluate(s)                      # the start: symmetric, nobody on roll yet
    (0.0, 0.0)
"""

from __future__ import annotations

import math

from ply_arena.games import State
from ply_arena.games.backgammon import BackgammonState

#: Half the mean pips of a roll (8.17): what being on roll is worth in the race.
ON_ROLL = 4.0
#: Pip lead per unit of x, per pip still to go (a 10-pip lead at 150 pips each: x ~ 0.55).
RACE_SCALE = 0.05
RACE_BASE = 3.0
BLOT = 0.12
MADE_POINT = 0.06


def _features(me: tuple[int, ...], op: tuple[int, ...]) -> tuple[int, int, int]:
    """(pips, blots, made points) of ``me``; blots only count while ``op`` can still hit them.

    Both boards are in their owner's numbering: my point ``p`` is the opponent's ``25 - p``. The
    opponent moves up my numbering, so its rearmost checker (its highest point ``back``, at my
    ``25 - back``) can still reach any of my blots above ``25 - back``.
    """
    pips = 0
    blots = 0
    made = 0
    back = 0  # the opponent's rearmost checker, in its numbering
    for q in range(25, 0, -1):
        if op[q]:
            back = q
            break
    contact_below = 25 - back  # my checkers above this point can still be hit
    for p in range(1, 26):
        n = me[p]
        if n:
            pips += p * n
            if p < 25:
                if n == 1:
                    if p > contact_below:
                        blots += 1
                else:
                    made += 1
    return pips, blots, made


def white_expectation(state: BackgammonState) -> float:
    """E[white's payoff] as estimated here, in (-1, 1)."""
    mover = state.mover
    mp, mb, mm = _features(state.me, state.op)
    op_, ob, om = _features(state.op, state.me)
    # on roll: the mover at a chance node rolls next; at a decision node it holds the dice
    lead = op_ - mp + (0.0 if state.opening else ON_ROLL)  # the mover's pip lead
    x = lead / (RACE_BASE + RACE_SCALE * (mp + op_))
    x += BLOT * (ob - mb) + MADE_POINT * (mm - om)
    v = math.tanh(x / 2)  # = 2 * logistic(x) - 1
    return v if mover == 0 else -v


def evaluate(state: State) -> tuple[float, float]:
    """(white's, black's) estimated expected payoff; the negation of each other (zero sum)."""
    assert isinstance(state, BackgammonState)
    v = white_expectation(state)
    return (v + 0.0, -v + 0.0)
