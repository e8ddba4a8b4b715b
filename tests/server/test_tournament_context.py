"""Tournaments in context, on a real server with bots playing over real WebSockets: a match's
record names its tournament, round and board (and still verifies, as do records without
them); ``GET /api/matches`` filters by tournament and by class; a gauntlet's crosstable reads
entrants against the pool; a tournament's progress counts the games of every round."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _api import error_of, get, post
from _tournament_field import games_of, held_tournament, play_two_tournaments
from _waiting import until
from conftest import LiveServer

from ply_arena.protocol.verify import verify_record
from ply_arena.server.cli.tournament import print_tournament


def _ids(srv: LiveServer, query: str) -> tuple[set[str], int]:
    response = get(srv, f"/api/matches?{query}&limit=200")
    assert response.status_code == 200, response.text
    body = response.json()
    return {m["id"] for m in body["matches"]}, body["total"]


async def test_a_match_record_names_its_tournament_game(live_server: LiveServer) -> None:
    srv = live_server
    field = await asyncio.wait_for(play_two_tournaments(srv), 100)
    for doc in (field.gauntlet, field.round_robin):
        for round_, game in games_of(doc):
            record = get(srv, f"/api/matches/{game['match_id']}").json()
            assert record["tournament"] == {
                "name": doc["name"], "round": round_, "board": game["board"]
            }  # fmt: skip
            # The downloadable document too, and it verifies.
            document = get(srv, f"/api/matches/{game['match_id']}/record").json()
            assert document["tournament"] == record["tournament"]
            assert verify_record(document).ok, verify_record(document).problems
            # A record kept from before these fields still verifies.
            old = {k: v for k, v in document.items() if k != "tournament"}
            assert verify_record(old).ok
    listed = get(srv, "/api/matches?limit=200").json()["matches"]
    assert {m["tournament"]["name"] for m in listed} == {"gaunt", "rr"}


async def test_an_aborted_and_replayed_match_keeps_its_tournament(
    live_server: LiveServer,
) -> None:
    srv = live_server
    # The bots hold their moves until the first match has been aborted.
    async with held_tournament(srv, "redo", ("ab0", "ab1")) as aborted:

        def playing() -> tuple[int, dict[str, Any]] | None:
            doc = get(srv, "/api/tournaments/redo").json()
            live = [(r, g) for r, g in games_of(doc) if g["live"]]
            return live[0] if live else None

        round_, game = await until(playing, 20, "a game under way")
        first = game["match_id"]
        stopped = post(srv, f"/api/matches/{first}/abort", srv.admin_token)
        assert stopped.status_code == 200, stopped.text
        aborted.set()
        doc = await until(
            lambda: (d := get(srv, "/api/tournaments/redo").json())["status"] == "finished" and d,
            60,
            "the tournament to finish",
        )
    replayed = next(g for r, g in games_of(doc) if (r, g["board"]) == (round_, game["board"]))
    assert replayed["replays"] == 1 and replayed["match_id"] != first
    record = get(srv, f"/api/matches/{first}").json()
    assert record["status"] == "aborted"
    assert record["tournament"] == {"name": "redo", "round": round_, "board": game["board"]}
    # The tournament's matches: its two games' and the aborted one.
    played = {g["match_id"] for _, g in games_of(doc)}
    assert _ids(srv, "tournament=redo") == (played | {first}, 3)


async def test_the_match_list_filters_by_tournament_and_class(live_server: LiveServer) -> None:
    srv = live_server
    field = await asyncio.wait_for(play_two_tournaments(srv), 100)
    gauntlet_ids = {g["match_id"] for _, g in games_of(field.gauntlet)}
    rr_ids = {g["match_id"] for _, g in games_of(field.round_robin)}
    assert len(gauntlet_ids) == 4 and len(rr_ids) == 2
    # By tournament (in any case), by class (a bot of the class sat), and both.
    assert _ids(srv, "tournament=gaunt") == (gauntlet_ids, 4)
    assert _ids(srv, "tournament=GAUNT") == (gauntlet_ids, 4)
    assert _ids(srv, "tournament=rr") == (rr_ids, 2)
    assert _ids(srv, "class=class-one") == (gauntlet_ids, 4)
    assert _ids(srv, "class=class-two") == (rr_ids, 2)
    assert _ids(srv, "class=class-two&tournament=gaunt") == (set(), 0)
    assert _ids(srv, "tournament=gaunt&bot=one0&status=finished")[1] == 2

    # Unknown names are 404s (as ?class= of the leaderboard); impossible names 400s.
    msg = error_of(get(srv, "/api/matches?tournament=nope"), 404, "not_found")
    assert "no tournament named 'nope'" in msg
    msg = error_of(get(srv, "/api/matches?class=nope"), 404, "not_found")
    assert "no class named 'nope'" in msg
    msg = error_of(get(srv, "/api/matches?tournament=a%20b"), 400, "bad_request")
    assert "bad tournament name" in msg
    error_of(get(srv, "/api/matches?class=" + "x" * 65), 400, "bad_request")


async def test_a_gauntlet_crosstable_reads_entrants_against_the_pool(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    srv = live_server
    field = await asyncio.wait_for(play_two_tournaments(srv), 100)
    gauntlet, rr = field.gauntlet, field.round_robin
    assert gauntlet["crosstable_columns"] == ["pool0"]
    for line in gauntlet["crosstable"]:
        assert set(line["against"]) == {"pool0"}
        assert len(line["against"]["pool0"]) == 2  # both seats
        assert sum(line["against"]["pool0"]) == line["points"]
    assert rr["crosstable_columns"] == [r["bot"] for r in rr["standings"]]
    # `arena tournament show --crosstable` prints the same columns.
    capsys.readouterr()
    print_tournament(gauntlet, crosstable=True, rounds=False)
    printed = capsys.readouterr().out
    assert "pool0" in printed
    for line in gauntlet["crosstable"]:
        row = next(
            r for r in reversed(printed.splitlines()) if f" {line['bot']} " in r and "│" in r
        )
        cells = [c.strip() for c in row.split("│")]
        assert " ".join(f"{p:g}" for p in line["against"]["pool0"]) in cells, row


async def test_a_round_robin_counts_its_games_from_its_schedule(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    srv = live_server
    field = await asyncio.wait_for(play_two_tournaments(srv), 100)
    before = field.round_robin_before
    assert before["games"] == {"total": 2, "decided": 0}
    assert before["round"] == {"number": 0, "of": 2, "games": {"total": 0, "decided": 0}}
    rr = field.round_robin
    assert rr["games"] == {"total": 2, "decided": 2}
    assert rr["round"] == {"number": 2, "of": 2, "games": {"total": 1, "decided": 1}}
    capsys.readouterr()
    print_tournament(rr, crosstable=False, rounds=False)
    assert "round 2 of 2 (1 of 1 game(s) decided), 2 of 2 game(s) of the tournament decided" in (
        " ".join(capsys.readouterr().out.split())
    )


async def test_a_swiss_counts_the_games_of_every_round(live_server: LiveServer) -> None:
    srv = live_server
    names = [srv.create_bot(f"sw{i}")[0] for i in range(4)]
    created = post(srv, "/api/tournaments", srv.admin_token, name="sw", game="tic_tac_toe",
                   format="swiss", rounds=3, bots=names, no_show_s=600)  # fmt: skip
    assert created.status_code == 201, created.text
    doc = created.json()
    assert doc["games"] == {"total": 6, "decided": 0}
    assert doc["round"] == {"number": 0, "of": 3, "games": {"total": 0, "decided": 0}}

    # No bot is connected: round 1 is drawn and waits; it is 2 games of the Swiss's 6.
    started = post(srv, "/api/tournaments/sw/start", srv.admin_token)
    assert started.status_code == 200, started.text

    def drawn() -> dict[str, Any] | None:
        found: dict[str, Any] = get(srv, "/api/tournaments/sw").json()
        return found if found["schedule"] else None

    doc = await until(drawn, 20, "round 1 drawn")
    assert doc["games"] == {"total": 6, "decided": 0}
    assert doc["round"] == {"number": 1, "of": 3, "games": {"total": 2, "decided": 0}}

    cancelled = post(srv, "/api/tournaments/sw/cancel", srv.admin_token)
    assert cancelled.status_code == 200, cancelled.text
    # Cancelled: nothing more is drawn, so the stored round is the whole of it.
    doc = get(srv, "/api/tournaments/sw").json()
    assert doc["games"] == {"total": 2, "decided": 0}
    assert doc["round"] == {"number": 1, "of": 1, "games": {"total": 2, "decided": 0}}


async def test_a_cancelled_round_robin_stays_at_the_round_it_reached(
    live_server: LiveServer,
) -> None:
    srv = live_server
    names = [srv.create_bot(f"cx{i}")[0] for i in range(3)]
    created = post(srv, "/api/tournaments", srv.admin_token, name="cx", game="tic_tac_toe",
                   bots=names, no_show_s=600)  # fmt: skip
    assert created.status_code == 201, created.text
    # Three entrants: six rounds of one game (the circle method gives one a bye each round).
    assert created.json()["games"] == {"total": 6, "decided": 0}
    assert created.json()["round"]["of"] == 6
    assert post(srv, "/api/tournaments/cx/start", srv.admin_token).status_code == 200
    # Nobody is connected: the rounds are drawn, and round 1's game waits for its bots.
    await until(lambda: get(srv, "/api/tournaments/cx").json()["schedule"], 20, "rounds drawn")
    assert post(srv, "/api/tournaments/cx/cancel", srv.admin_token).status_code == 200
    doc = get(srv, "/api/tournaments/cx").json()
    assert doc["status"] == "cancelled"
    assert doc["games"] == {"total": 6, "decided": 0}
    assert doc["round"] == {"number": 1, "of": 6, "games": {"total": 1, "decided": 0}}
