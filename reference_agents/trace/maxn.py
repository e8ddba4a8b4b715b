"""Tracing ``maxn``: value vectors, who maximises where, shallow cut-offs; or the paranoid search.

The nodes are the agent's own calls. Max^n: the root is ``maxn_decision``, every other node a call
of ``maxn_value``, which backs up "the utility vector of whichever successor has the highest value
for the player choosing" (notes 004). A node shows its vector and whose choice it is; with
shallow pruning (constant-sum games) a node stops as soon as its player's share leaves the player
above it no more than that player already has, and says so: "B has 5, which leaves A at most
10 - 5 = 5, and A has 6". Paranoid (``paranoid=true``): the root is ``paranoid_decision``, the
nodes ``paranoid_value``: MAX (the player to move at the root) against everybody else as one
coalition of MINs, with alpha-beta windows and cut-offs.
"""

from __future__ import annotations

from typing import Any

from ply_arena.games import Move, State
from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt
from ply_arena.reference_agents.trace._recorder import Recorder
from ply_arena.reference_agents.trace._text import cutoff, leaf, window

KINDS = {
    "choice": "max^n: the player to move takes the successor whose vector is best for itself",
    "max": "paranoid: MAX, the player to move at the root, takes the largest of its values",
    "min": "paranoid: one of the coalition against MAX, taking the smallest of MAX's values",
    "terminal": "TERMINAL-TEST is true: UTILITY(state) of every player",
    "eval": "the depth limit: eval(n), one estimate per player",
}


class MaxNRecorder(Recorder):
    algorithm = "maxn"
    KINDS = KINDS

    def attach(self) -> None:
        agent: Any = self.agent
        self.patch("maxn_decision", self.wrap_root(agent.maxn_decision, self._maxn_decision))
        self.patch("maxn_value", self._maxn_value(agent.maxn_value))
        self.patch(
            "paranoid_decision", self.wrap_root(agent.paranoid_decision, self._paranoid_decision)
        )
        self.patch("paranoid_value", self._paranoid_value(agent.paranoid_value))

    def options(self) -> dict[str, Any]:
        agent: Any = self.agent
        return {
            "depth": agent.depth,
            "paranoid": agent.paranoid,
            "pruning": agent.shallow or agent.alphabeta,
        }

    def values_of(self) -> str:
        me = self.players[self.root_state.player]
        agent: Any = self.agent
        if agent.paranoid:
            others = ", ".join(p for p in self.players if p != me)
            return f"MAX's ({me}, to move at the root); {others} minimise it as one coalition"
        return "every player's utility, a vector in seat order (" + ", ".join(self.players) + ")"

    def units(self) -> str:
        base = super().units()
        if self.form is None or self.game.num_players != 2:
            return base
        # The notes write E(n) for MAX against MIN; a vector gives each seat its own view.
        return (
            f"{base}; in the vector each seat's entry is E(n) from its own side (its open lines "
            "minus the other's), the leaf's line shows the side to move"
        )

    def root_value(self, root: TraceNode) -> float | None:
        value = root.value
        if isinstance(value, tuple):
            return value[self.root_state.player]
        return super().root_value(root)

    # -- max^n ------------------------------------------------------------------------------

    def _maxn_decision(
        self, original: Any, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[tuple[float, ...], list[Move]]:
        return self.decision(original, state, depth, actions, kind="choice", window=False)

    def _maxn_value(self, original: Any) -> Any:
        agent: Any = self.agent

        def maxn_value(
            state: State, depth: int, parent_best: float
        ) -> tuple[tuple[float, ...], list[Move]]:
            above = self.current()
            parent_player = above.node.player if above is not None else None
            frame = self.enter(state, depth, "choice", self.root_state.player, vector=True)
            vector, line = original(state, depth, parent_best)
            self.close(frame, self.show(vector))
            if frame is not None and frame.searched < len(frame.moves):
                has = vector[state.player]
                frame.node.data["cutoff"] = {
                    "kind": "shallow",
                    "after": self.label(state, frame.moves[frame.searched - 1]),
                    "has": self.show(has),
                    "total": self.show(agent._leave),  # S - (n - 2) L
                    "leaves": self.show(agent._leave - has),
                    "parent": parent_player,
                    "parent_has": self.show(parent_best),
                }
                frame.node.data["pruned"] = self.pruned(frame)
            return vector, line

        return maxn_value

    # -- paranoid ---------------------------------------------------------------------------

    def _paranoid_decision(
        self, original: Any, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[float, list[Move]]:
        return self.decision(original, state, depth, actions)

    def _paranoid_value(self, original: Any) -> Any:
        def paranoid_value(
            state: State, depth: int, me: int, alpha: float, beta: float
        ) -> tuple[float, list[Move]]:
            frame = self.enter(state, depth, "max" if state.player == me else "min", me)
            if frame is not None and frame.node.kind in ("max", "min"):
                frame.node.data.update(alpha=self.show(alpha), beta=self.show(beta))
            value, line = original(state, depth, me, alpha, beta)
            self.close(frame, self.show(value))
            if frame is not None and frame.searched < len(frame.moves):
                is_max = frame.node.kind == "max"
                frame.node.data["cutoff"] = {
                    "after": self.label(state, frame.moves[frame.searched - 1]),
                    "test": ">= beta" if is_max else "<= alpha",
                    "v": self.show(value),
                    "bound": self.show(beta if is_max else alpha),
                }
                frame.node.data["pruned"] = self.pruned(frame)
            return value, line

        return paranoid_value


def describe(node: TraceNode, trace: Trace) -> str:
    text = leaf(node)
    if text is not None:
        return text
    if node.kind == "choice":
        text = f"{node.player} chooses {fmt(node.value)}"
        c = node.data.get("cutoff")
        if c:
            above = c["parent"] or "the player above"
            text += (
                f"  shallow cut-off ({node.player} has {fmt(c['has'])}, which leaves {above} "
                f"at most {fmt(c['total'])} - {_paren(c['has'])} = {fmt(c['leaves'])}, "
                f"and it has {fmt(c['parent_has'])})"
            )
        return text
    role = "MAX" if node.kind == "max" else "MIN, coalition"
    return f"{role} ({node.player}) {window(node)} = {fmt(node.value)}" + cutoff(node)


def _paren(x: float) -> str:
    """A value to subtract: in brackets when negative, "0 - (-2)"."""
    return f"({fmt(x)})" if x < 0 else fmt(x)
