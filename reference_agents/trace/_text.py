"""Pieces of a node's line that several algorithms share."""

from __future__ import annotations

from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt


def leaf(node: TraceNode) -> str | None:
    """UTILITY at a terminal state, eval(n) at the depth limit (with the notes' formula when
    the trace has it); None for an inner node."""
    if node.kind == "terminal":
        return f"UTILITY = {fmt(node.value)}"
    if node.kind == "eval":
        e = node.data.get("eval")
        if e is None:
            return f"eval(n) = {fmt(node.value)}"
        name = e["formula"].split(" = ")[0]
        if e.get("vector"):
            # max^n: each seat's evaluation, as MAX, and the vector they make.
            return f"eval {name} for each seat: {e['text']} → {fmt(node.value)}"
        line = f"eval {name} = {e['text']}" + (
            f" for {e['for']}" if e["text"].split(" = ")[-1] != fmt(node.value) else ""
        )
        if isinstance(node.value, (list, tuple)):
            # max^n: the vector the evaluation gives, one value per seat.
            line += f" → {fmt(node.value)}"
        return line
    return None


def who(node: TraceNode, trace: Trace, name: str) -> str:
    """``MAX (X)``: the node's role, and its player when the game names its seats (the
    explicit trees of ``ply_arena.games.tree`` do not: MAX and MIN say it all, as in the notes'
    figures)."""
    named = trace.game != "tree"
    return f"{name} ({node.player})" if named and node.player else name


def window(node: TraceNode) -> str:
    return f"[{fmt(node.data.get('alpha'))}, {fmt(node.data.get('beta'))}]"


def cutoff(node: TraceNode) -> str:
    """``cut-off (2 <= alpha 3)``: the test that stopped a node's loop, if one did."""
    c = node.data.get("cutoff")
    if not c:
        return ""
    return f"  cut-off ({fmt(c['v'])} {c['test']} {fmt(c['bound'])})"
