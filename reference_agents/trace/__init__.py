"""Search traces: the tree of the search an agent ran, drawn as the notes draw it.

``record(agent, state, time_limit)`` runs ``agent.choose`` once with a recorder attached and
returns the move, the SearchInfo and the ``Trace`` of that very search: same algorithm, depth and
options, and the answer comes from it. The recorder wraps the agent's own search methods for that
one call (see ``_recorder``), so nothing is re-implemented and an agent that is not traced pays
nothing. Every reference agent but ``random`` can be traced; each has its module here, named
after it.

Figure 6.5 of the notes (chapter 6 of Russell & Norvig), traced with ``alphabeta``: two leaves
under C are never read::

    >>> from ply_arena.games.tree import TreeGame
    >>> from ply_arena import reference_agents
    >>> fig65 = TreeGame({"player": 0, "children": [
    ...     {"player": 1, "label": "B", "children": [3, 12, 8]},
    ...     {"player": 1, "label": "C", "children": [2, 4, 6]},
    ...     {"player": 1, "label": "D", "children": [14, 5, 2]}]})
    >>> agent = reference_agents.make("alphabeta", fig65, depth=2, order=False, tt=False)
    >>> move, info, trace = record(agent, fig65.initial_state())
    >>> text = render_text(trace).splitlines()
    >>> print(text[0])  # doctest: +NORMALIZE_WHITESPACE
    alphabeta (depth=2, order=false, tt=false, solver=false) on tree:
    best B, value 3, depth 2, 15 nodes
    >>> print("\\n".join(text[text.index("shown: all 11 nodes of the search") + 2:]))
    root: MAX [-inf, +inf] = 3  best B
    ├── B: MIN [-inf, +inf] = 3
    │   ├── 0: UTILITY = 3
    │   ├── 1: UTILITY = 12
    │   └── 2: UTILITY = 8
    ├── C: MIN [3, +inf] = 2  cut-off (2 <= alpha 3)
    │   ├── 0: UTILITY = 2
    │   └── pruned: 1, 2
    └── D: MIN [3, +inf] = 2
        ├── 0: UTILITY = 14
        ├── 1: UTILITY = 5
        └── 2: UTILITY = 2

``trace.as_json()`` is the same tree as data (docs/agents.md, "Traces", documents the shape).
"""

from __future__ import annotations

from typing import Any

from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import Agent, SearchInfo
from ply_arena.reference_agents.trace._model import (
    DEFAULT_BUDGET,
    DEFAULT_LIMIT,
    FORMAT,
    Trace,
    TraceNode,
    TraceTooLarge,
    View,
)
from ply_arena.reference_agents.trace._recorder import Recorder
from ply_arena.reference_agents.trace.render import render_text

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_LIMIT",
    "FORMAT",
    "Trace",
    "TraceNode",
    "TraceTooLarge",
    "View",
    "record",
    "recorder_for",
    "render_text",
]


def recorder_for(agent: Agent, state: State, view: View) -> Recorder:
    """The recorder of ``agent``'s algorithm; ValueError for an agent without a search tree."""
    from ply_arena.reference_agents.trace.alphabeta import AlphaBetaRecorder
    from ply_arena.reference_agents.trace.expectiminimax import ExpectiminimaxRecorder
    from ply_arena.reference_agents.trace.maxn import MaxNRecorder
    from ply_arena.reference_agents.trace.mcts import MCTSRecorder
    from ply_arena.reference_agents.trace.minimax import MinimaxRecorder
    from ply_arena.reference_agents.trace.negamax import NegamaxRecorder

    recorders: dict[str, type[Recorder]] = {
        r.algorithm: r
        for r in (
            AlphaBetaRecorder,
            ExpectiminimaxRecorder,
            MaxNRecorder,
            MCTSRecorder,
            MinimaxRecorder,
            NegamaxRecorder,
        )
    }
    cls = recorders.get(agent.name)
    if cls is None:
        raise ValueError(
            f"agent {agent.name!r} has no search tree to trace; traced agents: "
            f"{', '.join(sorted(recorders))}"
        )
    return cls(agent, state, view)


def record(
    agent: Agent,
    state: State,
    time_limit: float | None = None,
    view: View | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[Move, SearchInfo, Trace]:
    """``agent.choose(state, time_limit)`` with its search recorded.

    ``view`` says how much to record and show (levels, nodes, MCTS simulations, the node budget).
    A search past the budget is stopped: under a time limit as its clock would stop it (the answer
    is then the deepest depth it finished, and the trace says so), at a fixed depth by
    TraceTooLarge, instead of filling the memory. ``options``
    (e.g. the agent's spec) are added to the trace's description of the search.
    """
    if state.is_terminal() or state.is_chance_node():
        raise ValueError("a trace needs a position where a player is to move")
    recorder = recorder_for(agent, state, view or View())
    recorder.timed = time_limit is not None or getattr(agent, "move_time", None) is not None
    recorder.attach()
    try:
        move, info = agent.choose(state, time_limit)
    finally:
        recorder.detach()
    return move, info, recorder.finish(move, info, dict(options or {}))
