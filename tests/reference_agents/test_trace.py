"""Search traces: Figure 6.5 drawn as in the notes, JSON form, limits."""

from __future__ import annotations

import json

import pytest

import games
from games.tree import TreeGame
from reference_agents.trace import TraceTooLarge, render_text, trace_search

FIG_6_5 = {
    "player": 0,
    "children": [
        {"player": 1, "label": "B", "children": [3, 12, 8]},
        {"player": 1, "label": "C", "children": [2, 4, 6]},
        {"player": 1, "label": "D", "children": [14, 5, 2]},
    ],
}


def test_figure_6_5_alphabeta_trace() -> None:
    tree = TreeGame(FIG_6_5)
    t = trace_search(tree, tree.initial_state())
    assert t.best == "B" and t.root.value == 3
    b, c, d = t.root.children
    assert [ch.value for ch in b.children] == [3, 12, 8]
    assert (c.alpha, c.value, c.cutoff, c.pruned) == (3, 2, True, ["1", "2"])
    assert [ch.value for ch in c.children] == [2]
    assert (d.alpha, d.value, d.cutoff) == (3, 2, False)
    assert sorted(tree.leaf_visits) == [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (2, 1), (2, 2)]
    text = render_text(t)
    assert text.splitlines()[0] == "MAX root [-inf, +inf] = 3  best B"
    assert "├── C: MIN [3, +inf] = 2  cut-off (2 <= alpha 3)" in text
    assert "│   └── pruned: 1, 2" in text


def test_json_form_round_trips_through_json() -> None:
    tree = TreeGame(FIG_6_5)
    data = json.loads(json.dumps(trace_search(tree, tree.initial_state()).as_json()))
    assert data["value"] == 3 and data["best"] == "B" and data["algorithm"] == "alphabeta"
    root = data["tree"]
    assert (root["alpha"], root["beta"]) == ("-inf", "+inf")
    assert root["children"][1]["pruned"] == ["1", "2"]
    assert data["nodes"] == 1 + (1 + 3) + (1 + 1) + (1 + 3)  # two leaves fewer than minimax


def test_minimax_trace_prunes_nothing() -> None:
    tree = TreeGame(FIG_6_5)
    t = trace_search(tree, tree.initial_state(), algorithm="minimax")
    assert t.root.value == 3 and t.nodes == 13
    assert not any(ch.pruned for ch in t.root.children)
    assert "[" not in render_text(t)  # no alpha-beta window in a minimax tree


def test_depth_limited_trace_shows_evaluations() -> None:
    g = games.get("tic_tac_toe")
    s = g.initial_state().result(4)
    t = trace_search(g, s, depth=2)
    assert t.root.kind == "max"  # MAX is whoever is to move at the root (here O)
    assert {ch.kind for ch in t.root.children} == {"min"}
    kinds = {gc.kind for ch in t.root.children for gc in ch.children}
    assert kinds == {"eval"}


def test_large_searches_are_refused() -> None:
    g = games.get("connect_four")
    with pytest.raises(TraceTooLarge, match="smaller --depth"):
        trace_search(g, g.initial_state(), depth=6, max_nodes=1000)
    with pytest.raises(ValueError, match="3 players"):
        trace_search(games.get("chinese_checkers"), games.get("chinese_checkers").initial_state())
