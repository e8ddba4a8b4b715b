"""``minimax``: depth-limited MINIMAX-DECISION, MAX-VALUE and MIN-VALUE, as in the notes.

Notes 001 (Russell & Norvig's figure)::

    function MINIMAX-DECISION(state) returns an action
        return arg max_{a in ACTIONS(s)} MIN-VALUE(RESULT(state, a))
    function MAX-VALUE(state) returns a utility value
        if TERMINAL-TEST(state) then return UTILITY(state)
        v <- -inf
        for each a in ACTIONS(state) do v <- MAX(v, MIN-VALUE(RESULT(s, a)))
        return v

and notes 000/003 cut the search at a fixed depth ("nivel máximo"), returning the heuristic
eval(n) there instead of searching on. MAX is the agent, i.e. the player to move at the root;
values are MAX's utility. Ties at the root are broken at random ("en caso de empate se escoge
al azar"), with the agent's seed.

With a time limit the agent searches depth 1, 2, ... (iterative deepening, notes 003) and answers
with the deepest completed decision, so it always returns in time.

    >>> from ply_arena import games
    >>> from ply_arena.reference_agents.minimax import MinimaxAgent
    >>> g = games.get("tic_tac_toe")
    >>> move, info = MinimaxAgent(g, depth=9, seed=0).choose(g.initial_state())
    >>> info.score, info.depth                   # tic-tac-toe is a draw
    (0.0, 9)
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

#: How often (in nodes) the searches look at the clock; a power of two minus one.
CLOCK_EVERY = 63
#: Depth of a search that has neither a depth option nor a time limit.
DEFAULT_DEPTH = 4


class SearchTimeout(Exception):
    """Raised inside a search when its deadline passes; the caller keeps its last answer."""


def two_player_refusal(game: games.Game) -> str | None:
    """Why a MAX/MIN search does not apply to ``game`` (None when it does).

    Minimax as in the notes needs two players who alternate, zero sum (what MAX gains MIN
    loses) and no dice: "juegos de dos jugadores, suma cero, información perfecta, deterministas".
    """
    if game.num_players != 2:
        return f"it has {game.num_players} players and MAX/MIN search needs exactly two"
    if game.has_chance and not _deterministic_tree(game):
        return "it has chance nodes (dice); MAX/MIN search needs a deterministic game"
    if game.constant_sum is None:
        return "its payoffs are not zero-sum, so MIN's gain is not MAX's loss"
    return None


def _deterministic_tree(game: games.Game) -> bool:
    """An explicit tree (ply_arena.games.tree, the notes' examples) without chance nodes in it: the
    class allows chance, this instance has none."""
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


#: The share of a time limit kept back for returning, and its bounds in seconds.
SEARCH_MARGIN = 0.15
MIN_MARGIN_S = 0.020
MAX_MARGIN_S = 0.050


def search_budget(time_limit: float | None, move_time: float | None) -> float | None:
    """Seconds the search may use: the tighter of the two limits, minus a margin for returning."""
    limits = [t for t in (time_limit, move_time) if t is not None]
    if not limits:
        return None
    t = min(limits)
    # keep 15% (at least 20 ms, at most 50 ms) to unwind the recursion and report: on a busy
    # machine the process can lose the CPU for ten milliseconds and more at any moment (measured
    # on two cores with three other busy processes: up to 9 ms late with a 10 ms margin)
    return max(t * 0.5, t - min(max(t * SEARCH_MARGIN, MIN_MARGIN_S), MAX_MARGIN_S))


def check_limits(name: str, depth: int | None, move_time: float | None) -> None:
    """ValueError unless ``depth`` (plies) is at least 1 and ``move_time`` (seconds) positive."""
    if depth is not None and depth < 1:
        raise ValueError(f"{name} depth must be at least 1, not {depth}")
    if move_time is not None and not move_time > 0:
        raise ValueError(f"{name} move_time must be a positive number of seconds, not {move_time}")


def check_options(name: str, options: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(
            f"{name} does not take {', '.join(sorted(unknown))}; "
            f"options: {', '.join(sorted(allowed))}"
        )


class MinimaxAgent(Agent):
    """Plain minimax to a fixed depth (option ``depth``), evaluation at the cut-off.

    Options: ``depth`` (plies; default 4 without a time limit, unlimited with one),
    ``move_time`` (seconds per move, on top of the caller's limit), ``seed`` (tie-breaking),
    ``evaluate`` (a callable replacing the game's eval(n)).
    """

    name = "minimax"

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
        check_options("minimax", options, set())
        check_limits("minimax", depth, move_time)
        self.depth = depth
        self.move_time = move_time
        self.rng = random.Random(seed) if seed is not None else None
        self.evaluate: Evaluator = evaluate or evaluator_for(game)
        self.nodes = 0
        self._deadline = math.inf
        self._cut = False  # did this iteration stop anywhere at the depth limit?

    @classmethod
    def refusal(cls, game: games.Game) -> str | None:
        return two_player_refusal(game)

    def choose(self, state: State, time_limit: float | None = None) -> tuple[Move, SearchInfo]:
        start = time.monotonic()
        budget = search_budget(time_limit, self.move_time)
        self._deadline = math.inf if budget is None else start + budget
        max_depth = self.depth or (DEFAULT_DEPTH if budget is None else 10**6)
        self.nodes = 0
        actions = list(state.actions())
        if self.rng is not None:  # ties go to a seeded random pick, else to the first
            self.rng.shuffle(actions)
        best: Move = actions[0]
        info = SearchInfo(pv=[best], comment="no depth completed in time")
        for depth in range(1, max_depth + 1):
            try:
                self._cut = False
                value, pv = self.minimax_decision(state, depth, actions)
            except SearchTimeout:
                break
            best = pv[0]
            info = SearchInfo(depth=depth, score=value, pv=pv, comment="")
            if not self._cut:
                break  # the whole game tree was searched: deeper is the same
        info.nodes = self.nodes
        info.time_ms = int((time.monotonic() - start) * 1000)
        return best, info

    def minimax_decision(
        self, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[float, list[Move]]:
        """MINIMAX-DECISION: arg max over a in ACTIONS(s) of MIN-VALUE(RESULT(s, a)).

        Returns MAX's value and the principal variation (the best move first).
        """
        self.nodes += 1  # the root, counted like every other node
        me = state.player
        best_value = -math.inf
        best_pv: list[Move] = []
        for a in actions if actions is not None else state.actions():
            value, pv = self.value(state.result(a), depth - 1, me)
            if value > best_value:
                best_value, best_pv = value, [a, *pv]
        return best_value, best_pv

    def max_value(self, state: State, depth: int, me: int) -> tuple[float, list[Move]]:
        """MAX-VALUE(state): the utility or eval(n) at the cut-off, else the maximum over
        the successors of MIN-VALUE. Also returns the line that reaches that value."""
        self._tick()
        if state.is_terminal():
            return state.utility(me), []
        if depth == 0:
            self._cut = True
            return self.evaluate(state)[me], []
        v = -math.inf
        line: list[Move] = []
        for a in state.actions():
            value, pv = self.value(state.result(a), depth - 1, me)
            if value > v:
                v, line = value, [a, *pv]
        return v, line

    def min_value(self, state: State, depth: int, me: int) -> tuple[float, list[Move]]:
        """MIN-VALUE(state): the minimum over the successors of MAX-VALUE."""
        self._tick()
        if state.is_terminal():
            return state.utility(me), []
        if depth == 0:
            self._cut = True
            return self.evaluate(state)[me], []
        v = math.inf
        line: list[Move] = []
        for a in state.actions():
            value, pv = self.value(state.result(a), depth - 1, me)
            if value < v:
                v, line = value, [a, *pv]
        return v, line

    def value(self, state: State, depth: int, me: int) -> tuple[float, list[Move]]:
        """MAX-VALUE when MAX is to move in ``state``, else MIN-VALUE. The players usually
        alternate, but a game may give the same player two turns in a row (Othello's passes)."""
        if state.player == me:
            return self.max_value(state, depth, me)
        return self.min_value(state, depth, me)

    def _tick(self) -> None:
        self.nodes += 1
        if not self.nodes & CLOCK_EVERY and time.monotonic() > self._deadline:
            raise SearchTimeout
