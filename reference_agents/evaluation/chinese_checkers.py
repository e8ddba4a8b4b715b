"""Chinese checkers evaluation: distance to goal, as a value vector for max^n.

Each seat's ``distance_to_goal`` (the steps its pieces still have to travel, 0 when its target is
full) is what decides the game: the winner fills its target first, and a game cut off by the ply
cap is ranked by it. The payoffs are ranks (+1 first, 0 second, -1 last), which is one half of
(seats I finish ahead of) - (seats ahead of me). The evaluation estimates exactly that, with each
pairwise comparison softened by how large the lead is::

    v_i = CERTAINTY / 2 * sum over j != i of tanh((d_j - d_i) / SPREAD)

so a seat that is far ahead of both others tends to +CERTAINTY, far behind both to -CERTAINTY,
and one ahead of one and behind the other to 0, like the rank payoffs. CERTAINTY < 1 keeps a
real win clearly above any estimate: a seat one step from its goal must still prefer taking the
step (and its opponents must see that it will).

Two properties the searches rely on:

- the values add up to 0, the game's ``constant_sum`` (each pair contributes +t and -t), so max^n
  shallow pruning (which reasons "what I take, the others cannot have") stays correct at the
  cut-off;
- every ``|v_i|`` is below CERTAINTY (two terms, each below CERTAINTY/2): strictly inside the
  utility range [-1, 1], so a real win always counts for more than an estimate.

    >>> from ply_arena import games
    >>> evaluate(games.get("chinese_checkers").initial_state())
    (0.0, 0.0, 0.0)
"""

from __future__ import annotations

import math

from ply_arena.games import State
from ply_arena.games.chinese_checkers import ChineseCheckersState, distance_to_goal

#: A lead of this many steps makes one seat's edge over another about 3/4 sure (tanh 1 = 0.76).
SPREAD = 20.0
#: The most an estimate is worth, next to 1 for a real win.
CERTAINTY = 0.75
_HALF = CERTAINTY / 2

_tanh = math.tanh


def evaluate(state: State) -> tuple[float, ...]:
    """Per-seat values in (-1, 1) that sum to 0: shorter distance to goal is better."""
    assert isinstance(state, ChineseCheckersState)
    d0, d1, d2 = distance_to_goal(state)
    t01 = _tanh((d1 - d0) / SPREAD) * _HALF  # seat 0's edge over seat 1
    t02 = _tanh((d2 - d0) / SPREAD) * _HALF
    t12 = _tanh((d2 - d1) / SPREAD) * _HALF
    return (t01 + t02 + 0.0, t12 - t01 + 0.0, -t02 - t12 + 0.0)
