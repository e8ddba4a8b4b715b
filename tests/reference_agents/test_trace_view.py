"""What a trace shows and what it cuts: levels (--trace-depth), nodes (--trace-limit), and the
node budget that keeps a big search from filling the memory."""

from __future__ import annotations

import pytest

from ply_arena import games, reference_agents
from ply_arena.games.connect_four import state_from_moves
from ply_arena.reference_agents.trace import TraceNode, TraceTooLarge, View, record, render_text


def shown_json(node: dict[str, object]) -> list[dict[str, object]]:
    out = [node]
    for ch in node["children"]:  # type: ignore[attr-defined]
        out += shown_json(ch)
    return out


def test_levels_records_the_top_of_the_tree_and_counts_the_rest() -> None:
    g = games.get("connect_four")
    s = state_from_moves("4453")
    agent = reference_agents.make("alphabeta", g, depth=4, solver=False)
    _, _, t = record(agent, s, view=View(levels=1, limit=None))
    assert t.root is not None and {n.level for n in t.root.walk()} == {0, 1}
    assert t.root.size == t.iterations[-1]["nodes"] > 8  # every node counted, recorded or not
    assert all(ch.children == [] and ch.size > 1 for ch in t.root.children)
    below = t.root.size - 1 - len(t.root.children)
    text = render_text(t)
    assert f"not recorded: {below:,} nodes below level 1 (--trace-depth 1)" in text
    assert "nodes below (not recorded: --trace-depth)" in text
    # the cut-offs at level 1 are still told: the node knows how many moves it searched
    assert any("pruned" in ch.data for ch in t.root.children)


def test_limit_shows_the_first_nodes_level_by_level() -> None:
    g = games.get("tic_tac_toe")
    agent = reference_agents.make("minimax", g, depth=2)
    _, _, t = record(agent, g.initial_state(), view=View(limit=12))
    data = t.as_json()
    nodes = shown_json(data["tree"])
    assert len(nodes) == 12 == data["shown"]["nodes"]
    assert sorted(n["level"] for n in nodes) == [0] + [1] * 9 + [2] * 2  # type: ignore[type-var]
    hidden = sum(n["not_shown"]["nodes"] for n in nodes)  # type: ignore[index]
    assert hidden == data["shown"]["searched"] - 12 == 82 - 12
    header = data["shown"]["header"]
    assert header[0] == (
        "shown: 12 of the 82 nodes of the search, level by level from the root "
        "(--trace-limit 12): levels 0-1 in full, 2 of 72 nodes at level 2"
    )
    text = render_text(t)  # a3 shows 2 of its 8 children, the others none
    assert "│   └── … 6 more children, 6 nodes (not shown: --trace-limit)" in text
    assert "    └── … 8 more children, 8 nodes (not shown: --trace-limit)" in text


def test_a_fixed_depth_search_past_the_budget_is_refused_with_what_to_do() -> None:
    g = games.get("connect_four")
    agent = reference_agents.make("minimax", g, depth=8)
    with pytest.raises(TraceTooLarge, match=r"went past 2,000 nodes.*smaller --depth"):
        record(agent, g.initial_state(), view=View(budget=2000))
    assert "max_value" not in vars(agent)  # the agent is itself again
    mcts = reference_agents.make("mcts", g, simulations=500, seed=1)
    with pytest.raises(TraceTooLarge, match=r"past 100 simulations.*fewer simulations"):
        record(mcts, g.initial_state(), view=View(budget=100))


def test_under_a_time_limit_the_budget_stops_the_search_as_its_clock_would() -> None:
    g = games.get("connect_four")
    agent = reference_agents.make("alphabeta", g, solver=False, seed=0)
    move, info, t = record(agent, g.initial_state(), 60.0, View(budget=3000))
    assert any("budget of 3,000 nodes" in note for note in t.notes)
    assert t.iterations[-1].get("unfinished") and sum(it["nodes"] for it in t.iterations) <= 3000
    assert info.depth == max(it["depth"] for it in t.iterations if not it.get("unfinished"))
    assert move in g.initial_state().actions()
    mcts = reference_agents.make("mcts", g, seed=0)
    _, info, t = record(mcts, g.initial_state(), 60.0, View(budget=200))
    assert info.nodes == 200 and any("200 simulations" in note for note in t.notes)


def test_view_values_are_checked() -> None:
    with pytest.raises(ValueError, match="limit"):
        View(limit=0)
    with pytest.raises(ValueError):
        View(budget=0)
    assert isinstance(TraceNode(0, None, "max", 0, None).walk(), list)
