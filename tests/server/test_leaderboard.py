"""Leaderboards and bot pages over REST and the CLI, on a real server and SQLite file."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path
from unittest.mock import patch

import pytest
from _rated import store_rated
from conftest import LiveServer
from typer.testing import CliRunner

from ply_arena.server.cli import app
from ply_arena.server.db.database import Database
from ply_arena.server.ratings import RatingBook, RatingModel
from ply_arena.server.repositories import bots as bot_repo

runner = CliRunner()

#: (seat 0, seat 1, payoffs): alice beats everyone, dave loses to everyone, bob and carol draw.
RESULTS = [
    ("alice", "bob", [1.0, -1.0]),
    ("alice", "carol", [1.0, -1.0]),
    ("bob", "carol", [0.0, 0.0]),
    ("dave", "alice", [-1.0, 1.0]),
    ("bob", "dave", [1.0, -1.0]),
    ("carol", "dave", [1.0, -1.0]),
    ("alice", "dave", [1.0, -1.0]),
    ("carol", "bob", [0.0, 0.0]),
]


async def rated_history(database: Database, game: str = "tic_tac_toe") -> dict[str, int]:
    """The matches of RESULTS, stored and rated as the referee stores them; bot ids by name."""
    book = RatingBook(RatingModel())
    async with database.session() as session:
        ids = {}
        for name in ("alice", "bob", "carol", "dave"):
            bot = await bot_repo.bot_by_name(session, name)
            ids[name] = bot.id if bot else (await bot_repo.create_bot(session, name))[0].id
    for k, (first, second, payoffs) in enumerate(RESULTS):
        await store_rated(
            database,
            book,
            match_id=f"{game}-{k}",
            game=game,
            bot_ids=[ids[first], ids[second]],
            payoffs=payoffs,
            seed=k,
        )
    return ids


@pytest.fixture
async def ladder(live_server: LiveServer, database: Database) -> LiveServer:
    await rated_history(database)
    return live_server


async def test_the_leaderboard_ranks_by_the_conservative_rating(ladder: LiveServer) -> None:
    page = ladder.api("GET", "/api/leaderboard/tic_tac_toe").json()
    assert page["total"] == 4 and page["provisional_below"] == 10
    ranking = page["ranking"]
    assert ranking[0]["bot"] == "alice" and ranking[-1]["bot"] == "dave"
    assert [row["rank"] for row in ranking] == [1, 2, 3, 4]
    values = [row["conservative"] for row in ranking]
    assert values == sorted(values, reverse=True)
    for row in ranking:
        assert row["conservative"] == pytest.approx(row["mu"] - 3 * row["sigma"], abs=2e-3)
        assert row["provisional"] is True and row["house"] is False
        assert row["wins"] + row["draws"] + row["losses"] == row["matches"] == 4
    alice = ranking[0]
    assert (alice["wins"], alice["losses"], alice["timeouts"]) == (4, 0, 0)
    # Pages.
    second = ladder.api("GET", "/api/leaderboard/tic_tac_toe?limit=2&offset=2").json()
    assert [row["rank"] for row in second["ranking"]] == [3, 4]
    assert [row["bot"] for row in second["ranking"]] == [row["bot"] for row in ranking[2:]]
    # Another game has its own (empty) board.
    assert ladder.api("GET", "/api/leaderboard/othello").json()["total"] == 0


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/api/leaderboard/chess", 404, "unknown_game"),
        ("/api/leaderboard/tic_tac_toe?limit=0", 400, "bad_request"),
        ("/api/leaderboard/tic_tac_toe?limit=201", 400, "bad_request"),
        ("/api/leaderboard/tic_tac_toe?offset=-1", 400, "bad_request"),
        ("/api/leaderboard/tic_tac_toe?offset=9223372036854775808", 400, "bad_request"),
        ("/api/bots/nobody", 404, "not_found"),
        ("/api/bots/nobody/ratings", 404, "not_found"),
        ("/api/bots/alice/ratings?game=chess", 400, "unknown_game"),
    ],
)
async def test_bad_requests_get_coded_errors(
    ladder: LiveServer, path: str, status: int, code: str
) -> None:
    response = ladder.api("GET", path)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


async def test_a_bot_page_has_ratings_recent_matches_and_head_to_head(ladder: LiveServer) -> None:
    page = ladder.api("GET", "/api/bots/bob").json()
    assert page["name"] == "bob" and page["house"] is False and page["matches"] == 4
    # Names are unique whatever their case, so any case finds the bot.
    assert ladder.api("GET", "/api/bots/BOB").json()["name"] == "bob"
    assert ladder.api("GET", "/api/matches?bot=Bob").json()["total"] == 4
    (rating,) = page["ratings"]
    assert (rating["game"], rating["ranked"]) == ("tic_tac_toe", 4)
    assert 1 < rating["rank"] < 4
    assert (rating["wins"], rating["draws"], rating["losses"]) == (1, 2, 1)
    assert len(page["recent_matches"]) == 4
    h2h = {row["opponent"]: row for row in page["head_to_head"]}
    assert (h2h["carol"]["matches"], h2h["carol"]["draws"]) == (2, 2)
    # A disabled bot is left out of the rankings: no rank on its page, one fewer ranked.
    assert ladder.api("POST", "/api/bots/alice/disable", admin=True).status_code == 200
    (alice,) = ladder.api("GET", "/api/bots/alice").json()["ratings"]
    assert alice["rank"] is None and alice["ranked"] == 3
    (bob,) = ladder.api("GET", "/api/bots/bob").json()["ratings"]
    assert bob["rank"] is not None and bob["ranked"] == 3
    board = ladder.api("GET", "/api/leaderboard/tic_tac_toe").json()
    assert "alice" not in [row["bot"] for row in board["ranking"]] and board["total"] == 3
    assert (h2h["alice"]["losses"], h2h["dave"]["wins"]) == (1, 1)
    # The history: one point per rated match, in order, ending at the current rating.
    history = ladder.api("GET", "/api/bots/bob/ratings?game=tic_tac_toe").json()["history"]
    assert [point["match_id"] for point in history] == [
        f"tic_tac_toe-{k}" for k, (a, b, _) in enumerate(RESULTS) if "bob" in (a, b)
    ]
    assert history[-1]["mu"] == rating["mu"] and history[-1]["sigma"] == rating["sigma"]
    assert history[0]["mu_before"] == 25.0
    assert ladder.api("GET", "/api/bots").json()["bots"][0]["house"] is False


def test_arena_leaderboard_prints_the_table_locally_and_from_a_server(
    ladder: LiveServer,
) -> None:
    db = ladder.db_option
    local = runner.invoke(app, ["leaderboard", "tic_tac_toe", "--db", db])
    assert local.exit_code == 0, local.output
    lines = [line for line in local.output.splitlines() if "alice" in line or "dave" in line]
    assert "alice" in lines[0] and "dave" in lines[-1]
    assert "ranked by mu - 3 sigma" in local.output and "provisional" in local.output
    remote = runner.invoke(app, ["leaderboard", "tic_tac_toe", "--url", ladder.url, "--json"])
    assert remote.exit_code == 0, remote.output
    data = json.loads(remote.output)
    from_api = ladder.api("GET", "/api/leaderboard/tic_tac_toe?limit=20").json()
    assert data == from_api
    # The address the bots use works too (as for arena replay).
    ws_url = ladder.url.replace("http://", "ws://") + "/ws"
    via_ws = runner.invoke(app, ["leaderboard", "tic_tac_toe", "--url", ws_url, "--json"])
    assert via_ws.exit_code == 0, via_ws.output
    assert json.loads(via_ws.output) == from_api
    unknown = runner.invoke(app, ["leaderboard", "chess", "--db", db])
    assert unknown.exit_code == 2 and "unknown game" in unknown.output


def test_the_table_never_cuts_a_bot_name_on_an_80_column_terminal(ladder: LiveServer) -> None:
    long_name = "house-alphabeta-depth4-orderfalse-1"  # the longest kind of name a class sees
    data = ladder.api("GET", "/api/leaderboard/tic_tac_toe").json()
    data["ranking"][0]["bot"] = long_name
    from ply_arena.server.cli.ratings import print_leaderboard

    for width in (80, 100, 160):
        with patch.dict(os.environ, {"COLUMNS": str(width)}), redirect_stdout(io.StringIO()) as out:
            print_leaderboard(data)
        text = out.getvalue()
        assert long_name in text, text
        assert max(len(line) for line in text.splitlines()) <= width, text
        assert "…" not in text, text
        for row in data["ranking"]:
            assert row["bot"] in text
    assert "last (UTC)" in text and "not shown at this width" not in text  # 160: everything
    # A page says which rows of how many; an empty board says so in words.
    page = ladder.api("GET", "/api/leaderboard/tic_tac_toe?limit=2&offset=1").json()
    with redirect_stdout(io.StringIO()) as out:
        print_leaderboard(page)
    assert "4 rated bot(s), showing 2-3, ranked by" in out.getvalue()
    empty = ladder.api("GET", "/api/leaderboard/othello").json()
    with redirect_stdout(io.StringIO()) as out:
        print_leaderboard(empty)
    assert out.getvalue().strip() == "othello: no rated bot yet (no rated match finished)"


def test_arena_leaderboard_without_a_database_points_at_url(tmp_path: Path) -> None:
    result = runner.invoke(app, ["leaderboard", "tic_tac_toe", "--db", str(tmp_path / "no.db")])
    assert result.exit_code == 1
    assert "no arena database at" in result.output and "--url http://HOST:PORT" in result.output


def test_arena_ratings_rebuild_gives_the_same_numbers(ladder: LiveServer) -> None:
    before = ladder.api("GET", "/api/leaderboard/tic_tac_toe").json()
    result = runner.invoke(app, ["ratings", "rebuild", "--db", ladder.db_option])
    assert result.exit_code == 0, result.output
    assert f"from {len(RESULTS)} rated match(es)" in result.output
    assert ladder.api("GET", "/api/leaderboard/tic_tac_toe").json() == before
