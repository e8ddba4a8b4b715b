"""Tracing ``expectiminimax``: MAX, MIN and RAND (chance) nodes, Star1 cut-offs.

The nodes are the agent's own calls: the root is ``expectiminimax_decision``, every other node a
call of ``value``, the notes' case analysis (terminal, depth limit, RAND, MAX, MIN). A RAND node
shows each outcome's probability and the weighted sum it backs up, "1/2×1 + 1/2×4 = 2.5"; with
Star1 pruning on, a RAND node whose value is already known to lie outside [alpha, beta] stops,
and its sum ends with the bound it used for the outcomes it skipped ("0.2×(at most 10)").
MAX and MIN nodes prune as alpha-beta does (fail-soft).
"""

from __future__ import annotations

import math
from typing import Any

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt, prob
from ply_arena.reference_agents.trace._recorder import Frame, Recorder
from ply_arena.reference_agents.trace._text import cutoff, leaf, who, window

KINDS = {
    "max": "a MAX node: the largest value of its successors (cut when v >= beta)",
    "min": "a MIN node: the smallest value of its successors (cut when v <= alpha)",
    "chance": "a RAND node (the dice): sum over the outcomes s of p(s) x value(s); Star1 stops "
    "once the sum is sure to fall outside [alpha, beta]",
    "terminal": "TERMINAL-TEST is true: the node is worth UTILITY(state) for MAX",
    "eval": "the depth limit: eval(n), an estimate of the expected utility",
}


class ExpectiminimaxRecorder(Recorder):
    algorithm = "expectiminimax"
    KINDS = KINDS

    def attach(self) -> None:
        agent: Any = self.agent
        self.patch(
            "expectiminimax_decision",
            self.wrap_root(agent.expectiminimax_decision, self._decision),
        )
        self.patch("value", self._value(agent.value))

    def options(self) -> dict[str, Any]:
        agent: Any = self.agent
        return {"depth": agent.depth, "pruning": agent.pruning}

    def _decision(
        self, original: Any, state: State, depth: int, actions: list[Move] | None = None
    ) -> tuple[float, list[Move]]:
        return self.decision(original, state, depth, actions)

    def _value(self, original: Any) -> Any:
        def value(
            state: State, depth: int, me: int, alpha: float, beta: float
        ) -> tuple[float, list[Move]]:
            if state.player == games.CHANCE and depth > 0 and not state.is_terminal():
                outcomes = state.chance_outcomes()
                frame = self.open(
                    "chance", state, None, [o for o, _ in outcomes], [p for _, p in outcomes]
                )
            else:
                frame = self.enter(state, depth, "max" if state.player == me else "min", me)
            if frame is not None and frame.node.kind not in ("terminal", "eval"):
                frame.node.data.update(alpha=self.show(alpha), beta=self.show(beta))
            result = original(state, depth, me, alpha, beta)
            self.close(frame, self.show(result[0]))
            if frame is not None:
                self._after(frame, result[0], alpha, beta)
            return result

        return value

    def _after(self, frame: Frame, value: float, alpha: float, beta: float) -> None:
        node = frame.node
        cut = frame.searched < len(frame.moves)
        if node.kind == "chance":
            assert frame.probs is not None
            terms = [
                f"{prob(p)}×{_factor(v)}"
                for p, v in zip(frame.probs, frame.child_values, strict=False)
            ]
            if cut:
                rest = sum(frame.probs[frame.searched :])
                # which side Star1 stopped on (a hair of rounding allowed: the agent tests
                # the outcome's value against its own window, not the sum against alpha)
                upper = not math.isinf(alpha) and value <= alpha + 1e-9 * (1 + abs(alpha))
                bound = self.game.max_utility if upper else self.game.min_utility
                side = "most" if upper else "least"
                terms.append(f"{prob(rest)}×(at {side} {fmt(self.show(float(bound)))})")
                node.data["star1"] = {
                    "after": self.label(frame.state, frame.moves[frame.searched - 1]),
                    "bound": "upper" if upper else "lower",
                    "rest": rest,
                    "test": "<= alpha" if upper else ">= beta",
                    "v": self.show(value),
                    "window": self.show(alpha if upper else beta),
                }
                node.data["pruned"] = self.pruned(frame)
            node.data["weighted"] = " + ".join(terms)
        elif node.kind in ("max", "min") and cut:
            node.data["cutoff"] = {
                "after": self.label(frame.state, frame.moves[frame.searched - 1]),
                "test": ">= beta" if node.kind == "max" else "<= alpha",
                "v": self.show(value),
                "bound": self.show(beta if node.kind == "max" else alpha),
            }
            node.data["pruned"] = self.pruned(frame)


def describe(node: TraceNode, trace: Trace) -> str:
    text = leaf(node)
    if text is None and node.kind == "chance":
        text = f"CHANCE {window(node)} = {_weighted(node)} = {fmt(node.value)}"
        s = node.data.get("star1")
        if s:
            text += f"  Star1 cut-off ({fmt(s['v'])} {s['test']} {fmt(s['window'])})"
    elif text is None:
        text = f"{who(node, trace, node.kind.upper())} {window(node)} = {fmt(node.value)}"
        text += cutoff(node)
    p = node.data.get("probability")
    return f"p={prob(p)} {text}" if p is not None else text


#: Terms of a weighted sum written out in a text line (the JSON has them all).
_TERMS_SHOWN = 4


def _weighted(node: TraceNode) -> str:
    """The RAND node's sum; a long one (backgammon's 21 rolls) keeps its first terms, the
    bound Star1 used, and says how many it leaves out."""
    terms = node.data.get("weighted", "").split(" + ")
    if len(terms) <= _TERMS_SHOWN + 1:
        return " + ".join(terms)
    tail = terms[-1] if node.data.get("star1") else None
    head = terms[: _TERMS_SHOWN - 1]
    left = len(terms) - len(head) - (1 if tail else 0)
    return " + ".join([*head, f"… ({left} more)", *([tail] if tail else [])])


def _factor(v: Any) -> str:
    """A value multiplied by a probability: in brackets when negative, "1/36×(-0.5)"."""
    return f"({fmt(v)})" if isinstance(v, int | float) and v < 0 else fmt(v)
