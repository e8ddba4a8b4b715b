"""The search tree of a small minimax or alpha-beta search, as the notes draw it.

Notes 004 trace alpha-beta on Figure 6.5 step by step: each node shows the range of values it can
still take, the values back up from the leaves, and two leaves under C are never looked at. A
trace records exactly that: for every node visited, the window [alpha, beta] it was entered with,
the value it backed up, and which of its moves were pruned (never searched). It is meant for
small searches (``arena analyze ... --trace``), so it uses the plain algorithms of the notes
(MAX-VALUE / MIN-VALUE, moves in the game's order, no transposition table) and refuses to record
more than ``max_nodes`` nodes.

    >>> from games.tree import TreeGame
    >>> fig65 = TreeGame({"player": 0, "children": [
    ...     {"player": 1, "label": "B", "children": [3, 12, 8]},
    ...     {"player": 1, "label": "C", "children": [2, 4, 6]},
    ...     {"player": 1, "label": "D", "children": [14, 5, 2]}]})
    >>> t = trace_search(fig65, fig65.initial_state())
    >>> print(render_text(t))
    MAX root [-inf, +inf] = 3  best B
    ├── B: MIN [-inf, +inf] = 3
    │   ├── 0: leaf = 3
    │   ├── 1: leaf = 12
    │   └── 2: leaf = 8
    ├── C: MIN [3, +inf] = 2  cut-off (2 <= alpha 3)
    │   ├── 0: leaf = 2
    │   └── pruned: 1, 2
    └── D: MIN [3, +inf] = 2
        ├── 0: leaf = 14
        ├── 1: leaf = 5
        └── 2: leaf = 2
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import games
from games import State
from reference_agents.evaluation import Evaluator, evaluator_for
from reference_agents.minimax import two_player_refusal

#: Largest tree a trace will record.
MAX_NODES = 5000


class TraceTooLarge(ValueError):
    """The search visits more nodes than a readable trace should hold."""


@dataclass
class TraceNode:
    """One node of the recorded tree. ``kind`` is "max", "min", "leaf" (terminal: its utility)
    or "eval" (the depth limit: eval(n)). Values are MAX's, as in the notes."""

    move: str | None
    kind: str
    alpha: float
    beta: float
    value: float = 0.0
    children: list[TraceNode] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    cutoff: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "move": self.move,
            "kind": self.kind,
            "alpha": _num(self.alpha),
            "beta": _num(self.beta),
            "value": _num(self.value),
            "cutoff": self.cutoff,
            "pruned": list(self.pruned),
            "children": [c.as_json() for c in self.children],
        }


@dataclass
class Trace:
    algorithm: str
    depth: int | None
    root: TraceNode
    best: str | None
    nodes: int

    def as_json(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "depth": self.depth,
            "value": _num(self.root.value),
            "best": self.best,
            "nodes": self.nodes,
            "tree": self.root.as_json(),
        }


def _num(x: float) -> float | str:
    """JSON has no infinity: write it as "-inf" / "+inf"."""
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return x


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:g}" if x == int(x) else f"{x:.3f}"


def trace_search(
    game: games.Game,
    state: State,
    depth: int | None = None,
    *,
    algorithm: str = "alphabeta",
    evaluate: Evaluator | None = None,
    max_nodes: int = MAX_NODES,
) -> Trace:
    """Run minimax or alpha-beta (``algorithm``) from ``state`` to ``depth`` (None: to the end)
    and record its tree. TraceTooLarge if it would record more than ``max_nodes`` nodes."""
    reason = two_player_refusal(game)
    if reason is not None:
        raise ValueError(f"cannot trace {game.name}: {reason}")
    if algorithm not in ("alphabeta", "minimax"):
        raise ValueError(f"trace algorithm {algorithm!r}: expected 'alphabeta' or 'minimax'")
    if state.is_terminal():
        raise ValueError("the position is terminal: there is no search to trace")
    evaluate = evaluate or evaluator_for(game)
    me = state.player
    prune = algorithm == "alphabeta"
    count = 0
    limit = math.inf if depth is None else depth

    def visit(s: State, move: str | None, d: float, alpha: float, beta: float) -> TraceNode:
        """MAX-VALUE / MIN-VALUE(s, alpha, beta), recording the node."""
        nonlocal count
        count += 1
        if count > max_nodes:
            raise TraceTooLarge(
                f"the search visits more than {max_nodes} nodes; a trace is for small searches "
                "(use a smaller --depth)"
            )
        if s.is_terminal():
            return TraceNode(move, "leaf", alpha, beta, s.utility(me))
        if d == 0:
            return TraceNode(move, "eval", alpha, beta, evaluate(s)[me])
        is_max = s.player == me
        node = TraceNode(move, "max" if is_max else "min", alpha, beta)
        v = -math.inf if is_max else math.inf
        actions = list(s.actions())
        for i, a in enumerate(actions):
            child = visit(s.result(a), game.format_move(s, a), d - 1, alpha, beta)
            node.children.append(child)
            more = i + 1 < len(actions)  # a cut-off only matters if siblings remain
            if is_max:
                v = max(v, child.value)
                if prune and v >= beta and more:
                    node.cutoff = True
                if prune:  # plain minimax keeps no window
                    alpha = max(alpha, v)
            else:
                v = min(v, child.value)
                if prune and v <= alpha and more:
                    node.cutoff = True
                if prune:
                    beta = min(beta, v)
            if node.cutoff:
                node.pruned = [game.format_move(s, b) for b in actions[i + 1 :]]
                break
        node.value = v
        return node

    root = visit(state, None, limit, -math.inf, math.inf)
    best = None
    for child in root.children:
        if child.value == root.value:
            best = child.move  # ALPHA-BETA-SEARCH: "the action with value v" (the first one)
            break
    return Trace(algorithm, depth, root, best, count)


def render_text(trace: Trace) -> str:
    """The tree as indented text: move, MAX/MIN, entry window, backed-up value, pruning."""
    lines: list[str] = []

    window = trace.algorithm == "alphabeta"

    def head(node: TraceNode) -> str:
        if node.kind in ("leaf", "eval"):
            return f"{node.kind} = {_fmt(node.value)}"
        text = node.kind.upper()
        if window:
            text += f" [{_fmt(node.alpha)}, {_fmt(node.beta)}]"
        text += f" = {_fmt(node.value)}"
        if node.cutoff:
            if node.kind == "max":
                text += f"  cut-off ({_fmt(node.value)} >= beta {_fmt(node.beta)})"
            else:
                text += f"  cut-off ({_fmt(node.value)} <= alpha {_fmt(node.alpha)})"
        return text

    def walk(node: TraceNode, prefix: str) -> None:
        items: list[TraceNode | str] = [*node.children]
        if node.pruned:
            items.append("pruned: " + ", ".join(node.pruned))
        for i, item in enumerate(items):
            last = i == len(items) - 1
            branch = "└── " if last else "├── "
            if isinstance(item, str):
                lines.append(prefix + branch + item)
            else:
                lines.append(f"{prefix}{branch}{item.move}: {head(item)}")
                walk(item, prefix + ("    " if last else "│   "))

    root = trace.root
    best = f"  best {trace.best}" if trace.best is not None else ""
    lines.append(f"{root.kind.upper()} root{head(root)[3:]}{best}")
    walk(root, "")
    return "\n".join(lines)
