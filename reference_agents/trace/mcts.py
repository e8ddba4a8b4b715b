"""Tracing ``mcts``: the tree after the search, and the four phases of the first simulations.

The agent's own phases are the hooks: ``select`` (selection, which calls ``expand``),
``simulate``, ``backpropagate``, and ``dismantle``, which receives the finished tree (it is read
before being taken apart). Each node shows N (visits), U (the sum of the payoffs, scaled to
[0, 1], of the player who chose the move into it), U/N and the UCB1 value it had when its
parent last chose among its children by UCB1 (the value that made the choice); the UCB values are
computed right before each backpropagation, from the statistics the selection saw.

Visits add up: a node's N is the sum of its children's N plus the simulations whose selection
ended at the node itself (``stopped_here``): its own expansion, and visits to a node whose value
is proven (MCTS-Solver), which back the proof up without a simulation. The root ends none.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import SearchInfo
from ply_arena.reference_agents.mcts import _OutOfTime
from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt, prob
from ply_arena.reference_agents.trace._recorder import Recorder

KINDS = {
    "decision": "a player chooses here: by UCB1 once every move has a child, else by expanding "
    "an untried move",
    "chance": "the dice: an outcome is drawn with its probability",
    "terminal": "TERMINAL-TEST is true: its utility is backed up at every visit",
}


class MCTSRecorder(Recorder):
    algorithm = "mcts"
    KINDS = KINDS
    SMALLER = "fewer simulations (mcts:simulations=N) or a smaller --move-time"
    NOTES_UNITS = False  # means of payoffs scaled to [0, 1], not eval(n)

    def __init__(self, agent: Any, state: State, view: Any) -> None:
        super().__init__(agent, state, view)
        self.sims = 0
        self.ucb: dict[int, float] = {}  # id(node) -> UCB1 at its parent's last UCB choice
        self.stopped: dict[int, int] = {}  # id(node) -> selections that ended there
        self.phases: list[dict[str, Any]] = []
        self.sim: dict[str, Any] | None = None  # the simulation being recorded
        self.out_of_budget = False

    def attach(self) -> None:
        agent: Any = self.agent
        self.patch("select", self._select(agent.select))
        self.patch("expand", self._expand(agent.expand))
        self.patch("simulate", self._simulate(agent.simulate))
        self.patch("backpropagate", self._backpropagate(agent.backpropagate))
        self.patch("dismantle", self._dismantle(agent.dismantle))

    def options(self) -> dict[str, Any]:
        agent: Any = self.agent
        return {
            "c": agent.c,
            "simulations": agent.simulations,
            "simulation": agent.simulation,
            "playout_depth": agent.playout_depth,
            "solve": agent.solve,
            "max_nodes": agent.max_nodes,
        }

    def values_of(self) -> str:
        return (
            "N: visits; U: sum of the payoffs, scaled to [0, 1], of the player who chose the move "
            "into the node; U/N its mean; UCB1 = U/N + c sqrt(ln N(parent) / N) at the parent's "
            "last choice; 'value' (JSON) is U/N in the game's units, and so is the answer's "
            f"value: {self.game.min_utility:g} + {self.game.max_utility - self.game.min_utility:g}"
            " x U/N of the chosen move"
        )

    def units(self) -> str:
        return (
            f"payoffs scaled from [{self.game.min_utility:g}, {self.game.max_utility:g}] to "
            "[0, 1]; a win is 1"
        )

    # -- the phases -------------------------------------------------------------------------

    def _select(self, original: Any) -> Any:
        def select(node: Any) -> tuple[Any, int]:
            self.sims += 1
            if self.sims > self.view.budget:
                stop = self.over_budget("simulations")
                if not self.timed:
                    raise stop
                self.out_of_budget = True  # the next simulation ends the search (see simulate)
            recorded = self.sims <= self.view.simulations
            self.sim = {"simulation": self.sims, "expansion": None} if recorded else None
            return original(node)

        return select

    def _expand(self, original: Any) -> Any:
        def expand(node: Any, untried: list[Move]) -> Any:
            child = original(node, untried)
            if self.sim is not None:
                self.sim["expansion"] = self.label(node.state, child.move)
            return child

        return expand

    def _simulate(self, original: Any) -> Any:
        def simulate(state: State) -> tuple[float, ...]:
            if self.out_of_budget:
                raise _OutOfTime  # the agent's own way to stop at its deadline
            scaled = original(state)
            if self.sim is not None:
                lo, span = self.agent.lo, self.agent.span  # type: ignore[attr-defined]
                self.sim["rollout"] = {
                    "kind": self.agent.simulation,  # type: ignore[attr-defined]
                    "payoffs": [lo + span * x for x in scaled],
                    "scaled": list(scaled),
                }
            return scaled

        return simulate

    def _backpropagate(self, original: Any) -> Any:
        def backpropagate(leaf: Any, payoffs: tuple[float, ...]) -> None:
            path = []
            node = leaf
            while node is not None:
                path.append(node)
                node = node.parent
            path.reverse()  # root first
            steps = [self._step(parent, child, leaf) for parent, child in pairwise(path)]
            self.stopped[id(leaf)] = self.stopped.get(id(leaf), 0) + 1
            original(leaf, payoffs)
            sim = self.sim
            if sim is not None:
                sim["selection"] = steps
                if "rollout" not in sim:
                    sim["rollout"] = {
                        "kind": "terminal" if leaf.terminal else "proven",
                        "scaled": list(payoffs),
                        "payoffs": [self.agent.lo + self.agent.span * x for x in payoffs],  # type: ignore[attr-defined]
                    }
                if sim["expansion"] is None:
                    # Selection ended by drawing a roll not seen before: that outcome node is
                    # what this simulation added to the tree.
                    sim["expansion"] = next(
                        (s["move"] for s in steps if s["how"] == "roll" and s["new"]), None
                    )
                # From the leaf up to the root, the order the values travel in. An outcome
                # node (reached by a roll) has visits but no U of its own: nobody chose it.
                sim["backpropagation"] = [
                    {"move": s["move"], "visits": n.n, "total": None if s["how"] == "roll" else n.u}
                    for s, n in reversed(list(zip(steps, path[1:], strict=True)))
                ] + [{"move": None, "visits": path[0].n, "total": None}]
                self.phases.append(sim)
                self.sim = None

        return backpropagate

    def _step(self, parent: Any, child: Any, leaf: Any) -> dict[str, Any]:
        """How the selection went from ``parent`` to ``child`` in this simulation."""
        move = self.label(parent.state, child.move)
        if parent.player == games.CHANCE:
            p = next(e[1] for e in parent.outcomes if e[2] is child)
            return {"move": move, "how": "roll", "probability": p, "new": child.n == 0}
        if child is leaf and child.n == 0:
            return {"move": move, "how": "expansion"}
        # a UCB1 choice among all the children: the values the agent compared, recomputed
        # from the same statistics (nothing has changed them since the selection)
        k = self.agent.c * math.sqrt(math.log(parent.n))  # type: ignore[attr-defined]
        for ch in parent.children:
            if ch.n:
                self.ucb[id(ch)] = ch.u / ch.n + k / math.sqrt(ch.n)
        return {
            "move": move,
            "how": "ucb",
            "ucb": self.ucb[id(child)],
            "visits": child.n,
            "mean": child.u / child.n,
        }

    # -- the tree after the search ----------------------------------------------------------

    def _dismantle(self, original: Any) -> Any:
        def dismantle(root: Any) -> None:
            self.completed = self._tree(root)
            original(root)

        return dismantle

    def _tree(self, root: Any) -> TraceNode:
        agent: Any = self.agent
        lo, span = agent.lo, agent.span
        counter = 0

        def build(node: Any, move: str | None, level: int) -> tuple[TraceNode | None, int]:
            nonlocal counter
            kind = (
                "terminal"
                if node.terminal
                else "chance"
                if node.player == games.CHANCE and node.parent is not None
                else "decision"
            )
            t: TraceNode | None = None
            if level <= self.max_level:
                t = TraceNode(counter, move, kind, level, self.who(node.player))
                counter += 1
                data = t.data
                # U is kept for the player who chose the move into the node: none below a roll
                chosen = node.seat >= 0
                data.update(visits=node.n, total=node.u if chosen else None)
                if node.parent is not None:
                    data["chooser"] = self.who(node.seat)
                    data["mean"] = node.u / node.n if node.n and chosen else None
                    t.value = lo + span * node.u / node.n if node.n and chosen else None
                    data["ucb"] = self.ucb.get(id(node))
                data["stopped_here"] = self.stopped.get(id(node), 0)
                if node.solved is not None and not node.terminal:
                    data["proven"] = tuple(lo + span * x for x in node.solved)
            size = 1
            if node.outcomes is not None:
                kids = [(e[2], e[1]) for e in node.outcomes if e[2] is not None]
            else:
                kids = [(ch, None) for ch in node.children]
            for child, p in kids:
                sub, n = build(child, self.label(node.state, child.move), level + 1)
                size += n
                if sub is not None and t is not None:
                    if p is not None:
                        sub.data["probability"] = p
                    t.children.append(sub)
            if t is not None:
                t.size = size
            return t, size

        tree, _ = build(root, None, 0)
        assert tree is not None
        best = agent.most_visited(root)
        tree.data["best"] = None if best is None else self.label(root.state, best.move)
        return tree

    def clock_may_have_cut(self, info: SearchInfo) -> bool:
        simulations = self.agent.simulations  # type: ignore[attr-defined]
        if self._tree_full():
            return False  # the tree cap stopped it, not the clock (finish says so)
        return simulations is None or info.nodes < simulations

    def _tree_full(self) -> bool:
        agent: Any = self.agent
        return bool(agent.tree_size >= agent.max_nodes)

    def root_value(self, root: TraceNode) -> float | None:
        best = next((ch for ch in root.children if ch.move == root.data.get("best")), None)
        value = None if best is None else best.value
        return value if isinstance(value, float) else None

    def finish(self, move: Move, info: SearchInfo, options: dict[str, Any]) -> Trace:
        if self.completed is None and info.comment == "only move":
            self.notes.append("only one legal move: the agent played it without a search")
        agent: Any = self.agent
        if info.comment != "only move" and self._tree_full():
            planned = agent.simulations
            self.notes.append(
                f"the tree reached max_nodes={agent.max_nodes:,} nodes: the search stopped "
                f"after {info.nodes:,}"
                + (f" of the {planned:,} simulations asked for" if planned else " simulations")
            )
        trace = super().finish(move, info, options)
        trace.simulations = self.phases
        return trace


def describe(node: TraceNode, trace: Trace) -> str:
    d = node.data
    if node.level == 0:
        return f"{node.player} to move  N={d['visits']}"
    text = "terminal " if node.kind == "terminal" else "chance " if node.kind == "chance" else ""
    text += f"N={d['visits']}"
    if d.get("total") is not None:
        text += f" U={fmt(d['total'])} U/N={fmt(d.get('mean'))}"
    if d.get("ucb") is not None:
        text += f" UCB={fmt(d['ucb'])}"
    elif node.kind != "terminal" and d.get("chooser") is not None:
        text += " (no UCB choice at its parent yet)"
    if d.get("proven") is not None:
        text += f"  proven {fmt(d['proven'])}"
    p = d.get("probability")
    return f"p={prob(p)} {text}" if p is not None else text


def simulations_text(trace: Trace) -> list[str]:
    """The four phases of the recorded simulations, one block each."""
    lines: list[str] = []
    for sim in trace.simulations:
        path = ["root"]
        for s in sim["selection"]:
            if s["how"] == "ucb":
                path.append(f"{s['move']} (UCB {fmt(s['ucb'])})")
            elif s["how"] == "roll":
                path.append(f"{s['move']} (roll, p={prob(s['probability'])})")
        expansion = sim.get("expansion")
        if expansion is not None and any(
            s["how"] == "roll" and s.get("new") and s["move"] == expansion for s in sim["selection"]
        ):
            expansion += " (a new outcome node)"
        roll = sim["rollout"]
        payoffs = ", ".join(
            f"{p} {fmt(v)}" for p, v in zip(trace.players, roll["payoffs"], strict=False)
        )
        what = {
            "random": "random playout to the end",
            "eval": "random plies, then eval(n)",
            "terminal": "none: the node is terminal, its utility",
            "proven": "none: the node's value is proven",
        }.get(roll["kind"], roll["kind"])
        back = " · ".join(
            f"{b['move'] or 'root'} N={b['visits']}"
            + (f" U={fmt(b['total'])}" if b["total"] is not None else "")
            for b in sim["backpropagation"]
        )
        lines += [
            f"simulation {sim['simulation']}",
            f"  selection        {' → '.join(path)}",
            f"  expansion        {expansion or 'none'}",
            f"  simulation       {what}: {payoffs} (scaled {fmt(tuple(roll['scaled']))})",
            f"  backpropagation  {back}",
        ]
    return lines
