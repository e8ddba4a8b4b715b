"""Tracing ``minimax``: MINIMAX-DECISION, MAX-VALUE and MIN-VALUE, every node with its value.

The nodes are the agent's own calls: the root is ``minimax_decision``, every other node a call of
``max_value`` or ``min_value`` (which answer UTILITY at a terminal state and eval(n) at the depth
limit themselves). Nothing is pruned, so the tree holds every node of the search.
"""

from __future__ import annotations

from typing import Any

from ply_arena.games import Move, State
from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt
from ply_arena.reference_agents.trace._recorder import Recorder
from ply_arena.reference_agents.trace._text import leaf, who

KINDS = {
    "max": "MAX-VALUE: MAX (the player to move at the root) takes the largest child value",
    "min": "MIN-VALUE: MIN takes the smallest child value",
    "terminal": "TERMINAL-TEST is true: the node is worth UTILITY(state) for MAX",
    "eval": "the depth limit (nivel máximo): eval(n) stands in for the value",
}


class MinimaxRecorder(Recorder):
    algorithm = "minimax"
    KINDS = KINDS

    def attach(self) -> None:
        agent: Any = self.agent
        self.patch(
            "minimax_decision", self.wrap_root(agent.minimax_decision, self._minimax_decision)
        )
        self.patch("max_value", self._value_node(agent.max_value, "max"))
        self.patch("min_value", self._value_node(agent.min_value, "min"))

    def _minimax_decision(
        self, original: Any, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[float, list[Move]]:
        return self.decision(original, state, depth, actions, window=False)

    def _value_node(self, original: Any, kind: str) -> Any:
        def node(state: State, depth: int, me: int) -> tuple[float, list[Move]]:
            frame = self.enter(state, depth, kind, me)
            result = original(state, depth, me)
            self.close(frame, self.show(result[0]))
            return result

        return node


def describe(node: TraceNode, trace: Trace) -> str:
    return leaf(node) or f"{who(node, trace, node.kind.upper())} = {fmt(node.value)}"
