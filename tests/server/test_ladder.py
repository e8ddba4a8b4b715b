"""A ladder of house bots and remote reference agents on a live server (tests/server/_ladder.py).

Every bot plays, no bot meets the bot of its previous match again while another bot waits, seats
are balanced per pair, every result is rated, and the ratings order the agents by strength.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable

import pytest
from _ladder import run_ladder
from _ws_client import WsBot, rederive
from conftest import LiveServer
from sqlalchemy import select

from ply_arena.server.db.database import Database
from ply_arena.server.db.models import RatingChange


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def test_house_bots_and_remote_agents_play_a_ladder(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(
        house_bots="tic_tac_toe=random,mcts:simulations=50@0.1,alphabeta:depth=2@0.1",
        house_self_play=True,
        house_workers=1,
        pairing_tick_s=0.1,
    )
    remote = ["alphabeta", "mcts:simulations=200", "negamax:depth=1", "random"]
    result = await run_ladder(srv, "tic_tac_toe", remote, matches=60, timeout=50)
    assert len(result.finished) >= 60
    played = result.played()
    assert len(played) == 7 and all(n > 0 for n in played.values()), played
    assert result.rematches_while_others_waited() == []
    house_names = {n for n, spec in result.agents.items() if n.startswith("house-")}
    assert len(house_names) == 3
    mixed = [
        r
        for r in result.finished
        if {s["bot"] for s in r["seats"]} & house_names
        and {s["bot"] for s in r["seats"]} - house_names
    ]
    assert mixed, "house bots never met a remote bot"
    for record in result.finished:
        rederive(record)
        assert record["result"]["termination"] == "normal", record["result"]


async def test_a_connect_four_ladder_rates_the_agents_in_order_of_strength(
    start_server: Callable[..., LiveServer],
    open_database: Callable[[str], Database],
) -> None:
    """House bots of three strengths and a remote random agent play 60 rated Connect Four
    matches: every bot plays, seats are balanced per pair, every result is rated, and the final
    ratings order the agents by strength (alphabeta above mcts above random)."""
    # Fixed strengths (no @SECONDS): a time-limited search's strength depends on the load, and
    # under a doubled run MCTS with 0.1 s a move fell below random once.
    srv = start_server(
        house_bots="connect_four=random,mcts:simulations=30,alphabeta:depth=3",
        house_self_play=True,
        house_workers=2,
        pairing_tick_s=0.1,
    )
    result = await run_ladder(srv, "connect_four", ["random"], matches=60, timeout=100)
    assert len(result.finished) >= 60
    assert all(n > 0 for n in result.played().values()), result.played()
    assert result.rematches_while_others_waited() == []
    # First seat balanced between each pair: within one of each other.
    first: dict[frozenset[str], Counter[str]] = {}
    for record in result.finished:
        seated = [s["bot"] for s in sorted(record["seats"], key=lambda s: s["seat"])]
        first.setdefault(frozenset(seated), Counter())[seated[0]] += 1
    for pair, counts in first.items():
        firsts = [counts[bot] for bot in pair]
        assert max(firsts) - min(firsts) <= 1, (pair, counts)
    # Every finished match is rated: two history points per match.
    ids = {r["id"] for r in result.finished}
    database = open_database(srv.db_url)
    async with database.session() as session:
        rows = (
            await session.execute(
                select(RatingChange.match_id).where(RatingChange.match_id.in_(ids))
            )
        ).all()
    assert len(rows) == 2 * len(ids)
    board = srv.api("GET", "/api/leaderboard/connect_four").json()["ranking"]
    mu = {row["bot"]: row["mu"] for row in board}
    by_agent = {spec.split(":")[0].split("@")[0]: mu[name] for name, spec in result.agents.items()
                if name.startswith("house-")}  # fmt: skip
    assert by_agent["alphabeta"] > by_agent["mcts"] > by_agent["random"], board
    assert {row["bot"] for row in board if row["house"]} == {
        n for n in result.agents if n.startswith("house-")
    }
