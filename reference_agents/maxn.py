"""``maxn``: minimax for n players with a vector of utilities, as in the notes (004).

Notes 004, "Algoritmo MiniMax en juegos multijugador": the value of a node is a vector
``(V_A, V_B, V_C)``, one utility per player. At a terminal state it is the utility of every
player; at a node where player ``p`` chooses, it is "the utility vector of whichever successor
has the highest value for the player choosing at n". In the notes' three-player example C, at X,
chooses (1, 2, 6) over (4, 2, 3) because 6 > 3, and X's value becomes (1, 2, 6)::

    >>> from ply_arena.games.tree import TreeGame
    >>> x = TreeGame({"player": 2, "children": [(1, 2, 6), (4, 2, 3)]}, num_players=3)
    >>> move, info = MaxNAgent(x).choose(x.initial_state())
    >>> move, info.score, MaxNAgent(x).vector_value(x.initial_state(), 1)
    (0, 6.0, (1.0, 2.0, 6.0))

Depth-limited like the other searches, with eval(n) giving a vector at the cut-off
(``ply_arena.reference_agents.evaluation``; Chinese checkers: distance to goal).

Shallow pruning (Korf 1991), ``pruning=True`` by default where it is sound: when the payoffs of
all players always add up to a constant S (``game.constant_sum``) and no payoff is below
L (``game.min_utility``), a player p who can already get ``x`` at node n leaves at most
``S - x - (n - 2) L`` to the player q choosing at n's parent. Once that is no more than what q
already has elsewhere, q will not come to n, and n's other successors need not be searched.
The search returns exactly the value (and move) it returns without pruning.

``paranoid=True`` is the other classic reduction: assume every other player plays to minimise
my utility. The n-player game becomes MAX against a coalition of MINs, and alpha-beta applies in
full (deeper searches, but a pessimistic model of the opponents).
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

#: How often (in nodes) the search looks at the clock; a power of two minus one.
CLOCK_EVERY = 63
#: Plies searched with neither a depth option nor a time limit: one move of every player in a
#: three-player game.
DEFAULT_DEPTH = 3

Vector = tuple[float, ...]
Line = list[Move]


def deterministic_refusal(game: games.Game) -> str | None:
    """Why a search without RAND nodes does not apply to ``game`` (None when it does)."""
    if game.has_chance and not _no_chance_in_tree(game):
        return "it has chance nodes (dice); max^n searches deterministic games"
    return None


def _no_chance_in_tree(game: games.Game) -> bool:
    """An explicit tree (the notes' examples) may declare chance and have none."""
    from ply_arena.games.tree import TreeGame

    if not isinstance(game, TreeGame):
        return False
    stack = [game.tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "chance" in node:
                return False
            stack.extend(node["children"])
    return True


class MaxNAgent(SearchAgent):
    """Max^n (vector minimax) or paranoid search, depth-limited or under a time limit.

    Options: ``depth`` (plies; default 3 without a time limit, unlimited with one),
    ``move_time`` (seconds per move), ``pruning`` (shallow pruning for max^n, alpha-beta for
    paranoid; default true), ``paranoid`` (default false), ``seed`` (tie-breaking),
    ``evaluate`` (replaces the game's eval(n)).
    """

    name = "maxn"

    def __init__(
        self,
        game: games.Game,
        *,
        depth: int | None = None,
        move_time: float | None = None,
        pruning: bool = True,
        paranoid: bool = False,
        seed: int | None = None,
        evaluate: Evaluator | None = None,
        **options: Any,
    ) -> None:
        super().__init__(game)
        check_options("maxn", options, set())
        check_limits("maxn", depth, move_time)
        self.depth = depth
        self.move_time = move_time
        self.paranoid = paranoid
        self.rng = random.Random(seed) if seed is not None else None
        self.evaluate: Evaluator = evaluate or evaluator_for(game)
        self.n = game.num_players
        # Shallow pruning needs a constant sum; the bound: what p's value x leaves to anyone else
        # is at most self._leave - x.
        self.shallow = pruning and game.constant_sum is not None and not paranoid
        self._leave = (
            float(game.constant_sum) - (self.n - 2) * float(game.min_utility)
            if game.constant_sum is not None
            else math.inf
        )
        self.alphabeta = pruning and paranoid
        self.nodes = 0
        self._deadline = math.inf
        self._cut = False

    @classmethod
    def refusal(cls, game: games.Game) -> str | None:
        return deterministic_refusal(game)

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
        if len(actions) == 1:
            info.comment = "only move"
            max_depth = 1
        me = state.player
        for depth in range(1, max_depth + 1):
            try:
                self._cut = False
                if self.paranoid:
                    score, pv = self.paranoid_decision(state, depth, actions)
                else:
                    vector, pv = self.maxn_decision(state, depth, actions)
                    score = vector[me]
            except SearchTimeout:
                break
            best = pv[0]
            actions.remove(best)
            actions.insert(0, best)  # the previous iteration's best move first
            info = SearchInfo(depth=depth, score=score, pv=pv)
            if not self._cut:
                break
        info.nodes = self.nodes
        info.time_ms = int((time.monotonic() - start) * 1000)
        return best, info

    # -- max^n --------------------------------------------------------------------------------

    def vector_value(self, state: State, depth: int) -> Vector:
        """The backed-up utility vector of ``state`` searched to ``depth`` plies."""
        self._deadline = math.inf
        return self.maxn_value(state, depth, -math.inf)[0]

    def maxn_decision(
        self, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[Vector, Line]:
        """The root: the successor whose vector is best for the player to move."""
        self.nodes += 1
        p = state.player
        best: Vector | None = None
        best_line: Line = []
        for a in actions if actions is not None else state.actions():
            vector, line = self.maxn_value(
                state.result(a), depth - 1, best[p] if best is not None else -math.inf
            )
            if best is None or vector[p] > best[p]:
                best, best_line = vector, [a, *line]
        assert best is not None
        return best, best_line

    def maxn_value(self, state: State, depth: int, parent_best: float) -> tuple[Vector, Line]:
        """The vector value of a node: the successor's vector with the highest value for the
        player choosing here.

        ``parent_best`` is what the player choosing at the parent already has elsewhere; shallow
        pruning stops here as soon as this node cannot offer that player more.
        """
        self.nodes += 1
        if not self.nodes & CLOCK_EVERY and time.monotonic() > self._deadline:
            raise SearchTimeout
        if state.is_terminal():
            return state.returns(), []
        if depth <= 0:
            self._cut = True
            return self.evaluate(state), []
        p = state.player
        best: Vector | None = None
        best_line: Line = []
        # what p needs here to leave the parent's player no more than it already has
        enough = self._leave - parent_best if self.shallow else math.inf
        for a in state.actions():
            vector, line = self.maxn_value(
                state.result(a), depth - 1, best[p] if best is not None else -math.inf
            )
            if best is None or vector[p] > best[p]:
                best, best_line = vector, [a, *line]
                if best[p] >= enough:
                    break  # shallow cut-off: the parent's player will choose elsewhere
        assert best is not None
        return best, best_line

    # -- paranoid -----------------------------------------------------------------------------

    def paranoid_decision(
        self, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[float, Line]:
        """The root of the paranoid search: MAX (me) against everybody else as MIN."""
        self.nodes += 1
        me = state.player
        alpha = -math.inf
        best_value = -math.inf
        best_line: Line = []
        for a in actions if actions is not None else state.actions():
            value, line = self.paranoid_value(state.result(a), depth - 1, me, alpha, math.inf)
            if value > best_value:
                best_value, best_line = value, [a, *line]
                if self.alphabeta:
                    alpha = value
        return best_value, best_line

    def paranoid_value(
        self, state: State, depth: int, me: int, alpha: float, beta: float
    ) -> tuple[float, Line]:
        """MAX-VALUE where I move, MIN-VALUE where anyone else does (fail-soft alpha-beta)."""
        self.nodes += 1
        if not self.nodes & CLOCK_EVERY and time.monotonic() > self._deadline:
            raise SearchTimeout
        if state.is_terminal():
            return state.utility(me), []
        if depth <= 0:
            self._cut = True
            return self.evaluate(state)[me], []
        maximise = state.player == me
        v = -math.inf if maximise else math.inf
        best_line: Line = []
        for a in state.actions():
            value, line = self.paranoid_value(state.result(a), depth - 1, me, alpha, beta)
            if (value > v) if maximise else (value < v):
                v, best_line = value, [a, *line]
                if self.alphabeta:
                    if maximise:
                        if v >= beta:
                            break
                        alpha = max(alpha, v)
                    else:
                        if v <= alpha:
                            break
                        beta = min(beta, v)
        return v, best_line
