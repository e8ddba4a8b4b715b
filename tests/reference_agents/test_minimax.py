"""minimax: the notes' MINIMAX-DECISION on tic-tac-toe and Figure 6.5, limits and refusals."""

from __future__ import annotations

import pytest
from _timing import within_limit

from ply_arena import games, reference_agents
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.minimax import MinimaxAgent

FIG_6_5 = {
    "player": 0,
    "children": [
        {"player": 1, "label": "a1", "children": [3, 12, 8]},
        {"player": 1, "label": "a2", "children": [2, 4, 6]},
        {"player": 1, "label": "a3", "children": [14, 5, 2]},
    ],
}


def test_tic_tac_toe_is_a_draw_and_every_first_move_draws() -> None:
    g = games.get("tic_tac_toe")
    s0 = g.initial_state()
    agent = MinimaxAgent(g, depth=9)
    _, info = agent.choose(s0)
    assert info.score == 0.0 and info.depth == 9
    # the value of each first move: MIN-VALUE of the position after it, searched to the end
    values = {g.format_move(s0, a): agent.min_value(s0.result(a), 8, 0)[0] for a in s0.actions()}
    assert values == {name: 0.0 for name in ("a3", "b3", "c3", "a2", "b2", "c2", "a1", "b1", "c1")}


def test_figure_6_5_value_3_best_first_all_leaves_read() -> None:
    tree = TreeGame(FIG_6_5)
    move, info = reference_agents.make("minimax", tree, depth=2).choose(tree.initial_state())
    assert (move, info.score, info.pv) == (0, 3.0, [0, 0])
    # minimax has no pruning: all nine leaves are read
    assert sorted(tree.leaf_visits) == [(i, j) for i in range(3) for j in range(3)]


def test_takes_a_win_and_blocks_a_loss_in_tic_tac_toe() -> None:
    g = games.get("tic_tac_toe")
    win = g.initial_state()
    for m in ("a3", "a1", "b3", "b1"):  # X: a3 b3, O: a1 b1; X to move wins at c3
        win = win.result(g.parse_move(win, m))
    move, info = MinimaxAgent(g, depth=3).choose(win)
    assert g.format_move(win, move) == "c3" and info.score == 1.0
    block = g.initial_state()
    for m in ("a3", "a1", "b3"):  # O to move must block c3
        block = block.result(g.parse_move(block, m))
    move, _ = MinimaxAgent(g, depth=2).choose(block)
    assert g.format_move(block, move) == "c3"


def test_reproducible_with_a_seed_and_seed_breaks_ties() -> None:
    g = games.get("tic_tac_toe")
    s = g.initial_state()
    runs = [MinimaxAgent(g, depth=2, seed=7).choose(s) for _ in range(2)]
    assert runs[0][0] == runs[1][0] and runs[0][1].pv == runs[1][1].pv
    moves = {MinimaxAgent(g, depth=1, seed=k).choose(s.result(4))[0] for k in range(20)}
    assert len(moves) > 1  # four corners tie at depth 1: the seed picks among them


def test_returns_within_its_time_limit() -> None:
    g = games.get("connect_four")
    agent = MinimaxAgent(g)
    move, info = within_limit(lambda: agent.choose(g.initial_state(), time_limit=0.3), 0.3)
    assert move in g.initial_state().actions() and info.depth >= 2


@pytest.mark.parametrize(
    ("game_name", "why"), [("backgammon", "chance nodes"), ("chinese_checkers", "3 players")]
)
def test_refuses_games_that_are_not_two_player_deterministic(game_name: str, why: str) -> None:
    reason = MinimaxAgent.refusal(games.get(game_name))
    assert reason is not None and why in reason


def test_rejects_unknown_options() -> None:
    with pytest.raises(ValueError, match="does not take"):
        reference_agents.make("minimax", games.get("tic_tac_toe"), dpeth=3)
