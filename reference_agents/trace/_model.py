"""The recorded tree: nodes, the trace around them, what is shown of it, and its JSON form."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

#: Version of the JSON shape (docs/agents.md, "Traces").
FORMAT = "ply-arena-trace/1"
#: Nodes shown when no --trace-limit is given: a tree that still reads on a screen or two.
DEFAULT_LIMIT = 100
#: Nodes a traced search may visit (all iterations together); beyond it the trace is refused.
#: Recording costs a few microseconds and a couple of hundred bytes a node: about a second
#: and 20-30 MB at most.
DEFAULT_BUDGET = 100_000

#: A node's value: one number (MAX's, or the mover's in negamax) or one per seat (max^n).
Value = float | tuple[float, ...]


class TraceTooLarge(ValueError):
    """The traced search visits more nodes than the trace may record."""


@dataclass(frozen=True)
class View:
    """How much of a search to record and show.

    ``levels``: levels below the root recorded and shown (``--trace-depth``; None: all).
    ``limit``: nodes shown, taken level by level from the root (``--trace-limit``; None: all).
    ``simulations``: MCTS only, the first simulations whose four phases are recorded.
    ``budget``: nodes the traced search may visit before it is stopped with TraceTooLarge.
    """

    levels: int | None = None
    limit: int | None = DEFAULT_LIMIT
    simulations: int = 0
    budget: int = DEFAULT_BUDGET

    def __post_init__(self) -> None:
        for name in ("levels", "limit"):
            value = getattr(self, name)
            if value is not None and value < (0 if name == "levels" else 1):
                raise ValueError(f"trace {name} must be at least {0 if name == 'levels' else 1}")
        if self.simulations < 0 or self.budget < 1:
            raise ValueError("trace simulations must be >= 0 and the budget >= 1")


class TraceNode:
    """One node of the search as the search met it.

    ``id`` is the order in which the search entered it (the root is 0), ``kind`` what the node
    is (the trace's ``kinds`` says, per algorithm), ``value`` what it backed up (in the trace's
    units), ``data`` the algorithm's own fields (window, cut-off, pruned moves, visits, ...),
    ``size`` the nodes the search visited in its subtree, itself included, recorded or not.
    """

    __slots__ = ("children", "data", "id", "kind", "level", "move", "player", "size", "value")

    def __init__(
        self, id: int, move: str | None, kind: str, level: int, player: str | None
    ) -> None:
        self.id = id
        self.move = move
        self.kind = kind
        self.level = level
        self.player = player
        self.value: Value | None = None
        self.data: dict[str, Any] = {}
        self.children: list[TraceNode] = []
        self.size = 1

    def walk(self) -> list[TraceNode]:
        """This node and every recorded node below it, depth first."""
        out: list[TraceNode] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def __repr__(self) -> str:
        return f"TraceNode({self.id}, {self.move!r}, {self.kind}, value={self.value!r})"


@dataclass
class Trace:
    """A recorded search: the tree of the search that gave ``answer``, and what it shows."""

    algorithm: str
    game: str
    options: dict[str, Any]
    players: list[str]
    root_player: str
    #: what the values mean: {"of": whose, "units": text, "scale": shown / agent's value}
    values: dict[str, Any]
    #: the agent's answer: move, value (trace units), agent_value, depth, nodes
    answer: dict[str, Any]
    #: the kinds of node in this trace, each with a line saying what it is
    kinds: dict[str, str]
    root: TraceNode | None
    view: View
    #: one line per iteration of iterative deepening: depth, value, best, nodes (or unfinished)
    iterations: list[dict[str, Any]] = field(default_factory=list)
    #: what else a reader must know (earlier iterations filled the table, the solver answered...)
    notes: list[str] = field(default_factory=list)
    #: MCTS with --trace-simulations: the four phases of the first simulations
    simulations: list[dict[str, Any]] = field(default_factory=list)
    #: whether the tree's root gives the answer's move and value
    agrees: bool = True
    #: filled by ``select``: which recorded nodes are shown
    shown_ids: set[int] = field(default_factory=set)

    # -- what is shown --------------------------------------------------------------------

    def select(self) -> None:
        """Choose the nodes shown: level by level from the root, up to ``view.limit``."""
        self.shown_ids = set()
        if self.root is None:
            return
        queue = deque([self.root])
        limit = self.view.limit
        while queue and (limit is None or len(self.shown_ids) < limit):
            node = queue.popleft()
            self.shown_ids.add(node.id)
            queue.extend(node.children)

    def counts(self) -> dict[str, Any]:
        """Nodes searched, recorded and shown, and the levels shown in full."""
        if self.root is None:
            return {"searched": 0, "recorded": 0, "shown": 0, "levels": None, "complete": -1}
        recorded = self.root.walk()
        per_level: dict[int, int] = {}
        shown_per_level: dict[int, int] = {}
        for node in recorded:
            per_level[node.level] = per_level.get(node.level, 0) + 1
            if node.id in self.shown_ids:
                shown_per_level[node.level] = shown_per_level.get(node.level, 0) + 1
        complete = -1
        for level in sorted(per_level):
            if shown_per_level.get(level, 0) < per_level[level]:
                break
            complete = level
        partial = None
        if complete + 1 in shown_per_level:
            partial = {
                "level": complete + 1,
                "shown": shown_per_level[complete + 1],
                "of": per_level[complete + 1],
            }
        return {
            "searched": self.root.size,
            "recorded": len(recorded),
            "shown": len(self.shown_ids),
            "levels": max(per_level),
            "complete": complete,
            "partial": partial,
        }

    def header(self) -> list[str]:
        """What is shown and what was cut, in words (the text's first lines and the JSON's
        ``shown.header``)."""
        c = self.counts()
        lines: list[str] = []
        if self.root is None:
            return ["no search tree: the answer did not come from a search to draw (see the notes)"]
        searched, recorded, shown = c["searched"], c["recorded"], c["shown"]
        if shown == searched:
            lines.append(f"shown: all {searched:,} nodes of the search")
        else:
            part = f"shown: {shown:,} of the {searched:,} nodes of the search"
            if shown < recorded:
                part += f", level by level from the root (--trace-limit {self.view.limit})"
                levels = "level 0" if c["complete"] == 0 else f"levels 0-{c['complete']}"
                part += f": {levels} in full"
                if c["partial"]:
                    p = c["partial"]
                    part += f", {p['shown']:,} of {p['of']:,} nodes at level {p['level']}"
            lines.append(part)
            if recorded < searched:
                lines.append(
                    f"not recorded: {searched - recorded:,} nodes below level {self.view.levels} "
                    f"(--trace-depth {self.view.levels})"
                )
            if shown < recorded:
                lines.append(f"recorded, not shown: {recorded - shown:,} nodes (--trace-limit)")
        return lines

    # -- JSON -----------------------------------------------------------------------------

    def as_json(self) -> dict[str, Any]:
        if not self.shown_ids and self.root is not None:
            self.select()
        c = self.counts()
        return {
            "format": FORMAT,
            "algorithm": self.algorithm,
            "game": self.game,
            "options": {k: _plain(v) for k, v in self.options.items()},
            "players": list(self.players),
            "root_player": self.root_player,
            "values": self.values,
            "answer": {k: _plain(v) for k, v in self.answer.items()},
            "agrees": self.agrees,
            "iterations": [{k: _plain(v) for k, v in it.items()} for it in self.iterations],
            "notes": list(self.notes),
            "kinds": dict(self.kinds),
            "shown": {
                "levels": self.view.levels,
                "limit": self.view.limit,
                "searched": c["searched"],
                "recorded": c["recorded"],
                "nodes": c["shown"],
                "header": self.header(),
            },
            "tree": None if self.root is None else self._node_json(self.root),
            "simulations": [_plain(s) for s in self.simulations],
        }

    def _node_json(self, node: TraceNode) -> dict[str, Any]:
        shown = [ch for ch in node.children if ch.id in self.shown_ids]
        hidden = [ch for ch in node.children if ch.id not in self.shown_ids]
        below = node.size - 1 - sum(ch.size for ch in node.children)
        out: dict[str, Any] = {
            "id": node.id,
            "move": node.move,
            "kind": node.kind,
            "player": node.player,
            "level": node.level,
            "value": _plain(node.value),
            "nodes": node.size,
        }
        out.update({k: _plain(v) for k, v in node.data.items()})
        out["not_shown"] = {
            "children": len(hidden),
            "nodes": sum(ch.size for ch in hidden),
            "not_recorded": below,
        }
        out["children"] = [self._node_json(ch) for ch in shown]
        return out


def _plain(x: Any) -> Any:
    """JSON-ready: infinities as "+inf" / "-inf", float noise from scaling rounded away,
    tuples as lists."""
    if isinstance(x, float):
        if math.isinf(x):
            return "+inf" if x > 0 else "-inf"
        if math.isnan(x):
            return None
        return float(f"{x:.12g}")
    if isinstance(x, tuple | list):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, str | int | bool) or x is None:
        return x
    return str(x)


def fmt(x: Any) -> str:
    """A value as the text trace writes it: 3, 2.5, -inf, (1, 2, 6)."""
    if isinstance(x, tuple | list):
        return "(" + ", ".join(fmt(v) for v in x) + ")"
    if x is None:
        return "?"
    if isinstance(x, float):
        if math.isinf(x):
            return "+inf" if x > 0 else "-inf"
        if x == 0:
            return "0"  # no "-0"
        return f"{x:.4g}"
    return str(x)


def prob(p: float) -> str:
    """A probability as the notes write it: a fraction when it is one (1/36, 1/18, 1/2), else
    as ``fmt`` writes a value.

    >>> prob(1 / 36), prob(2 / 36), prob(0.8), prob(1.0), prob(0.123456)
    ('1/36', '1/18', '4/5', '1', '0.1235')
    """
    exact = Fraction(p).limit_denominator(1296)  # two dice rolled twice at the most
    if p > 0 and abs(float(exact) - p) < 1e-12 * max(1.0, abs(p)):
        return str(exact)
    return fmt(p)
