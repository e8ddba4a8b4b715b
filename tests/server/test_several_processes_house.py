"""A house bot on two ``arena serve`` processes of one PostgreSQL database (issue 22): it runs
on both, and ``house_max_matches`` bounds its matches on both together, not on each
(server/referee/house_load.py)."""

from __future__ import annotations

import pytest
from _server_process import start_server_process
from _ws_client import WsBot

pytestmark = [pytest.mark.postgresql_only, pytest.mark.timeout(120)]

HOUSE = "house-random"
SLOW = {"move_ms": 60_000, "bank_ms": 0}


async def test_a_house_bot_s_most_matches_count_its_matches_on_every_process(
    db_url: str,
) -> None:
    first = start_server_process(
        db_url, house_bots="tic_tac_toe=random", house_max_matches="1", house_workers="1"
    )
    second = start_server_process(
        db_url, house_bots="tic_tac_toe=random", house_max_matches="1", house_workers="1"
    )
    try:
        # A match with the house bot on the first process, kept running (nobody moves: the
        # challenger is first to play and sits on its turn).
        here = await WsBot.connect(first.ws_url, first.create_bot("hl-here"))
        await here.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [HOUSE],
                         "time_control": SLOW})  # fmt: skip
        await here.expect("challenge_sent")
        start = await here.expect("match_start", timeout=20)
        # The same house bot on the second process: at its most already.
        there = await WsBot.connect(second.ws_url, second.create_bot("hl-there"))
        await there.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [HOUSE],
                          "time_control": SLOW})  # fmt: skip
        await there.expect("challenge_sent")
        declined = await there.expect("challenge_declined", timeout=20)
        assert declined["by"] == HOUSE and "already plays 1 match (its most)" in declined["reason"]
        # The first match over: the second process's house bot has room again.
        await here.send({"type": "resign", "match_id": start["match_id"]})
        end = await here.expect("match_end", timeout=20, match_id=start["match_id"])
        assert end["termination"] == "resign"
        await there.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [HOUSE],
                          "time_control": SLOW})  # fmt: skip
        await there.expect("challenge_sent")
        again = await there.expect("match_start", timeout=20)
        assert again["match_id"] != start["match_id"]
        await here.close()
        await there.close()
    finally:
        first.stop()
        second.stop()
