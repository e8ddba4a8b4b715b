"""``alphabeta``: ALPHA-BETA-SEARCH, iterative deepening, move ordering, a transposition table.

The search is the one of the notes (001 and 004, Figure 6.7)::

    function ALPHA-BETA-SEARCH(state) returns an action
        v <- MAX-VALUE(state, -inf, +inf)
        return the action in ACTIONS(state) with value v
    function MAX-VALUE(state, alpha, beta) returns a utility value
        if TERMINAL-TEST(state) then return UTILITY(state)
        v <- -inf
        for each a in ACTIONS(state) do
            v <- MAX(v, MIN-VALUE(RESULT(s, a), alpha, beta))
            if v >= beta then return v
            alpha <- MAX(alpha, v)
        return v

(MIN-VALUE is the mirror image), cut at a depth limit with eval(n) as in notes 000 and 003, and
with the improvements the notes name:

- iterative deepening (notes 003, "Iterative Deepening"): search depth 1, 2, 3, ... until the time
  runs out, and answer with the deepest completed search; a search cut by the clock is discarded,
  except for root moves it finished that beat the previous answer;
- move ordering (notes 000/001, "orden de examinación"): the previous iteration's best move first
  (it sits in the transposition table), then the two killer moves of the ply (moves that caused a
  cut-off in a sibling), then the rest by the history heuristic (cut-offs caused, weighted by
  depth squared);
- a transposition table (notes 001, "tablas de transposición ... similar a Explored Set"): each
  state searched remembers its value with the depth it was searched to and whether that value is
  exact, a lower bound (it caused a cut-off at a MAX node, v >= beta) or an upper bound (every move
  failed low, v <= alpha).

Values are MAX's (the player to move at the root), as in the notes; ``info.score`` is that value.
An entry is only reused for a search at least as deep, so with a fixed depth the value equals
minimax's at that depth.

For Connect Four (unless ``solver=false`` or a fixed ``depth`` is asked for) the agent first tries
to solve the position outright with ``ply_arena.reference_agents.connect_four_solver`` (the same
alpha-beta in negamax form, specialised to bitboards), within half of its time: the exact score once
at most 30 cells are empty, earlier (at most 36 empty) only win/draw/loss (a weak solve). A proven
win is played at once; a proven draw leaves the generic search only the drawing moves; a proven loss
is solved exactly, if time allows, for the longest loss. The solver and
its transposition table are kept across the moves of a game (the same agent object), so what a
timed-out attempt learnt helps the next one; if solving fails the generic search runs in the rest.

    >>> from ply_arena import games
    >>> g = games.get("tic_tac_toe")
    >>> agent = AlphaBetaAgent(g, seed=0)
    >>> move, info = agent.choose(g.initial_state(), time_limit=2.0)
    >>> info.score, info.depth
    (0.0, 9)
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import SearchAgent, SearchInfo
from ply_arena.reference_agents.evaluation import Evaluator, evaluator_for
from ply_arena.reference_agents.minimax import (
    CLOCK_EVERY,
    SearchTimeout,
    check_limits,
    check_options,
    search_budget,
    two_player_refusal,
)

#: Depth of a search that has neither a depth option nor a time limit.
DEFAULT_DEPTH = 6
#: Connect Four positions with at most this many empty cells are handed to the solver first.
SOLVER_EMPTY_CELLS = 30
#: Earlier positions with at most this many empty cells get a weak solve (win/draw/loss)
#: within WEAK_SOLVE_SHARE of the move's time before the depth-limited search.
WEAK_SOLVE_EMPTY_CELLS = 36
WEAK_SOLVE_SHARE = 0.5
#: A position the weak solve found lost gets an exact solve until this share of the time.
LOST_SOLVE_SHARE = 0.75
#: The Connect Four solver's table is started afresh beyond this many entries (memory).
SOLVER_TABLE_SIZE = 3_000_000
#: Transposition table entry flags.
EXACT, LOWER, UPPER = 0, 1, 2
#: Entry: (depth searched, flag, value, best move or None, whether the depth limit cut the
#: subtree: an uncut subtree's value is the game-theoretic one and holds at any depth).
Entry = tuple[int, int, float, Move, bool]


class AlphaBetaAgent(SearchAgent):
    """Alpha-beta with iterative deepening under a deadline.

    Options: ``depth`` (maximum plies; default: until the time runs out, or 6 with no time limit),
    ``move_time`` (seconds per move, on top of the caller's limit), ``seed`` (order of equally
    good root moves), ``order`` (move ordering, default true), ``tt`` (transposition table,
    default true), ``solver`` (Connect Four solver, default true), ``evaluate`` (a callable
    replacing the game's eval(n)).
    """

    name = "alphabeta"

    def __init__(
        self,
        game: games.Game,
        *,
        depth: int | None = None,
        move_time: float | None = None,
        seed: int | None = None,
        order: bool = True,
        tt: bool = True,
        solver: bool = True,
        evaluate: Evaluator | None = None,
        **options: Any,
    ) -> None:
        super().__init__(game)
        check_options("alphabeta", options, set())
        check_limits("alphabeta", depth, move_time)
        self.depth = depth
        self.move_time = move_time
        self.seed = seed
        self.rng = random.Random(seed) if seed is not None else None
        self.order = order
        self.use_tt = tt
        self.use_solver = solver and game.name == "connect_four"
        self.evaluate: Evaluator = evaluate or evaluator_for(game)
        self.nodes = 0
        self.table: dict[State, Entry] = {}
        self.killers: list[list[Move]] = []
        self.history: defaultdict[Move, int] = defaultdict(int)
        self._deadline = math.inf
        self._next_check = 0  # node count at which to look at the clock next
        self._cut = False
        self._me = 0
        self._solver: Any = None

    @classmethod
    def refusal(cls, game: games.Game) -> str | None:
        return two_player_refusal(game)

    # -- the decision ---------------------------------------------------------------------------

    def search(self, state: State, time_limit: float | None) -> tuple[Move, SearchInfo]:
        start = time.monotonic()
        budget = search_budget(time_limit, self.move_time)
        deadline = math.inf if budget is None else start + budget
        self.nodes = 0
        root_moves: list[Move] | None = None
        comment = ""
        if self.use_solver and self.depth is None:
            empty = 42 - state.moves  # type: ignore[attr-defined]
            if empty <= SOLVER_EMPTY_CELLS:
                # half the time for an exact answer; without a limit, a second
                solved = self._solve_connect_four(state, start + (budget / 2 if budget else 1.0))
                if solved is not None:
                    move, info = solved
                    info.time_ms = int((time.monotonic() - start) * 1000)
                    return move, info
            elif empty <= WEAK_SOLVE_EMPTY_CELLS:
                # earlier, a proven win/draw/loss (weak solve) in a slice of the time: decisive
                # when it succeeds, and what it stored stays in the solver's table for the
                # next moves, so later attempts start further ahead
                slice_end = start + (budget * WEAK_SOLVE_SHARE if budget else 1.0)
                weak = self._weak_solve_connect_four(state, slice_end)
                if weak is not None:
                    sign, moves = weak
                    if sign > 0 or (sign == 0 and len(moves) == 1):
                        outcome = "win" if sign > 0 else "draw, the only drawing move"
                        info = SearchInfo(
                            depth=empty,
                            nodes=self.nodes,
                            score=sign * self.game.max_utility,
                            pv=moves[:1],
                            comment=f"solved: {outcome} (weak solve)",
                        )
                        info.time_ms = int((time.monotonic() - start) * 1000)
                        return moves[0], info
                    if sign == 0:
                        # only the moves that keep the draw; the evaluation picks among them
                        root_moves = moves
                        comment = "solved: draw (weak solve); the search chose among draws"
                    else:
                        # lost with best play: the longest loss (the exact score) leaves the
                        # opponent the most chances to go wrong, if it can be found in time
                        lost_end = start + (budget * LOST_SOLVE_SHARE if budget else 2.0)
                        solved = self._solve_connect_four(state, lost_end)
                        if solved is not None:
                            move, info = solved
                            info.time_ms = int((time.monotonic() - start) * 1000)
                            return move, info
                        comment = "solved: loss (weak solve); the search chose the move"
        move, info = self.iterative_deepening(state, deadline, root_moves)
        if comment:
            info.comment = comment
        info.nodes = self.nodes
        info.time_ms = int((time.monotonic() - start) * 1000)
        return move, info

    def iterative_deepening(
        self, state: State, deadline: float, moves: list[Move] | None = None
    ) -> tuple[Move, SearchInfo]:
        """Search depth 1, 2, ... until ``deadline``; the deepest completed answer wins.

        ``moves``: the root moves to consider (default: all legal moves).
        """
        self._deadline = deadline
        self._next_check = 0
        self._me = state.player
        self.table = {}
        self.history = defaultdict(int)
        self.killers = []
        max_depth = self.depth or (DEFAULT_DEPTH if deadline == math.inf else 10**6)
        root_moves = list(state.actions()) if moves is None else list(moves)
        if self.rng is not None:  # ties go to a seeded random pick, else to the first
            self.rng.shuffle(root_moves)
        best: Move = root_moves[0]
        info = SearchInfo(pv=[best], comment="no depth completed in time")
        for depth in range(1, max_depth + 1):
            self._cut = False
            partial: list[tuple[float, Move]] = []
            try:
                value, move = self.alpha_beta_search(state, depth, root_moves, partial)
            except SearchTimeout:
                # keep a move of the unfinished iteration only if it was searched completely
                # after the previous best (searched first) and scored better
                if len(partial) > 1 and info.score is not None:
                    v, m = max(partial, key=lambda vm: vm[0])
                    if v > partial[0][0] and m != best:
                        best = m
                        info = SearchInfo(
                            depth=depth - 1,
                            score=info.score,
                            pv=[m],
                            comment=f"depth {depth} unfinished: its best move so far",
                        )
                break
            best = move
            pv = self.principal_variation(state, depth) if self.use_tt else []
            info = SearchInfo(depth=depth, score=value, pv=pv or [move])
            if not self._cut or abs(value) >= self.game.max_utility:
                break  # nothing was cut by depth, or a win/loss is proven: deeper changes nothing
        return best, info

    def alpha_beta_search(
        self,
        state: State,
        depth: int,
        root_moves: list[Move],
        partial: list[tuple[float, Move]] | None = None,
    ) -> tuple[float, Move]:
        """ALPHA-BETA-SEARCH: v <- MAX-VALUE(state, -inf, +inf); the action with value v.

        ``root_moves`` is reordered in place: the best move moves to the front for the next
        iteration. ``partial`` collects (value, move) of the root moves finished so far.
        """
        self.nodes += 1
        alpha, beta = -math.inf, math.inf
        v = -math.inf
        best = root_moves[0]
        for a in root_moves:
            child = state.result(a)
            if child.player == self._me:
                value = self.max_value(child, depth - 1, alpha, beta, 1)
            else:
                value = self.min_value(child, depth - 1, alpha, beta, 1)
            if partial is not None:
                partial.append((value, a))
            if value > v:
                v, best = value, a
            alpha = max(alpha, v)
        root_moves.remove(best)
        root_moves.insert(0, best)
        if self.use_tt:
            self.table[state] = (depth, EXACT, v, best, self._cut)
        return v, best

    # -- MAX-VALUE and MIN-VALUE ----------------------------------------------------------------

    def max_value(
        self, state: State, depth: int, alpha: float, beta: float, ply: int, leaf_depth: int = 1
    ) -> float:
        """MAX-VALUE(state, alpha, beta): cut off (return v) as soon as v >= beta.

        ``leaf_depth``: at this depth the children are scored in the loop, without a call of
        their own (a saving on the most numerous nodes). A recorder
        (``ply_arena.reference_agents.trace``) passes 0, so that every node it draws is a call it
        sees; values and node counts are the same either way.
        """
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check_clock()
        if state.is_terminal():
            return state.utility(self._me)
        if depth == 0:
            self._cut = True
            return self.evaluate(state)[self._me]
        alpha0, beta0 = alpha, beta
        tt_move = None
        if self.use_tt:
            entry = self.table.get(state)
            if entry is not None:
                d, flag, value, tt_move, cut = entry
                if d >= depth or not cut:
                    if cut:
                        self._cut = True  # the reused value stands on an eval(n) below
                    if flag == EXACT:
                        return value
                    if flag == LOWER:
                        if value >= beta:
                            return value
                        alpha = max(alpha, value)
                    elif value <= alpha:
                        return value
                    else:
                        beta = min(beta, value)
        outer_cut, self._cut = self._cut, False
        v = -math.inf
        best = None
        min_value = self.min_value
        evaluate = self.evaluate
        me = self._me
        for a in self._ordered(state, tt_move, ply):
            child = state.result(a)
            if depth == leaf_depth:  # the children are leaves: UTILITY or eval(n), no call
                self.nodes += 1
                if child.is_terminal():
                    value = child.utility(me)
                else:
                    self._cut = True
                    value = evaluate(child)[me]
            # MIN moves next, unless the turn stays with MAX (a pass in Othello)
            elif child.player != me:
                value = min_value(child, depth - 1, alpha, beta, ply + 1)
            else:
                value = self.max_value(child, depth - 1, alpha, beta, ply + 1)
            if value > v:
                v, best = value, a
                if v >= beta:
                    self._cutoff(a, depth, ply)
                    break
                if v > alpha:
                    alpha = v
        cut = self._cut
        self._cut = outer_cut or cut
        if self.use_tt:
            flag = LOWER if v >= beta0 else UPPER if v <= alpha0 else EXACT
            self.table[state] = (depth, flag, v, best, cut)
        return v

    def min_value(
        self, state: State, depth: int, alpha: float, beta: float, ply: int, leaf_depth: int = 1
    ) -> float:
        """MIN-VALUE(state, alpha, beta): cut off (return v) as soon as v <= alpha.
        ``leaf_depth`` as in ``max_value``."""
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check_clock()
        if state.is_terminal():
            return state.utility(self._me)
        if depth == 0:
            self._cut = True
            return self.evaluate(state)[self._me]
        alpha0, beta0 = alpha, beta
        tt_move = None
        if self.use_tt:
            entry = self.table.get(state)
            if entry is not None:
                d, flag, value, tt_move, cut = entry
                if d >= depth or not cut:
                    if cut:
                        self._cut = True  # the reused value stands on an eval(n) below
                    if flag == EXACT:
                        return value
                    if flag == UPPER:
                        if value <= alpha:
                            return value
                        beta = min(beta, value)
                    elif value >= beta:
                        return value
                    else:
                        alpha = max(alpha, value)
        outer_cut, self._cut = self._cut, False
        v = math.inf
        best = None
        max_value = self.max_value
        evaluate = self.evaluate
        me = self._me
        for a in self._ordered(state, tt_move, ply):
            child = state.result(a)
            if depth == leaf_depth:
                self.nodes += 1
                if child.is_terminal():
                    value = child.utility(me)
                else:
                    self._cut = True
                    value = evaluate(child)[me]
            elif child.player == me:
                value = max_value(child, depth - 1, alpha, beta, ply + 1)
            else:
                value = self.min_value(child, depth - 1, alpha, beta, ply + 1)
            if value < v:
                v, best = value, a
                if v <= alpha:
                    self._cutoff(a, depth, ply)
                    break
                if v < beta:
                    beta = v
        cut = self._cut
        self._cut = outer_cut or cut
        if self.use_tt:
            flag = LOWER if v >= beta0 else UPPER if v <= alpha0 else EXACT
            self.table[state] = (depth, flag, v, best, cut)
        return v

    def _check_clock(self) -> None:
        self._next_check = self.nodes + CLOCK_EVERY + 1
        if time.monotonic() > self._deadline:
            raise SearchTimeout

    # -- move ordering --------------------------------------------------------------------------

    def _ordered(self, state: State, tt_move: Move, ply: int) -> Sequence[Move]:
        """The moves of ``state``: transposition-table move, killers, then by history."""
        moves = state.actions()
        if not self.order or len(moves) < 2:
            return moves
        history = self.history
        # a stable sort: moves with equal history keep the game's order
        moves = sorted(moves, key=history.__getitem__, reverse=True) if history else list(moves)
        killers = self.killers
        if ply < len(killers):
            for k in reversed(killers[ply]):
                if k in moves and k != moves[0]:
                    moves.remove(k)
                    moves.insert(0, k)
        if tt_move is not None and tt_move != moves[0]:
            moves.remove(tt_move)
            moves.insert(0, tt_move)
        return moves

    def _cutoff(self, move: Move, depth: int, ply: int) -> None:
        """Remember a move that caused a cut-off: killer of this ply, and history credit."""
        killers = self.killers
        while len(killers) <= ply:
            killers.append([])
        slot = killers[ply]
        if not slot or slot[0] != move:
            slot.insert(0, move)
            del slot[2:]
        self.history[move] += depth * depth

    def principal_variation(self, state: State, depth: int) -> list[Move]:
        """The line of best moves stored in the transposition table, from ``state`` on."""
        pv: list[Move] = []
        seen = set()
        while len(pv) < depth and not state.is_terminal() and state not in seen:
            seen.add(state)
            entry = self.table.get(state)
            if entry is None or entry[3] is None:
                break
            pv.append(entry[3])
            state = state.result(entry[3])
        return pv

    # -- Connect Four: solve outright when possible ---------------------------------------------

    def _solve_connect_four(self, state: State, deadline: float) -> tuple[Move, SearchInfo] | None:
        """Best move and exact result by the specialised solver, or None if out of time."""
        from ply_arena.reference_agents.connect_four_solver import COLUMN_ORDER, SolveTimeout

        solver = self._connect_four_solver(deadline)
        current, mask, moves = state.current, state.mask, state.moves  # type: ignore[attr-defined]
        order = list(COLUMN_ORDER)
        if self.rng is not None:  # among equally good columns the seed decides
            self.rng.shuffle(order)
        try:
            col, pons = solver.best_move(current, mask, moves, tuple(order))
        except SolveTimeout:
            self.nodes += solver.nodes
            return None
        pv = [col, *self._solved_line(solver, current, mask, moves, col)]
        self.nodes += solver.nodes
        utility = (pons > 0) - (pons < 0)
        outcome = "win" if pons > 0 else "loss" if pons < 0 else "draw"
        value = float(utility) * self.game.max_utility
        info = SearchInfo(
            depth=42 - moves,
            nodes=self.nodes,
            score=value,
            pv=pv,
            comment=f"solved: {outcome}, Pons score {pons:+d}",
        )
        return col, info

    def _connect_four_solver(self, deadline: float) -> Any:
        """The agent's solver, kept across moves so that its table keeps what it learnt."""
        from ply_arena.reference_agents.connect_four_solver import Solver

        solver = self._solver
        if solver is None or len(solver.table) > SOLVER_TABLE_SIZE:
            solver = self._solver = Solver()
        solver.deadline = deadline
        solver.nodes = 0
        return solver

    def _weak_solve_connect_four(
        self, state: State, deadline: float
    ) -> tuple[int, list[Move]] | None:
        """(1, [a winning column]) or (0, the drawing columns) or (-1, []) for the side to
        move, by null-window searches of the solver; None if out of time."""
        from ply_arena.reference_agents.connect_four_solver import (
            BOARD_MASK,
            BOTTOM_CELL,
            BOTTOM_MASK,
            COLUMN_MASK,
            COLUMN_ORDER,
            TOP_MASK,
            SolveTimeout,
            winning_cells,
        )

        solver = self._connect_four_solver(deadline)
        current, mask, moves = state.current, state.mask, state.moves  # type: ignore[attr-defined]
        order = list(COLUMN_ORDER)
        if self.rng is not None:
            self.rng.shuffle(order)
        cols = [c for c in order if not mask & TOP_MASK[c]]
        possible = (mask + BOTTOM_MASK) & BOARD_MASK
        wins = winning_cells(current, mask) & possible
        if wins:
            winning: list[Move] = [c for c in cols if wins & COLUMN_MASK[c]]
            return 1, winning[:1]
        try:
            sign = solver.solve(current, mask, moves, weak=True)
            if sign < 0:
                return -1, []
            keep: list[Move] = []
            for col in cols:
                move = (mask + BOTTOM_CELL[col]) & COLUMN_MASK[col]
                child_current, child_mask = current ^ mask, mask | move
                child_possible = (child_mask + BOTTOM_MASK) & BOARD_MASK
                if winning_cells(child_current, child_mask) & child_possible:
                    continue  # the opponent connects at once
                # the opponent's (child's) value is <= -sign exactly when the move keeps sign
                v = solver._negamax(child_current, child_mask, moves + 1, -sign, -sign + 1)
                if v <= -sign:
                    keep.append(col)
                    if sign > 0:
                        break
        except SolveTimeout:
            return None
        finally:
            self.nodes += solver.nodes
        return sign, keep

    @staticmethod
    def _solved_line(solver: Any, current: int, mask: int, moves: int, col: int) -> list[Move]:
        """The rest of a perfect line after ``col``, as far as the solver's deadline allows."""
        from ply_arena.reference_agents.connect_four_solver import (
            BOTTOM_CELL,
            COLUMN_MASK,
            SolveTimeout,
            winning_cells,
        )

        line: list[Move] = []
        while True:
            move = (mask + BOTTOM_CELL[col]) & COLUMN_MASK[col]
            if winning_cells(current, mask) & move or moves + 1 == 42:
                return line  # that move ends the game
            current, mask, moves = current ^ mask, mask | move, moves + 1
            try:
                col, _ = solver.best_move(current, mask, moves)
            except SolveTimeout:
                return line
            line.append(col)

    def solve(self, state: State) -> int:
        """Connect Four only: the exact Pons score of ``state`` for the side to move."""
        from ply_arena.reference_agents.connect_four_solver import Solver

        if self.game.name != "connect_four":
            raise ValueError(f"solve() is for connect_four, not {self.game.name}")
        solver = Solver()
        score = solver.solve(state.current, state.mask, state.moves)  # type: ignore[attr-defined]
        self.nodes = solver.nodes
        return score
