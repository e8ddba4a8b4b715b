"""Rating anchors: one bot per game pinned at a fixed rating (``ARENA_RATING_ANCHORS``). Its
rating never moves, its opponents are rated against the pinned value, a rebuild gives the same
numbers as the incremental updates, a server started with other anchors rebuilds, and the
leaderboards mark the anchor."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from _rated import store_rated
from _rebuild import assert_ratings_equal_a_rebuild
from _ws_client import WsBot, start_pair
from conftest import LiveServer
from sqlalchemy import text

from ply_arena import games
from ply_arena.server.cli.ratings import print_leaderboard
from ply_arena.server.db.database import Database
from ply_arena.server.ratings import RatingBook, RatingModel
from ply_arena.server.ratings.anchors import Anchor, parse_anchors
from ply_arena.server.ratings.rebuild import needs_rebuild, rebuild, rebuild_if_needed
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.settings import Settings, SettingsError


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def snapshot(database: Database) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every rating row and every history row (floats exact)."""
    async with database.session() as session:
        ratings = await session.execute(
            text(
                "SELECT bot_id, game, mu, sigma, conservative, matches, wins, draws, losses "
                "FROM ratings ORDER BY bot_id, game"
            )
        )
        history = await session.execute(
            text(
                "SELECT match_id, bot_id, game, seat, rank, mu_before, sigma_before, mu, sigma, "
                "conservative FROM rating_history ORDER BY match_id, seat"
            )
        )
        return [tuple(r) for r in ratings.all()], [tuple(r) for r in history.all()]


async def test_an_anchor_never_moves_and_its_opponents_are_rated_against_its_pin(
    database: Database,
) -> None:
    """Incrementally (the recorder's write, which on PostgreSQL reads the states from the
    database under the ratings lock) and in a rebuild alike; in its own game only."""
    model = RatingModel(anchors=(Anchor("tic_tac_toe", "Pin-Bot", 5.0),))
    book = RatingBook(model)  # made before the anchor's bot exists, as a server's referee is
    async with database.session() as session:
        pin, s1, s2 = [
            (await bot_repo.create_bot(session, name))[0].id for name in ("pin-bot", "s1", "s2")
        ]
    played = [
        ("tic_tac_toe", (s1, pin), (1.0, -1.0)),
        ("tic_tac_toe", (pin, s2), (1.0, -1.0)),
        ("tic_tac_toe", (s1, s2), (0.0, 0.0)),
        ("tic_tac_toe", (s2, pin), (0.0, 0.0)),
        ("connect_four", (pin, s1), (1.0, -1.0)),  # no anchor in connect_four: it moves
    ]
    for k, (game, bot_ids, payoffs) in enumerate(played):
        await store_rated(
            database, book, match_id=f"m{k}", game=game, bot_ids=bot_ids, payoffs=payoffs
        )
    ratings, history = await snapshot(database)
    by_key = {(row[0], row[1]): row for row in ratings}
    # bot, game, mu, sigma, conservative, matches, wins, draws, losses
    assert by_key[pin, "tic_tac_toe"][2:] == (5.0, 0.0, 5.0, 3, 1, 1, 1)
    assert by_key[pin, "connect_four"][2] > model.mu
    anchor_rows = [row for row in history if row[1:3] == (pin, "tic_tac_toe")]
    assert len(anchor_rows) == 3
    assert all(row[5:9] == (5.0, 0.0, 5.0, 0.0) for row in anchor_rows)
    # s1's first match: rated against (5, 0), not against a new bot's (25, 25/3).
    first = next(row for row in history if row[0] == "m0" and row[1] == s1)
    assert first[7:9] == pytest.approx(model.rate([model.initial(), (5.0, 0.0)], [1, -1])[0])
    unanchored = RatingModel(anchors=())
    assert first[7] != pytest.approx(unanchored.rate([model.initial()] * 2, [1, -1])[0][0])
    assert book.get(pin, "tic_tac_toe") == (5.0, 0.0)

    async with database.session() as session:
        assert not await needs_rebuild(session, model)
        await rebuild(session, model)
    assert await snapshot(database) == (ratings, history)

    # Rebuilt without the anchor, the numbers differ; a server with the anchor sees that its
    # anchor is not at its pin and rebuilds, back to exactly the anchored numbers.
    async with database.session() as session:
        await rebuild(session, unanchored)
    assert (await snapshot(database))[0] != ratings
    async with database.session() as session:
        assert await needs_rebuild(session, model)
        assert await rebuild_if_needed(session, model) is not None
    assert await snapshot(database) == (ratings, history)


def test_the_default_anchors_are_the_random_house_bot_at_0_in_every_game() -> None:
    default = {(a.game, a.bot, a.rating) for a in RatingModel().anchors}
    assert default == {(g, "house-random", 0.0) for g in games.names()}
    assert RatingModel.from_settings(Settings()).anchors == RatingModel().anchors
    assert Settings().rating_anchors == "default"
    assert RatingModel.from_settings(Settings(rating_anchors="none")).anchors == ()
    env = {"ARENA_RATING_ANCHORS": "othello=house-alphabeta-d4@12.5; connect_four=bob"}
    assert RatingModel.from_settings(Settings.from_env(env)).anchors == (
        Anchor("othello", "house-alphabeta-d4", 12.5),
        Anchor("connect_four", "bob", 0.0),
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("chess=house-random", "no game 'chess'"),
        ("othello=house-random@high", "'high' is not a rating"),
        ("othello=house-random@nan", "'nan' is not a rating"),
        ("othello=a;othello=b", "two anchors for othello"),
        ("othello", "names no game and bot"),
        ("othello=two words", "'two words' is not a bot name"),
    ],
)
def test_a_bad_anchor_setting_is_refused_in_one_line(value: str, said: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"ARENA_RATING_ANCHORS": value})
    message = str(refused.value)
    assert message.startswith(f"ARENA_RATING_ANCHORS={value!r}: ")
    assert said in message and "\n" not in message
    assert "GAME=BOT[@RATING]" in message


def test_parse_anchors_takes_none_and_default() -> None:
    assert parse_anchors("none") == parse_anchors("") == ()
    assert parse_anchors(" DEFAULT ") == RatingModel().anchors


async def _play(srv: LiveServer, token_a: str, token_b: str) -> None:
    a, b, start, _ = await start_pair(srv.ws_url, token_a, token_b, move_ms=3000)
    mid = start["match_id"]
    await asyncio.gather(
        *(bot.play(mid, lambda turn: turn["legal_moves"][0], timeout=15) for bot in (a, b))
    )
    await a.close()
    await b.close()


async def test_a_server_with_a_new_anchor_rebuilds_and_marks_it(
    start_server: Callable[..., LiveServer],
    open_database: Callable[[str], Database],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Matches played without anchors; then the server restarts with one: it rebuilds on start
    (the anchor pinned, its opponent re-rated against the pin), rates the next match against
    the pin as well (equal to a rebuild), and its leaderboards mark the anchor."""
    srv = start_server(rating_anchors="none")
    anchor, anchor_token = srv.create_bot("yardstick")
    other, other_token = srv.create_bot("student")
    for _ in range(2):
        await _play(srv, anchor_token, other_token)
    board = srv.api("GET", "/api/leaderboard/tic_tac_toe").json()["ranking"]
    assert {row["bot"]: row["anchor"] for row in board} == {anchor: False, other: False}
    assert next(r for r in board if r["bot"] == anchor)["sigma"] > 0
    srv.stop()

    setting = f"tic_tac_toe={anchor}@10"
    again = start_server(rating_anchors=setting)
    model = RatingModel.from_settings(Settings(rating_anchors=setting))
    await assert_ratings_equal_a_rebuild(again.db_url, model)  # rebuilt on start
    await _play(again, anchor_token, other_token)
    await assert_ratings_equal_a_rebuild(again.db_url, model)

    data = again.api("GET", "/api/leaderboard/tic_tac_toe").json()
    rows = {row["bot"]: row for row in data["ranking"]}
    assert rows[anchor]["anchor"] is True and rows[anchor]["fixed_at"] == 10.0
    assert (rows[anchor]["mu"], rows[anchor]["sigma"], rows[anchor]["conservative"]) == (
        10.0,
        0.0,
        10.0,
    )
    assert rows[anchor]["matches"] == 3 and rows[anchor]["provisional"] is False
    assert rows[other]["anchor"] is False and rows[other]["fixed_at"] is None
    bot_page = again.api("GET", f"/api/bots/{anchor}").json()
    assert [(r["game"], r["anchor"], r["fixed_at"]) for r in bot_page["ratings"]] == [
        ("tic_tac_toe", True, 10.0)
    ]
    for path in ("/leaderboard/tic_tac_toe", f"/bots/{anchor}"):
        page = again.api("GET", path).text
        assert page.count("anchor, fixed at 10<") == 1, path
    print_leaderboard(data)
    assert f"{anchor} (anchor, fixed at 10)" in capsys.readouterr().out
    referee_book = again.app.state.referee.ratings
    anchor_id = next(b.id for b in await _bots(open_database(again.db_url)) if b.name == anchor)
    assert referee_book.get(anchor_id, "tic_tac_toe") == (10.0, 0.0)


async def _bots(database: Database) -> Any:
    async with database.session() as session:
        return await bot_repo.list_bots(session)
