"""mcts: tactical positions of every game (take the win, stop the loss), the anytime loop, seeds."""

from __future__ import annotations

from typing import Any

import pytest
from _timing import within_limit

from ply_arena import games
from ply_arena.games import State
from ply_arena.reference_agents.mcts import MCTSAgent


def _play(game: games.Game, moves: str) -> State:
    s = game.initial_state()
    for text in moves.split():
        s = s.result(game.parse_move(s, text))
    return s


def _backgammon(points: dict[int, int], bar: list[int], off: list[int], dice: list[int]) -> State:
    board = [0] * 24
    for point, count in points.items():  # white's point numbers; black's checkers negative
        board[point - 1] = count
    return games.get("backgammon").state_from_json(
        {
            "points": board,
            "bar": bar,
            "off": off,
            "player": 0,
            "turn": 0,
            "dice": dice,
            "opening": False,
        }
    )


def _othello(rows: list[str], player: int) -> State:
    return games.get("othello").state_from_json({"board": rows, "player": player})


def _chinese_checkers(red: str, green: str, blue: str) -> State:
    return games.get("chinese_checkers").state_from_json(
        {"pieces": [red.split(), green.split(), blue.split()], "player": 0, "ply": 60}
    )


HOMES_GREEN = "j10 k10 k11 l10 l11 l12 m10 m11 m12 m13"
HOMES_BLUE = "j1 k1 k2 l1 l2 l3 m1 m2 m3 m4"

# (game, position, the only right moves, what it shows)
TACTICS: list[tuple[str, Any, set[str], str]] = [
    ("tic_tac_toe", lambda: _play(games.get("tic_tac_toe"), "a1 b1 a2 b2"), {"a3"}, "win"),
    ("tic_tac_toe", lambda: _play(games.get("tic_tac_toe"), "a1 b2 a2"), {"a3"}, "block"),
    ("connect_four", lambda: _play(games.get("connect_four"), "1 2 1 2 1 2"), {"1"}, "win"),
    ("connect_four", lambda: _play(games.get("connect_four"), "1 2 1 2 1"), {"1"}, "block"),
    # Black d3 flips d4 (with d5) and e4 (with f5): White is wiped out
    (
        "othello",
        lambda: _othello(
            [
                "........",
                "........",
                "........",
                "...WW...",
                "...BBB..",
                "........",
                "........",
                "........",
            ],
            0,
        ),
        {"d3"},
        "win",
    ),
    # White's only disc is d5; four of its five moves let Black wipe it out next, f3 does not
    (
        "othello",
        lambda: _othello(
            [
                "........",
                "........",
                "........",
                "...BBB..",
                "..BWB...",
                "...B.B..",
                "........",
                "........",
            ],
            1,
        ),
        {"f3"},
        "block",
    ),
    # a race: White bears off its last two checkers with 6-5; anything else and Black (one
    # checker left on its 1-point) bears off first
    (
        "backgammon",
        lambda: _backgammon({6: 1, 5: 1, 24: -1}, [0, 0], [13, 14], [6, 5]),
        {"6/off 5/off"},
        "win",
    ),
    # Black will bear off its last checker next turn unless White, on the bar, hits it with the 1
    (
        "backgammon",
        lambda: _backgammon({6: 2, 24: -1}, [1, 0], [12, 14], [3, 1]),
        {"bar/24*/21", "bar/24* 6/3"},
        "block",
    ),
    # Red's tenth piece steps into the last hole of its target
    (
        "chinese_checkers",
        lambda: _chinese_checkers("n2 n3 n4 o1 o2 o3 p1 p2 q1 m5", HOMES_GREEN, HOMES_BLUE),
        {"m5-n1"},
        "win",
    ),
    # Green fills its target with f4-e4 next unless Red takes e4 first (Red trails Blue, so a
    # Green win leaves Red last)
    (
        "chinese_checkers",
        lambda: _chinese_checkers(
            "e5 h6 h7 h8 h9 g6 g7 g8 g9 f8",
            "e1 e2 e3 f1 f2 f3 g1 g2 h1 f4",
            "k1 k2 k3 k4 k5 k6 k7 k8 k9 k10",
        ),
        {"e5-e4"},
        "block",
    ),
]


@pytest.mark.parametrize(
    ("game_name", "position", "right", "what"),
    TACTICS,
    ids=[f"{t[0]}-{t[3]}" for t in TACTICS],
)
def test_takes_the_win_and_stops_the_loss(
    game_name: str, position: Any, right: set[str], what: str
) -> None:
    game = games.get(game_name)
    s = position()
    assert len(s.actions()) > len(right)  # there is a wrong choice to make
    for seed in range(3):
        move, info = MCTSAgent(game, simulations=3000, seed=seed).choose(s)
        assert game.format_move(s, move) in right, (seed, info)
    if what == "win":  # every one of these wins is worth 1 (backgammon: a single game)
        assert s.result(move).is_terminal() and info.score == pytest.approx(1.0)


def test_the_four_phases_leave_consistent_statistics() -> None:
    g = games.get("connect_four")
    agent = MCTSAgent(g, simulations=500, seed=3)
    root_seen: list[Any] = []
    original = agent.most_visited

    def spy(node: Any) -> Any:
        if not root_seen:
            root_seen.append(node)
        return original(node)

    agent.most_visited = spy  # type: ignore[method-assign]
    move, info = agent.choose(g.initial_state())
    root = root_seen[0]
    # every simulation passed through the root and exactly one of its children
    assert root.n == info.nodes == 500
    assert sum(ch.n for ch in root.children) == 500
    assert move == max(root.children, key=lambda ch: ch.n).move
    best = max(root.children, key=lambda ch: ch.n)
    assert info.score == pytest.approx(-1 + 2 * best.u / best.n)
    assert info.pv[0] == move and len(info.pv) >= 2 and info.depth >= len(info.pv)


def test_anytime_within_the_time_limit() -> None:
    for name in ("othello", "backgammon", "chinese_checkers"):
        g = games.get(name)
        s = g.initial_state()
        if s.is_chance_node():
            s = s.result((3, 1))
        agent = MCTSAgent(g, seed=1)
        move, info = within_limit(lambda: agent.choose(s, time_limit=0.25), 0.25)  # noqa: B023
        assert move in s.actions() and info.nodes > 10 and info.pv


def test_reproducible_with_seed_and_simulations() -> None:
    g = games.get("othello")
    s = g.initial_state()
    runs = [MCTSAgent(g, simulations=300, seed=9).choose(s) for _ in range(2)]
    assert runs[0][0] == runs[1][0] and runs[0][1].score == runs[1][1].score
    assert runs[0][1].pv == runs[1][1].pv


def test_chance_nodes_are_sampled_with_their_probabilities() -> None:
    g = games.get("backgammon")
    agent = MCTSAgent(g, seed=4)
    s = g.initial_state()  # the opening roll: 30 outcomes, 1/30 each
    counts: dict[Any, int] = {}
    for _ in range(6000):
        roll = agent._roll(s)
        counts[roll] = counts.get(roll, 0) + 1
    assert len(counts) == 30 and max(counts.values()) < 2 * min(counts.values())
    opened = s.result((3, 1))
    s = opened.result(opened.actions()[0])  # after the first play: the 21 normal rolls
    rolls = [agent._roll(s) for _ in range(7200)]
    n66 = rolls.count((6, 6))
    n65 = rolls.count((6, 5))
    assert 120 < n66 < 280 and 300 < n65 < 500  # 1/36 and 2/36 of 7200: 200 and 400


def test_options_and_simulation_kinds() -> None:
    g = games.get("chinese_checkers")
    assert MCTSAgent(g).simulation == "eval"  # random games there run to the ply cap
    assert MCTSAgent(games.get("connect_four")).simulation == "random"
    _, info = MCTSAgent(g, simulation="eval", playout_depth=4, simulations=200, seed=1).choose(
        g.initial_state()
    )
    assert info.nodes == 200
    with pytest.raises(ValueError, match="simulation"):
        MCTSAgent(g, simulation="greedy")
    with pytest.raises(ValueError, match="does not take"):
        MCTSAgent(g, depth=3)


def test_the_tree_stops_at_max_nodes() -> None:
    g = games.get("connect_four")
    agent = MCTSAgent(g, simulations=5000, max_nodes=300, seed=1)
    move, info = agent.choose(g.initial_state())
    assert agent.tree_size == 300 and info.nodes < 5000 and move in range(7)


def test_proofs_rise_through_the_tree() -> None:
    """X's c1 blocks O's diagonal and forks a1-b1-c1 with c1-c2-c3: every answer of O loses,
    so the node after c1 is proven (max^n backup of proven children) and X plays it."""
    g = games.get("tic_tac_toe")
    s = _play(g, "a1 b2 c3 a3")
    agent = MCTSAgent(g, simulations=3000, seed=2)
    seen: list[Any] = []
    original = agent.most_visited

    def spy(node: Any) -> Any:
        if not seen:
            seen.append(node)
        return original(node)

    agent.most_visited = spy  # type: ignore[method-assign]
    move, info = agent.choose(s)
    assert g.format_move(s, move) == "c1"
    chosen = next(ch for ch in seen[0].children if ch.move == move)
    assert chosen.solved is not None and chosen.solved[0] == 1.0  # X's payoff, scaled
    assert info.score is not None and info.score > 0.99  # visits before the proof count too
    # without proofs the same search only estimates it
    _, plain = MCTSAgent(g, simulations=3000, seed=2, solve=False).choose(s)
    assert plain.score is not None and plain.score < 1.0
