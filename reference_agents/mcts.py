"""``mcts``: Monte-Carlo Tree Search (UCT), the anytime method of the notes (001).

Notes 001, "Monte-Carlo Tree Search (MCTS)": MCTS "does not develop the whole game tree, only the
parts that offer the best chances", and repeats cycles of four phases until it is stopped:

1. **Selection** (``select``): from the root, descend through nodes whose successors have all
   been generated, each time to the child with the highest UCB1 value
   ``U(n)/N(n) + c * sqrt(ln N(parent) / N(n))`` - exploitation plus exploration, ``c`` the
   option of the same name (default sqrt 2, the UCB1 constant for payoffs in [0, 1]). At a
   chance node (the dice) the outcome is drawn with its probability instead.
2. **Expansion** (``expand``): generate one new child of the node reached; its N and U are 0.
   The untried move is picked at random.
3. **Simulation** (``simulate``): from the new node play the game out, as the notes' loop does,
   ``while not Terminal_test(s): s = Result(s, random.choice(Actions(s)))``; dice are rolled
   with their probabilities. With ``simulation="eval"`` the playout stops after
   ``playout_depth`` random plies and eval(n) (``ply_arena.reference_agents.evaluation``) stands in
   for the utility: useful where random games are very long (Chinese checkers runs to its ply cap).
4. **Backpropagation** (``backpropagate``): the payoff vector of the simulation (every player's
   utility, scaled to [0, 1] by the game's utility range) goes up the path; every node adds
   N += 1 and U += the payoff of the player who chose the move into it - the one whose
   choice the statistic informs. So two players, three players and chance need no special case.

One addition to the notes: proven values (MCTS-Solver; see ``expand`` and ``prove``) - an
outright win one move away, or a node whose successors are all decided, is backed up exactly
instead of being estimated again and again.

It is an *anytime* method: stopped at any moment it answers with the move most often chosen at
the root (the most robust estimate). The agent stops at the time limit or after ``simulations``
cycles, whichever comes first; with a fixed ``simulations`` count and a ``seed`` it is exactly
reproducible.

    >>> from ply_arena import games
    >>> g = games.get("tic_tac_toe")
    >>> s = g.initial_state()
    >>> for text in ("a1", "b1", "a2", "b2"):   # X has a1 a2, O has b1 b2: X to move
    ...     s = s.result(g.parse_move(s, text))
    >>> move, info = MCTSAgent(g, simulations=500, seed=1).choose(s)
    >>> g.format_move(s, move), info.nodes, info.score    # X completes the a-file and wins
    ('a3', 500, 1.0)
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
from ply_arena.reference_agents.minimax import check_limits, check_options, search_budget

#: Simulations per move with neither a time limit nor a ``simulations`` option.
DEFAULT_SIMULATIONS = 1000
#: The tree stops growing here and the search answers (about 120 MB of nodes and states): long
#: move times in fast games would otherwise fill the memory.
DEFAULT_MAX_NODES = 300_000
#: Games whose random playouts run to a ply cap (hundreds of moves that decide nothing): the
#: default simulation there is the evaluation-guided one.
_EVAL_SIMULATION_GAMES = frozenset({"chinese_checkers"})
_CHANCE = games.CHANCE

_log = math.log
_sqrt = math.sqrt


def _no_proof(node: Node) -> None:
    """``solve=False``: proven values stay where they are."""


class _OutOfTime(Exception):
    """The deadline passed in the middle of a simulation."""


#: Seconds to free one tree node after the search (measured ~0.5 us; doubled for safety).
_TEARDOWN_S_PER_NODE = 1e-6


class Node:
    """A node of the search tree: a state plus the statistics N (visits) and U (total payoff).

    ``u`` is the payoff of ``seat``, the player who chose the move into this node (the player
    of the parent), because that player's choice at the parent is what N and U inform.
    """

    __slots__ = (
        "children",
        "move",
        "n",
        "outcomes",
        "parent",
        "player",
        "seat",
        "solved",
        "state",
        "terminal",
        "u",
        "untried",
    )

    def __init__(self, state: State, parent: Node | None, move: Move, seat: int) -> None:
        self.state = state
        self.parent = parent
        self.move = move
        self.seat = seat
        self.player = state.player
        self.n = 0
        self.u = 0.0
        self.terminal = state.is_terminal()
        self.children: list[Node] = []
        self.untried: list[Move] | None = None  # generated when the node is first expanded
        #: at a chance node: (outcome, probability, child or None) for every outcome
        self.outcomes: list[list[Any]] | None = None
        #: the payoffs (scaled) every visit gets without a simulation: at a terminal node, and at
        #: a node whose player has a move that wins outright
        self.solved: tuple[float, ...] | None = None


class MCTSAgent(SearchAgent):
    """UCT with random (or evaluation-guided) simulations, anytime under a deadline.

    Options: ``c`` (exploration constant, default 1.414), ``simulations`` (cycles per move; the
    default is 1000 when there is no time limit either), ``move_time`` (seconds per move),
    ``simulation`` ("random" or "eval"; default "random", "eval" for Chinese checkers),
    ``playout_depth`` (random plies before eval(n) in "eval" simulations, default 0), ``seed``,
    ``evaluate`` (replaces the game's eval(n)), ``max_nodes`` (the search answers when its tree
    has this many nodes; default 300 000), ``solve`` (the decisive-move rule and proofs,
    default true).
    """

    name = "mcts"

    def __init__(
        self,
        game: games.Game,
        *,
        c: float = math.sqrt(2),
        simulations: int | None = None,
        move_time: float | None = None,
        simulation: str | None = None,
        playout_depth: int = 0,
        seed: int | None = None,
        evaluate: Evaluator | None = None,
        max_nodes: int = DEFAULT_MAX_NODES,
        solve: bool = True,
        **options: Any,
    ) -> None:
        super().__init__(game)
        check_options("mcts", options, set())
        check_limits("mcts", None, move_time)
        if simulation is None:
            simulation = "eval" if game.name in _EVAL_SIMULATION_GAMES else "random"
        if simulation not in ("random", "eval"):
            raise ValueError(f"mcts simulation must be 'random' or 'eval', not {simulation!r}")
        if simulations is not None and simulations < 1:
            raise ValueError(f"mcts simulations must be at least 1, not {simulations}")
        if c < 0:
            raise ValueError(f"mcts exploration constant c must be >= 0, not {c}")
        self.c = float(c)
        self.simulations = simulations
        self.move_time = move_time
        self.simulation = simulation
        self.playout_depth = playout_depth
        self.rng = random.Random(seed)
        self.evaluate: Evaluator = evaluate or evaluator_for(game)
        self.lo = float(game.min_utility)
        self.span = float(game.max_utility) - self.lo
        self._no_chance = not game.has_chance
        if max_nodes < 2:
            raise ValueError(f"mcts max_nodes must be at least 2, not {max_nodes}")
        self.max_nodes = max_nodes
        self.solve = solve
        self.tree_size = 0
        self._deadline = math.inf

    # -- the four phases ---------------------------------------------------------------------

    def select(self, node: Node) -> tuple[Node, int]:
        """Selection and expansion: descend by UCB1 (sampling at chance nodes) to a node with an
        untried move, expand it, and return the new node and its depth."""
        rand = self.rng.random
        c = self.c
        depth = 0
        while node.solved is None:
            if node.player == _CHANCE:
                outcomes = node.outcomes
                if outcomes is None:
                    outcomes = node.outcomes = [
                        [o, p, None] for o, p in node.state.chance_outcomes()
                    ]
                x = rand()
                entry = outcomes[-1]
                for e in outcomes:
                    x -= e[1]
                    if x < 0.0:
                        entry = e
                        break
                child = entry[2]
                depth += 1
                if child is None:  # expansion below a roll
                    child = entry[2] = Node(node.state.result(entry[0]), node, entry[0], _CHANCE)
                    self.tree_size += 1
                    if child.terminal:
                        child.solved = self._scaled(child.state.returns())
                    return child, depth
                node = child
                continue
            untried = node.untried
            if untried is None:
                untried = node.untried = list(node.state.actions())
            if untried:
                return self.expand(node, untried), depth + 1
            # every child generated: UCB1
            k = c * _sqrt(_log(node.n))
            best = node
            best_ucb = -1.0
            for ch in node.children:
                cn = ch.n
                ucb = ch.u / cn + k / _sqrt(cn)
                if ucb > best_ucb:
                    best_ucb, best = ucb, ch
            node = best
            depth += 1
        return node, depth

    def expand(self, node: Node, untried: list[Move]) -> Node:
        """Expansion: one untried move, chosen at random, becomes a child with N = U = 0.

        A child that ends the game is scored once, here. If it is an outright win for the player
        who chose it (the best payoff there is), that player will always choose it, so its
        parent is *solved*: from then on a visit there backs up the win without simulating (the
        decisive-move rule of MCTS-Solver, Winands et al. 2008; OpenSpiel's ``solve=True``).
        Without it a player one move from victory is found out only after many visits.
        """
        i = int(self.rng.random() * len(untried))
        untried[i], untried[-1] = untried[-1], untried[i]
        move = untried.pop()
        child = Node(node.state.result(move), node, move, node.player)
        node.children.append(child)
        self.tree_size += 1
        if child.terminal:
            payoffs = child.solved = self._scaled(child.state.returns())
            # (not at the root: there the win has to be chosen, so its visits must go on)
            if self.solve and payoffs[node.player] >= 1.0 and node.parent is not None:
                node.solved = payoffs
        return child

    def simulate(self, state: State) -> tuple[float, ...]:
        """Simulation: play on at random to the end (or to ``playout_depth`` plies and eval(n));
        every player's payoff, scaled to [0, 1]."""
        rand = self.rng.random
        s = state
        if self.simulation == "random" and self._no_chance:
            # the notes' loop; ACTIONS(s) is empty exactly at a terminal state, which saves the
            # separate terminal test on this, the hottest loop of the agent
            acts = s.actions()
            plies = 0
            while acts:
                s = s.result(acts[int(rand() * len(acts))])
                acts = s.actions()
                plies += 1
                if not plies & 63:
                    self._check_clock()
            values = s.returns()
        elif self.simulation == "random":
            plies = 0
            while not s.is_terminal():
                if s.player == _CHANCE:
                    s = s.result(self._roll(s))
                else:
                    acts = s.actions()
                    s = s.result(acts[int(rand() * len(acts))])
                plies += 1
                if not plies & 63:
                    self._check_clock()
            values = s.returns()
        else:
            for _ in range(self.playout_depth):
                if s.is_terminal():
                    break
                if s.player == _CHANCE:
                    s = s.result(self._roll(s))
                else:
                    acts = s.actions()
                    s = s.result(acts[int(rand() * len(acts))])
            values = s.returns() if s.is_terminal() else self.evaluate(s)
        return self._scaled(values)

    def _scaled(self, values: tuple[float, ...]) -> tuple[float, ...]:
        """Payoffs mapped from the utility range to [0, 1], where UCB1's constant is meant."""
        lo, span = self.lo, self.span
        return tuple([(v - lo) / span for v in values])

    def _check_clock(self) -> None:
        """A long playout (backgammon's run to hundreds of plies) looks at the clock too, so that
        the last simulation cannot carry the agent past its time limit."""
        if time.monotonic() > self._deadline:
            raise _OutOfTime

    def _roll(self, state: State) -> Move:
        """A chance outcome drawn with its probability."""
        outcomes = state.chance_outcomes()
        x = self.rng.random()
        for o, p in outcomes:
            x -= p
            if x < 0.0:
                return o
        return outcomes[-1][0]  # rounding left x a hair above 0

    @staticmethod
    def backpropagate(node: Node | None, payoffs: tuple[float, ...]) -> None:
        """Backpropagation: N += 1 on the whole path, U += the payoff of each node's chooser."""
        while node is not None:
            node.n += 1
            seat = node.seat
            if seat >= 0:
                node.u += payoffs[seat]
            node = node.parent

    # -- the anytime loop --------------------------------------------------------------------

    def search(self, state: State, time_limit: float | None) -> tuple[Move, SearchInfo]:
        start = time.monotonic()
        budget = search_budget(time_limit, self.move_time)
        limit = self.simulations
        if limit is None:
            limit = DEFAULT_SIMULATIONS if budget is None else 1 << 62
        deadline = math.inf if budget is None else start + budget
        root = Node(state, None, None, _CHANCE)
        root.untried = list(state.actions())
        if len(root.untried) == 1:
            move = root.untried[0]
            return move, SearchInfo(
                nodes=0,
                pv=[move],
                comment="only move",
                time_ms=int((time.monotonic() - start) * 1000),
            )
        self.tree_size = 1
        max_nodes = self.max_nodes
        self._deadline = deadline
        sims, max_depth = self._search(root, limit, max_nodes, deadline)
        best = self.most_visited(root)
        assert best is not None
        info = SearchInfo(
            depth=max_depth,
            nodes=sims,
            score=self.lo + self.span * best.u / best.n,
            pv=self.principal_variation(root),
            time_ms=int((time.monotonic() - start) * 1000),
            comment=f"{sims} simulations, {best.n} through the chosen move",
        )
        self.dismantle(root)
        return best.move, info

    @staticmethod
    def dismantle(root: Node) -> None:
        """Cut every child's link to its parent, so that reference counting frees the tree at
        once. Left cyclic, the tree would wait for the cyclic collector, whose first pass after
        the search walks all of it (about 10 ms for 15,000 nodes): time the caller would pay."""
        stack = [root]
        while stack:
            node = stack.pop()
            node.parent = None
            stack.extend(node.children)
            if node.outcomes is not None:
                stack.extend(e[2] for e in node.outcomes if e[2] is not None)

    def _search(self, root: Node, limit: int, max_nodes: int, deadline: float) -> tuple[int, int]:
        """The cycles of the four phases until the deadline, the simulation count or the tree
        size says stop; returns (simulations, deepest node selected)."""
        select, simulate, backpropagate = self.select, self.simulate, self.backpropagate
        prove = self.prove if self.solve else _no_proof
        clock = time.monotonic
        sims = 0
        max_depth = 0
        while sims < limit and self.tree_size < max_nodes:
            leaf, depth = select(root)
            if depth > max_depth:
                max_depth = depth
            solved = leaf.solved
            if solved is None:
                try:
                    solved = simulate(leaf.state)
                except _OutOfTime:
                    if not root.n:  # not even one simulation: keep this one, late as it is
                        self._deadline = math.inf
                        solved = simulate(leaf.state)
                    else:
                        break  # the new leaf stays unvisited (N = 0): never chosen
            else:
                prove(leaf)  # a proven value may settle the nodes above it too
            backpropagate(leaf, solved)
            sims += 1
            # reading the clock costs well under a microsecond, a simulation several; the tree
            # must also be taken apart before returning (see dismantle), about half a
            # microsecond a node, so time for that is kept in hand (twice that, for a busy machine)
            if clock() + self.tree_size * _TEARDOWN_S_PER_NODE > deadline:
                break
        return sims, max_depth

    @staticmethod
    def prove(node: Node) -> None:
        """MCTS-Solver's upward step, for payoff vectors: a decision node whose player has a
        proven outright win below it, or whose children are all proven, is proven too - with
        the max^n value of the notes (004): the proven vector best for the player choosing.
        The root is left open (its move is chosen by visits, which a proven win soon has), and
        so are chance nodes (an average over proven outcomes is left to the visits)."""
        child = node
        parent = node.parent
        while parent is not None and parent.parent is not None:
            if parent.solved is None:
                p = parent.player
                if p == _CHANCE:
                    return
                proven = child.solved
                assert proven is not None
                if proven[p] < 1.0:
                    if parent.untried:
                        return
                    for ch in parent.children:
                        s = ch.solved
                        if s is None:
                            return
                        if s[p] > proven[p]:
                            proven = s
                parent.solved = proven
            child, parent = parent, parent.parent

    @staticmethod
    def most_visited(node: Node) -> Node | None:
        """The child chosen most often (ties: the higher mean payoff)."""
        best: Node | None = None
        for ch in node.children:
            if ch.n and (
                best is None or ch.n > best.n or (ch.n == best.n and ch.u / ch.n > best.u / best.n)
            ):
                best = ch
        return best

    def principal_variation(self, root: Node) -> list[Move]:
        """The most visited line, down to a chance node or a node visited only once."""
        line: list[Move] = []
        node = root
        while True:
            child = self.most_visited(node)
            if child is None or (line and child.n < 2):
                break
            line.append(child.move)
            if child.player == _CHANCE:
                break  # the line beyond a roll depends on the roll
            node = child
        return line
