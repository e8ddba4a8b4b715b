"""``negamax``: the compact form of alpha-beta from notes 003 ("Negamax").

"Minimizar una cantidad de valores es equivalente a maximizar sus negativos":
MIN(3, 5, 7, 8) = -MAX(-3, -5, -7, -8). So one function serves both players: every node is scored
for the player to move there, and at each level the search changes "el signo" and "el rol de alfa
y beta"::

    NEGAMAX(nodo, nivel, alfa, beta) devuelve (valor, nodo_resultado)
        si final(nodo) devuelve utilidad; si nivel = nivel máximo devuelve h(nodo)
        mientras quedan hijos(nodo) y alfa < beta:
            val := -NEGAMAX(F, nivel + 1, -beta, -alfa)
            si val > alfa: alfa := val
        devuelve alfa

(The slide writes the recursive window as ``-alfa, -beta``; swapping them, ``-beta, -alfa``, is what
"cambiar el rol de alfa y beta" means and what makes the window of the child the negated one.)

This is the fail-hard form of the slide. Like ``minimax`` it deepens iteratively under a time
limit, trying the previous iteration's best move first at the root; it has no transposition table
or killer moves, so it stays the slide's algorithm.

    >>> from ply_arena import games
    >>> g = games.get("tic_tac_toe")
    >>> move, info = NegamaxAgent(g, depth=9, seed=0).choose(g.initial_state())
    >>> info.score
    0.0
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import Agent, SearchInfo
from ply_arena.reference_agents.evaluation import Evaluator, evaluator_for
from ply_arena.reference_agents.minimax import (
    CLOCK_EVERY,
    DEFAULT_DEPTH,
    SearchTimeout,
    check_limits,
    check_options,
    search_budget,
    two_player_refusal,
)


class NegamaxAgent(Agent):
    """Negamax alpha-beta with iterative deepening.

    Options: ``depth`` (plies; default 4 without a time limit, unlimited with one),
    ``move_time`` (seconds per move), ``seed`` (tie-breaking), ``evaluate`` (a callable
    replacing the game's eval(n)).
    """

    name = "negamax"

    def __init__(
        self,
        game: games.Game,
        *,
        depth: int | None = None,
        move_time: float | None = None,
        seed: int | None = None,
        evaluate: Evaluator | None = None,
        **options: Any,
    ) -> None:
        super().__init__(game)
        check_options("negamax", options, set())
        check_limits("negamax", depth, move_time)
        self.depth = depth
        self.move_time = move_time
        self.rng = random.Random(seed) if seed is not None else None
        self.evaluate: Evaluator = evaluate or evaluator_for(game)
        self.nodes = 0
        self._deadline = math.inf
        self._next_check = 0
        self._cut = False

    @classmethod
    def refusal(cls, game: games.Game) -> str | None:
        return two_player_refusal(game)

    def choose(self, state: State, time_limit: float | None = None) -> tuple[Move, SearchInfo]:
        start = time.monotonic()
        budget = search_budget(time_limit, self.move_time)
        self._deadline = math.inf if budget is None else start + budget
        self._next_check = 0  # node count at which to look at the clock next
        max_depth = self.depth or (DEFAULT_DEPTH if budget is None else 10**6)
        self.nodes = 0
        moves = list(state.actions())
        if self.rng is not None:  # ties go to a seeded random pick, else to the first
            self.rng.shuffle(moves)
        best: Move = moves[0]
        info = SearchInfo(pv=[best], comment="no depth completed in time")
        for depth in range(1, max_depth + 1):
            self._cut = False
            try:
                value, pv = self.negamax_root(state, depth, moves)
            except SearchTimeout:
                break
            best = pv[0]
            moves.remove(best)
            moves.insert(0, best)  # the previous iteration's best move first
            info = SearchInfo(depth=depth, score=value, pv=pv)
            if not self._cut or abs(value) >= self.game.max_utility:
                break
        info.nodes = self.nodes
        info.time_ms = int((time.monotonic() - start) * 1000)
        return best, info

    def negamax_root(self, state: State, depth: int, moves: list[Move]) -> tuple[float, list[Move]]:
        """The root call NEGAMAX(s, depth, -inf, +inf), also returning the chosen line."""
        self.nodes += 1
        seat = state.player
        alpha = -math.inf
        best_pv: list[Move] = [moves[0]]
        for a in moves:
            val, pv = self._child(state.result(a), depth - 1, alpha, math.inf, seat)
            if val > alpha:
                alpha, best_pv = val, [a, *pv]
        return alpha, best_pv

    def negamax(
        self, state: State, depth: int, alpha: float, beta: float
    ) -> tuple[float, list[Move]]:
        """NEGAMAX(node, depth, alpha, beta) for a non-terminal ``state``: its value for the
        player to move (fail-hard: within [alpha, beta]) and the line that reaches it."""
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._next_check = self.nodes + CLOCK_EVERY + 1
            if time.monotonic() > self._deadline:
                raise SearchTimeout
        seat = state.player
        if depth == 0:
            self._cut = True
            return self.evaluate(state)[seat], []
        line: list[Move] = []
        for a in state.actions():
            val, pv = self._child(state.result(a), depth - 1, alpha, beta, seat)
            if val > alpha:
                alpha, line = val, [a, *pv]
                if alpha >= beta:
                    break  # the opponent will never allow this node: prune its other children
        return alpha, line

    def _child(
        self, child: State, depth: int, alpha: float, beta: float, seat: int
    ) -> tuple[float, list[Move]]:
        """A child's value for ``seat``: negated, with the window swapped, when the turn passes
        to the opponent (a game whose player sometimes moves twice needs no negation then)."""
        if child.is_terminal():
            self.nodes += 1
            return child.utility(seat), []
        if child.player == seat:
            return self.negamax(child, depth, alpha, beta)
        val, pv = self.negamax(child, depth, -beta, -alpha)
        return -val, pv
