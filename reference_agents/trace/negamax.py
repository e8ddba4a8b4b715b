"""Tracing ``negamax``: every node scored for the player to move there, and the sign flip.

The nodes are the agent's own calls: the root is ``negamax_root``, every other node a call of
``_child``, which scores one successor for the player choosing above it: UTILITY for that player
at a terminal state, else ``-NEGAMAX(child, -beta, -alpha)`` (or, when the same player moves
again, NEGAMAX without the flip). A node shows its value for its own player to move, the window
it was searched with (in that player's terms) and what its parent received: "backed up
-(-3) = 3". Fail-hard as the slide: a node that cut off returns alpha, and the rest of its moves
were pruned.
"""

from __future__ import annotations

import math
from typing import Any

from ply_arena.games import Move, State
from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt
from ply_arena.reference_agents.trace._recorder import Recorder
from ply_arena.reference_agents.trace._text import who, window

KINDS = {
    "negamax": "NEGAMAX(node, alpha, beta): the value for the player to move there, the largest "
    "of its children's values negated; stops when alpha >= beta",
    "terminal": "TERMINAL-TEST is true: UTILITY(state) for the player who moved into it",
    "eval": "the depth limit: h(n) = eval(n) for the player to move there",
}


class NegamaxRecorder(Recorder):
    algorithm = "negamax"
    KINDS = KINDS

    def attach(self) -> None:
        agent: Any = self.agent
        self.patch("negamax_root", self.wrap_root(agent.negamax_root, self._root))
        self.patch("_child", self._child(agent._child))

    def values_of(self) -> str:
        return (
            "the player to move at each node (negamax); 'backed up' is the value its parent "
            "received, for the parent's player"
        )

    def _root(
        self, original: Any, state: State, depth: int, moves: list[Move]
    ) -> tuple[float, list[Move]]:
        frame = self.begin(state, depth, "negamax", list(moves), state.player)
        frame.node.data.update(alpha=-math.inf, beta=math.inf)
        value, pv = original(state, depth, moves)
        self.end(frame, self.show(value), pv[0] if pv else None)
        return value, pv

    def _child(self, original: Any) -> Any:
        def child(
            state: State, depth: int, alpha: float, beta: float, seat: int
        ) -> tuple[float, list[Move]]:
            terminal = state.is_terminal()
            negated = not terminal and state.player != seat
            frame = self.enter(state, depth, "negamax", state.player)
            if frame is not None and not terminal:
                lo, hi = (-beta, -alpha) if negated else (alpha, beta)
                frame.node.data.update(alpha=self.show(lo), beta=self.show(hi))
            val, pv = original(state, depth, alpha, beta, seat)
            backed = self.show(val)
            own = -backed if negated else backed  # the value for the player to move there
            self.close(frame, backed if terminal else own)
            if frame is not None:
                data = frame.node.data
                if terminal:
                    data["for"] = self.players[seat]
                data.update(backed_up=backed, negated=negated)
                if frame.node.kind == "negamax" and frame.searched < len(frame.moves):
                    data["cutoff"] = {
                        "after": self.label(state, frame.moves[frame.searched - 1]),
                        "test": ">= beta",
                        "v": own,
                        "bound": data["beta"],
                    }
                    data["pruned"] = self.pruned(frame)
            return val, pv

        return child


def describe(node: TraceNode, trace: Trace) -> str:
    data = node.data
    if node.kind == "terminal":
        return f"UTILITY = {fmt(node.value)} for {data.get('for')}"
    if node.kind == "eval":
        e = data.get("eval")
        text = f"h(n) {window(node)} = " + (
            f"{e['formula'].split(' = ')[0]} = {e['text']}" if e else fmt(node.value)
        )
    else:
        text = f"{who(node, trace, 'NEGAMAX')} {window(node)} = {fmt(node.value)}"
    if node.level > 0:
        if data.get("negated"):
            text += f"  backed up -({fmt(node.value)}) = {fmt(data.get('backed_up'))}"
        else:
            text += "  backed up as it is (the same player moves again)"
    c = data.get("cutoff")
    if c:
        text += f"  cut-off (alpha {fmt(c['v'])} >= beta {fmt(c['bound'])})"
    return text
