"""The traced search is the agent's search: traced and untraced, every agent answers the same
(move, value, depth, nodes, line) on positions of every game it plays, and the trace's root
gives that answer."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ply_arena import games, reference_agents
from ply_arena.games import State
from ply_arena.reference_agents.trace import View, record

# (agent, game, options): small searches, each game an agent plays at least once
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("minimax", "tic_tac_toe", {"depth": 3}),
    ("minimax", "connect_four", {"depth": 3}),
    ("minimax", "othello", {"depth": 2}),
    ("alphabeta", "tic_tac_toe", {"depth": 5}),
    ("alphabeta", "connect_four", {"depth": 5}),
    ("alphabeta", "othello", {"depth": 3}),
    ("alphabeta", "connect_four", {"depth": 4, "order": False, "tt": False}),
    ("negamax", "tic_tac_toe", {"depth": 5}),
    ("negamax", "connect_four", {"depth": 4}),
    ("negamax", "othello", {"depth": 3}),
    ("expectiminimax", "tic_tac_toe", {"depth": 3}),
    ("expectiminimax", "connect_four", {"depth": 3}),
    ("expectiminimax", "othello", {"depth": 2}),
    ("expectiminimax", "backgammon", {"depth": 2}),
    ("expectiminimax", "backgammon", {"depth": 2, "pruning": False}),
    ("maxn", "tic_tac_toe", {"depth": 3}),
    ("maxn", "connect_four", {"depth": 3}),
    ("maxn", "othello", {"depth": 2}),
    ("maxn", "chinese_checkers", {"depth": 2}),
    ("maxn", "chinese_checkers", {"depth": 2, "pruning": False}),
    ("maxn", "chinese_checkers", {"depth": 3, "paranoid": True}),
    ("mcts", "tic_tac_toe", {"simulations": 150}),
    ("mcts", "connect_four", {"simulations": 150}),
    ("mcts", "othello", {"simulations": 60}),
    ("mcts", "backgammon", {"simulations": 25}),
    ("mcts", "chinese_checkers", {"simulations": 150}),
]


def positions(game: games.Game, seed: int, n: int = 2) -> list[State]:
    """Positions a few random plies in (dice rolled at random), a player to move, a choice."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < n:
        s = game.initial_state()
        for _ in range(rng.randrange(1, 10)):
            if s.is_terminal():
                break
            if s.is_chance_node():
                s = s.result(rng.choice(s.chance_outcomes())[0])
            else:
                s = s.result(rng.choice(list(s.actions())))
        if s.is_chance_node() and not s.is_terminal():
            s = s.result(rng.choice(s.chance_outcomes())[0])
        if not s.is_terminal() and len(s.actions()) > 1:
            out.append(s)
    return out


@pytest.mark.parametrize(
    ("name", "game_name", "options"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{'-'.join(f'{k}{v}' for k, v in c[2].items())}" for c in CASES],
)
def test_traced_and_untraced_search_agree(
    name: str, game_name: str, options: dict[str, Any]
) -> None:
    game = games.get(game_name)
    # backgammon's depth 2 (play, 21 rolls, every reply) is 10^4 nodes and more: one position
    # with few plays (seed 20: 8 plays, under 4,000 nodes without pruning)
    if game_name == "backgammon":
        states = positions(game, seed=20, n=1)
    else:
        states = positions(game, seed=len(name) + len(game_name))
    for s in states:
        move, info = reference_agents.make(name, game, seed=5, **options).choose(s)
        agent = reference_agents.make(name, game, seed=5, **options)
        t_move, t_info, t = record(agent, s, view=View(limit=30))
        assert (t_move, t_info.score, t_info.depth, t_info.nodes, t_info.pv) == (
            move,
            info.score,
            info.depth,
            info.nodes,
            info.pv,
        )
        assert t.agrees and t.answer["move"] == game.format_move(s, move)
        assert (t.answer["agent_value"], t.answer["depth"]) == (info.score, info.depth)
        assert t.root is not None and t.root.data["best"] == t.answer["move"]
        if name != "mcts":
            # node for node: the iterations' nodes are the agent's count, the last one's
            # the size of the tree shown
            assert sum(it["nodes"] for it in t.iterations) == info.nodes
            assert t.iterations[-1]["depth"] == info.depth
            assert t.root.size == t.iterations[-1]["nodes"]
        else:
            assert t.root.data["visits"] == info.nodes
