"""``expectiminimax``: minimax with RAND nodes for games of chance, as in the notes.

Notes 000, "Juegos de azar": a random process (the dice) is an extra agent, so the game tree has
MAX nodes, MIN nodes and RAND nodes, and::

    expectiminimax(n) = utilidad(n)                            if n is terminal
                        max { expectiminimax(s) : s in sucesores(n) }   at a MAX node
                        min { expectiminimax(s) : s in sucesores(n) }   at a MIN node
                        sum over s of p(s) * expectiminimax(s)          at a RAND node

Depth-limited as the rest of the course's searches: the depth counts MAX and MIN plies (a RAND
node does not use up depth) and eval(n) answers at the cut-off. The notes add two warnings that
shape this module:

- "IMPORTANTE": eval(n) must be a positive linear transformation of the *expected* utility,
  because RAND nodes average it (see ``ply_arena.reference_agents.evaluation.backgammon``);
- "Los nodos de RAND también pueden ser podados": with ``pruning=True`` (the default) MAX and MIN
  nodes prune as alpha-beta does, and RAND nodes prune as Ballard's Star1 does. Every value lies
  in the game's utility range [L, U] (``game.min_utility``, ``game.max_utility``; evaluations stay
  strictly inside), so after some outcomes of a RAND node have been searched its value is known to
  lie between ``sum so far + p(rest) * L`` and ``sum so far + p(rest) * U``; once that interval is
  outside [alpha, beta] the other outcomes cannot matter. The bounds also give every outcome its
  own alpha-beta window. ``pruning=False`` is the formula above, node for node.

Values are those of MAX, the player to move at the root. Two players, zero sum; dice optional
(in a deterministic game this is alpha-beta with an evaluation).

    >>> from ply_arena.games.tree import TreeGame
    >>> coin = TreeGame({"player": 0, "children": [
    ...     {"chance": [(0.5, 1.0), (0.5, -1.0)]},      # a fair coin: worth 0
    ...     {"chance": [(0.9, 0.5), (0.1, -0.5)]}]})    # worth 0.4
    >>> move, info = ExpectiminimaxAgent(coin).choose(coin.initial_state())
    >>> move, round(info.score, 6)
    (1, 0.4)
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import SearchAgent, SearchInfo
from ply_arena.reference_agents.evaluation import Evaluator, evaluator_for
from ply_arena.reference_agents.minimax import (
    SearchTimeout,
    check_limits,
    check_options,
    search_budget,
)

#: How often (in nodes) the search looks at the clock; a power of two minus one. Often: a
#: backgammon node can cost a move generation of hundreds of plays.
CLOCK_EVERY = 15
#: Plies searched with neither a depth option nor a time limit (backgammon: my play, every roll,
#: every reply: about 10^4 nodes).
DEFAULT_DEPTH = 2

Line = list[Move]


def two_player_zero_sum_refusal(game: games.Game) -> str | None:
    """Why expectiminimax does not apply (None when it does): MAX against MIN, zero sum."""
    if game.num_players != 2:
        return (
            f"it has {game.num_players} players and expectiminimax is MAX against MIN "
            "(use maxn for n players)"
        )
    if game.constant_sum is None:
        return "its payoffs are not zero-sum, so MIN's gain is not MAX's loss"
    return None


class ExpectiminimaxAgent(SearchAgent):
    """Expectiminimax to a fixed depth or by iterative deepening under a time limit.

    Options: ``depth`` (MAX/MIN plies; default 2 without a time limit, unlimited with one),
    ``move_time`` (seconds per move), ``pruning`` (alpha-beta and Star1, default true),
    ``seed`` (tie-breaking among equal moves), ``evaluate`` (replaces the game's eval(n)).
    """

    name = "expectiminimax"

    def __init__(
        self,
        game: games.Game,
        *,
        depth: int | None = None,
        move_time: float | None = None,
        pruning: bool = True,
        seed: int | None = None,
        evaluate: Evaluator | None = None,
        **options: Any,
    ) -> None:
        super().__init__(game)
        check_options("expectiminimax", options, set())
        check_limits("expectiminimax", depth, move_time)
        self.depth = depth
        self.move_time = move_time
        self.pruning = pruning
        self.rng = random.Random(seed) if seed is not None else None
        self.evaluate: Evaluator = evaluate or evaluator_for(game)
        self.lo = float(game.min_utility)
        self.hi = float(game.max_utility)
        self.nodes = 0
        self._deadline = math.inf
        self._cut = False

    @classmethod
    def refusal(cls, game: games.Game) -> str | None:
        return two_player_zero_sum_refusal(game)

    def search(self, state: State, time_limit: float | None) -> tuple[Move, SearchInfo]:
        start = time.monotonic()
        budget = search_budget(time_limit, self.move_time)
        self._deadline = math.inf if budget is None else start + budget
        max_depth = self.depth or (DEFAULT_DEPTH if budget is None else 10**6)
        self.nodes = 0
        actions = list(state.actions())
        if self.rng is not None:
            self.rng.shuffle(actions)
        best: Move = actions[0]
        info = SearchInfo(pv=[best], comment="no depth completed in time")
        if len(actions) == 1:  # a forced play (backgammon is full of them): nothing to weigh
            info.comment = "only move"
            max_depth = 1
        for depth in range(1, max_depth + 1):
            try:
                self._cut = False
                value, pv = self.expectiminimax_decision(state, depth, actions)
            except SearchTimeout:
                break
            best = pv[0]
            # the best move first next time: it tightens alpha at once
            actions.remove(best)
            actions.insert(0, best)
            info = SearchInfo(depth=depth, score=value, pv=pv)
            if not self._cut:
                break  # the whole tree below was searched: deeper gives the same answer
        info.nodes = self.nodes
        info.time_ms = int((time.monotonic() - start) * 1000)
        return best, info

    def expectiminimax_decision(
        self, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[float, Line]:
        """The root MAX node: arg max over the moves of the value of their results.

        Returns MAX's value and the principal variation (up to the next roll of the dice).
        """
        self.nodes += 1
        me = state.player
        alpha = -math.inf
        best_value = -math.inf
        best_pv: Line = []
        for a in actions if actions is not None else state.actions():
            # a child that cannot beat alpha fails low and is not chosen (strictly greater)
            value, pv = self.value(state.result(a), depth - 1, me, alpha, math.inf)
            if value > best_value:
                best_value, best_pv = value, [a, *pv]
                if self.pruning:
                    alpha = value
        return best_value, best_pv

    def value(
        self, state: State, depth: int, me: int, alpha: float, beta: float
    ) -> tuple[float, Line]:
        """expectiminimax(n): the case analysis of the notes, with the cut-off test first."""
        self.nodes += 1
        if not self.nodes & CLOCK_EVERY and time.monotonic() > self._deadline:
            raise SearchTimeout
        if state.is_terminal():
            return state.utility(me), []
        if depth <= 0:
            # also before a roll: eval(n) estimates the expected value over the dice itself
            self._cut = True
            return self.evaluate(state)[me], []
        if state.player == games.CHANCE:
            return self.rand_value(state, depth, me, alpha, beta)
        if state.player == me:
            return self.max_value(state, depth, me, alpha, beta)
        return self.min_value(state, depth, me, alpha, beta)

    def max_value(
        self, state: State, depth: int, me: int, alpha: float, beta: float
    ) -> tuple[float, Line]:
        """A MAX node: the largest value of the successors (fail-soft alpha-beta cut at beta)."""
        v = -math.inf
        line: Line = []
        for a in state.actions():
            value, pv = self.value(state.result(a), depth - 1, me, alpha, beta)
            if value > v:
                v, line = value, [a, *pv]
                if self.pruning:
                    if v >= beta:
                        return v, line  # MIN above already has something better
                    alpha = max(alpha, v)
        return v, line

    def min_value(
        self, state: State, depth: int, me: int, alpha: float, beta: float
    ) -> tuple[float, Line]:
        """A MIN node: the smallest value of the successors (cut at alpha)."""
        v = math.inf
        line: Line = []
        for a in state.actions():
            value, pv = self.value(state.result(a), depth - 1, me, alpha, beta)
            if value < v:
                v, line = value, [a, *pv]
                if self.pruning:
                    if v <= alpha:
                        return v, line
                    beta = min(beta, v)
        return v, line

    def rand_value(
        self, state: State, depth: int, me: int, alpha: float, beta: float
    ) -> tuple[float, Line]:
        """A RAND node: sum of p(s) * expectiminimax(s), with Star1 pruning when enabled.

        The principal variation stops here: the line beyond a roll depends on the roll.
        """
        outcomes = state.chance_outcomes()
        if not self.pruning:
            total = 0.0
            for outcome, p in outcomes:
                total += p * self.value(state.result(outcome), depth, me, alpha, beta)[0]
            return total, []
        lo, hi = self.lo, self.hi
        total = 0.0  # sum of p(s) * value(s) over the outcomes searched so far
        rest = 1.0  # probability of the outcomes not searched yet
        for outcome, p in outcomes:
            rest -= p
            if rest < 1e-12:
                rest = 0.0  # rounding: the last outcome leaves nothing unknown
            # This outcome's values that would put the whole node outside [alpha, beta] even if
            # every remaining outcome were as good (U) or as bad (L) as possible:
            child_alpha = (alpha - total - rest * hi) / p
            child_beta = (beta - total - rest * lo) / p
            v, _ = self.value(
                state.result(outcome), depth, me, max(child_alpha, lo), min(child_beta, hi)
            )
            total += p * v
            if v <= child_alpha:
                return total + rest * hi, []  # an upper bound, already <= alpha
            if v >= child_beta:
                return total + rest * lo, []  # a lower bound, already >= beta
        return total, []
