"""A ladder of house bots and remote reference agents on a live server (tests/server/_ladder.py).

Whether the ratings it produces order the agents by strength is checked where results are rated
(the ratings' own tests); here: every bot plays, and no bot meets the bot of its previous match
again while another bot waits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from _ladder import run_ladder
from _ws_client import WsBot, rederive
from conftest import LiveServer


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
