"""A trace as text: a few header lines (what was searched, what the values are, what is shown
and what was cut), then the tree drawn with box characters, one node a line."""

from __future__ import annotations

from collections.abc import Callable

from ply_arena.reference_agents.trace._model import Trace, TraceNode, fmt

Describe = Callable[[TraceNode, Trace], str]
#: Pruned moves written out on a line (the JSON has them all).
_PRUNED_SHOWN = 8


def describer(algorithm: str) -> Describe:
    """The algorithm's one-line description of a node, as the text trace writes it."""
    from ply_arena.reference_agents.trace import (
        alphabeta,
        expectiminimax,
        maxn,
        mcts,
        minimax,
        negamax,
    )

    modules = {
        "alphabeta": alphabeta,
        "expectiminimax": expectiminimax,
        "maxn": maxn,
        "mcts": mcts,
        "minimax": minimax,
        "negamax": negamax,
    }
    return modules[algorithm].describe


def render_text(trace: Trace) -> str:
    """The header and the tree, as ``arena analyze --trace`` prints them."""
    if not trace.shown_ids:
        trace.select()
    describe = describer(trace.algorithm)
    options = ", ".join(f"{k}={_opt(v)}" for k, v in trace.options.items() if v is not None)
    a = trace.answer
    scaled = trace.values["scale"] != 1.0 and a["agent_value"] is not None
    agent_value = f" (the agent's {fmt(a['agent_value'])})" if scaled else ""
    lines = [
        f"{trace.algorithm} ({options}) on {trace.game}: best {a['move']}, "
        f"value {fmt(a['value'])}{agent_value}, depth {a['depth']}, {a['nodes']:,} nodes",
        f"values: {trace.values['of']}; units: {trace.values['units']}",
    ]
    if len(trace.iterations) > 1:
        lines.append("iterations: " + "; ".join(_iteration(it) for it in trace.iterations))
    lines += trace.header()
    lines += [f"note: {n}" for n in trace.notes]
    root = trace.root
    if root is not None:
        best = root.data.get("best")
        lines.append("root: " + describe(root, trace) + (f"  best {best}" if best else ""))
        _walk(root, "", trace, describe, lines)
    if trace.simulations:
        from ply_arena.reference_agents.trace.mcts import simulations_text

        lines.append("")
        lines += simulations_text(trace)
    return "\n".join(lines)


def _walk(node: TraceNode, prefix: str, trace: Trace, describe: Describe, out: list[str]) -> None:
    shown = [ch for ch in node.children if ch.id in trace.shown_ids]
    items: list[TraceNode | str] = list(shown)
    hidden = [ch for ch in node.children if ch.id not in trace.shown_ids]
    if hidden:
        nodes = sum(ch.size for ch in hidden)
        items.append(
            f"… {len(hidden)} more {'child' if len(hidden) == 1 else 'children'}, "
            f"{nodes:,} {'node' if nodes == 1 else 'nodes'} (not shown: --trace-limit)"
        )
    below = node.size - 1 - sum(ch.size for ch in node.children)
    if below and not node.children:
        items.append(f"… {below:,} nodes below (not recorded: --trace-depth)")
    pruned = node.data.get("pruned")
    if pruned:  # after the children: the search met them first
        shown_moves = pruned if len(pruned) <= _PRUNED_SHOWN else pruned[: _PRUNED_SHOWN - 1]
        more = f", … ({len(pruned)} in all)" if len(shown_moves) < len(pruned) else ""
        items.append("pruned: " + ", ".join(shown_moves) + more)
    for i, item in enumerate(items):
        last = i == len(items) - 1
        branch = "└── " if last else "├── "
        if isinstance(item, str):
            out.append(prefix + branch + item)
        else:
            out.append(f"{prefix}{branch}{item.move}: {describe(item, trace)}")
            _walk(item, prefix + ("    " if last else "│   "), trace, describe, out)


def _iteration(it: dict[str, object]) -> str:
    if it.get("unfinished"):
        return f"depth {it['depth']} unfinished ({it['nodes']:,} nodes)"
    return f"depth {it['depth']} best {it['best']} = {fmt(it['value'])} ({it['nodes']:,} nodes)"


def _opt(v: object) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return fmt(v)
    return str(v)
