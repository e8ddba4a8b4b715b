"""Tracing ``alphabeta``: ALPHA-BETA-SEARCH with its windows, cut-offs, ordering and table.

The nodes are the agent's own calls: the root is ``alpha_beta_search`` (one call per iteration
of iterative deepening; the trace keeps the last finished one, the one that gave the answer), every
other node a call of ``max_value`` or ``min_value``. The recorder passes ``leaf_depth=0`` so that
the leaves, which the agent otherwise scores inside its parent's loop, are calls too (same values,
same node count). ``_ordered`` tells it the order the node's moves were searched in and why (the
transposition-table move, a killer of the ply, the history heuristic); a node that searched fewer
moves than it had cut off, and the rest were pruned. Each node shows the window [alpha, beta] it
was entered with and, when the table held the position, what the entry said.
"""

from __future__ import annotations

import math
from typing import Any

from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import SearchInfo
from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt
from ply_arena.reference_agents.trace._recorder import Frame, Recorder
from ply_arena.reference_agents.trace._text import cutoff, leaf, who, window

KINDS = {
    "max": "MAX-VALUE(state, alpha, beta): the largest child value; stops when v >= beta",
    "min": "MIN-VALUE(state, alpha, beta): the smallest child value; stops when v <= alpha",
    "terminal": "TERMINAL-TEST is true: the node is worth UTILITY(state) for MAX",
    "eval": "the depth limit: eval(n) stands in for the value",
}
_BOUNDS = ("exact", "lower", "upper")  # the agent's EXACT, LOWER, UPPER flags, in order


class AlphaBetaRecorder(Recorder):
    algorithm = "alphabeta"
    KINDS = KINDS
    _root_order: tuple[Move, ...] = ()  # the root's moves in the previous iteration

    def attach(self) -> None:
        agent: Any = self.agent
        self.patch("alpha_beta_search", self.wrap_root(agent.alpha_beta_search, self._search))
        self.patch("max_value", self._value_node(agent.max_value, "max"))
        self.patch("min_value", self._value_node(agent.min_value, "min"))
        self.patch("_ordered", self._ordered(agent._ordered))

    def finish(self, move: Move, info: SearchInfo, options: dict[str, Any]) -> Trace:
        if info.comment.startswith("solved"):
            # Connect Four: the agent's solver (a bitboard negamax of its own) ran first
            if self.completed is None:
                self.notes.append(
                    f"the Connect Four solver answered ({info.comment}); its bitboard search is "
                    "not drawn: alphabeta:solver=false or a --depth traces alpha-beta itself"
                )
            else:
                self.notes.append(
                    f"the Connect Four solver ran first ({info.comment}); the tree is the "
                    "alpha-beta search that chose among the moves it left"
                )
        return super().finish(move, info, options)

    def options(self) -> dict[str, Any]:
        agent: Any = self.agent
        return {
            "depth": agent.depth,
            "order": agent.order,
            "tt": agent.use_tt,
            "solver": agent.use_solver,
        }

    def _search(
        self,
        original: Any,
        state: State,
        depth: int,
        root_moves: list[Move],
        partial: list[tuple[float, Move]] | None = None,
    ) -> tuple[float, Move]:
        moves = list(root_moves)  # the agent reorders its list in place afterwards
        frame = self.begin(state, depth, "max", moves, state.player)
        frame.node.data.update(alpha=-math.inf, beta=math.inf)
        if self._root_order and self.agent.order:  # type: ignore[attr-defined]
            # Every iteration after the first searches the previous one's best move first
            # (the agent moves it to the front), whether or not it was first already.
            frame.node.data["order"] = [
                {"move": self.label(state, moves[0]), "why": "best of the previous iteration"}
            ]
        self._root_order = tuple(moves)
        v, best = original(state, depth, root_moves, partial)
        self.end(frame, self.show(v), best)
        return v, best

    def _value_node(self, original: Any, kind: str) -> Any:
        def node(
            state: State, depth: int, alpha: float, beta: float, ply: int, leaf_depth: int = 1
        ) -> float:
            frame = self._enter(state, depth, kind, alpha, beta)
            value = original(state, depth, alpha, beta, ply, 0)  # every node a call
            self.close(frame, self.show(value))
            if frame is not None and frame.node.kind in ("max", "min"):
                self._after(frame, value, alpha, beta)
            return value

        return node

    def _enter(
        self, state: State, depth: int, kind: str, alpha: float, beta: float
    ) -> Frame | None:
        agent: Any = self.agent
        me = self.root_state.player
        frame = self.enter(state, depth, kind, me, moves=())
        if frame is not None and frame.node.kind == kind:
            frame.expanded = False  # until _ordered hands out the moves
            entry = agent.table.get(state) if agent.use_tt else None
            if entry is not None:
                d, flag, value, tt_move, cut = entry
                frame.node.data["tt"] = {
                    "depth": d,
                    "bound": _BOUNDS[flag],
                    "value": self.show(value),
                    "move": None if tt_move is None else self.label(state, tt_move),
                    "usable": d >= depth or not cut,
                }
        if frame is not None:
            frame.node.data.update(alpha=self.show(alpha), beta=self.show(beta))
        return frame

    def _after(self, frame: Frame, value: float, alpha: float, beta: float) -> None:
        """What the node's loop did: answered from the table, cut off, or searched it all."""
        data = frame.node.data
        if not frame.expanded:
            data["tt"]["answered"] = True
            return
        if frame.searched < len(frame.moves):
            # the bound the loop tested: the entry window, narrowed by a table bound if any
            tt = data.get("tt")
            narrowed = tt is not None and tt["usable"] and tt["bound"] != "exact"
            if frame.node.kind == "max":
                bound = self.show(beta)
                if narrowed and tt is not None and tt["bound"] == "upper":
                    bound = min(bound, tt["value"])
                test = ">= beta"
            else:
                bound = self.show(alpha)
                if narrowed and tt is not None and tt["bound"] == "lower":
                    bound = max(bound, tt["value"])
                test = "<= alpha"
            data["cutoff"] = {
                "after": self.label(frame.state, frame.moves[frame.searched - 1]),
                "test": test,
                "v": self.show(value),
                "bound": bound,
            }
            data["pruned"] = self.pruned(frame)

    def _ordered(self, original: Any) -> Any:
        agent: Any = self.agent

        def ordered(state: State, tt_move: Move, ply: int) -> Any:
            killers = list(agent.killers[ply]) if ply < len(agent.killers) else []
            moves = original(state, tt_move, ply)
            frame = self.current()
            if frame is not None:
                frame.moves = list(moves)
                frame.expanded = True
                frame.node.data["order"] = self._reasons(state, moves, tt_move, killers)
            return moves

        return ordered

    def _reasons(
        self, state: State, moves: Any, tt_move: Move, killers: list[Move]
    ) -> list[dict[str, Any]]:
        """The moves the ordering put ahead of their place in the game's order, and why."""
        agent: Any = self.agent
        natural = list(state.actions())
        out: list[dict[str, Any]] = []
        for i, m in enumerate(moves):
            if natural.index(m) <= i:
                continue
            if m == tt_move:
                why = "tt"
            elif m in killers:
                why = "killer"
            else:
                why = f"history {agent.history.get(m, 0)}"
            out.append({"move": self.label(state, m), "why": why})
        return out


def describe(node: TraceNode, trace: Trace) -> str:
    text = leaf(node)
    if text is not None:
        return text
    text = f"{who(node, trace, node.kind.upper())} {window(node)} = {fmt(node.value)}"
    tt = node.data.get("tt")
    if tt is not None:
        if tt.get("answered"):
            text += f"  from the table ({tt['bound']} {fmt(tt['value'])}, depth {tt['depth']})"
        elif tt["usable"] and tt["bound"] != "exact":
            text += f"  table: {tt['bound']} bound {fmt(tt['value'])}"
    text += cutoff(node)
    order = node.data.get("order")
    if order:
        text += "  order: " + ", ".join(f"{o['move']} ({o['why']})" for o in order)
    return text
