"""Tournaments in context in a real browser: from a tournament page to its matches and back
(the match page names its tournament, round and board), the class page's matches, the
gauntlet's crosstable of entrants against the pool, and a Swiss's progress over every round."""

from __future__ import annotations

import asyncio
from typing import Any

from _api import get, post
from _browser import Browser
from _tournament_field import games_of, held_tournament, play_two_tournaments
from _waiting import until
from conftest import LiveServer

HTML = {"Accept": "text/html"}


async def test_a_tournament_and_its_matches_link_to_each_other(
    live_server: LiveServer, browser: Browser
) -> None:
    srv = live_server
    field = await asyncio.wait_for(play_two_tournaments(srv), 90)
    page = await browser.page()

    # Its matches: the tournament's link lists them, each tagged with the tournament.
    await page.goto(f"{srv.url}/tournaments/gaunt")
    await page.click("p.tournament-matches a")
    await page.wait_for_url("**/matches?tournament=gaunt")
    assert "in tournament gaunt" in await page.locator("h1").inner_text()
    rows = page.locator("table.matches tbody tr")
    assert await rows.count() == 4
    assert await page.locator("table.matches a.tournament-tag").count() == 4
    assert await page.locator("input[name=tournament]").input_value() == "gaunt"
    await browser.shot(page, "tournament-matches")

    # A match names its tournament game and links back to the tournament.
    round_, game = games_of(field.gauntlet)[0]
    await page.goto(f"{srv.url}/matches/{game['match_id']}")
    line = await page.locator("p.match-tournament").inner_text()
    assert f"Tournament gaunt, round {round_}, board {game['board']}" in line
    await browser.shot(page, "tournament-match-context")
    await page.click("p.match-tournament a.tournament-link")
    await page.wait_for_url("**/tournaments/gaunt")

    # The class page leads to its bots' matches.
    await page.goto(f"{srv.url}/classes/class-two")
    await page.click("a.class-matches")
    await page.wait_for_url("**/matches?class=class-two")
    assert await page.locator("table.matches tbody tr").count() == 2
    assert "of class class-two" in await page.locator("h1").inner_text()

    # Filters that name nothing, or cannot be a name, say so.
    unknown = srv.api("GET", "/matches?tournament=nope", headers=HTML)
    assert unknown.status_code == 404 and "no tournament named" in unknown.text
    bad = srv.api("GET", "/matches?class=a%20b", headers=HTML)
    assert bad.status_code == 400 and "bad class name" in bad.text
    assert browser.dialogs == [] and browser.console_errors == []


async def test_a_live_tournament_match_names_its_tournament(
    live_server: LiveServer, browser: Browser
) -> None:
    srv = live_server
    # The bots hold their first move until the test has seen the live page.
    async with held_tournament(srv, "live-cup", ("lv0", "lv1")):

        def playing() -> str | None:
            doc = get(srv, "/api/tournaments/live-cup").json()
            live = [g for _, g in games_of(doc) if g["live"]]
            return str(live[0]["match_id"]) if live else None

        match_id = await until(playing, 20, "a game under way")
        page = await browser.page()
        await page.goto(f"{srv.url}/matches/{match_id}")
        assert await page.locator(".tag.live").count() == 1
        line = await page.locator("p.match-tournament").inner_text()
        assert "Tournament live-cup, round 1, board 1" in line
    assert browser.dialogs == [] and browser.console_errors == []


async def test_a_gauntlet_crosstable_shows_entrants_against_the_pool(
    live_server: LiveServer, browser: Browser
) -> None:
    srv = live_server
    field = await asyncio.wait_for(play_two_tournaments(srv), 90)
    page = await browser.page()
    # The gauntlet's crosstable: a column for the pool bot, a score in every entrant's row.
    await page.goto(f"{srv.url}/tournaments/gaunt")
    heads = await page.locator("table.crosstable thead th").all_text_contents()
    assert "pool0" in heads
    column = heads.index("pool0")
    scores = {line["bot"]: line["against"]["pool0"] for line in field.gauntlet["crosstable"]}
    for row in await page.locator("table.crosstable tbody tr").all():
        cells = [c.strip() for c in await row.locator("td").all_text_contents()]
        shown = [float(p.replace("½", ".5")) for p in cells[column].split()]
        assert shown == scores[cells[1]], (cells, scores)
    await browser.shot(page, "gauntlet-crosstable")

    assert browser.dialogs == [] and browser.console_errors == []


async def test_a_round_robin_page_counts_its_rounds(
    live_server: LiveServer, browser: Browser
) -> None:
    srv = live_server
    await asyncio.wait_for(play_two_tournaments(srv), 90)
    page = await browser.page()
    await page.goto(f"{srv.url}/tournaments/rr")
    assert (await page.locator(".progress-round").inner_text()) == (
        "Round 2 of 2: 1 of 1 game decided"
    )
    assert (await page.locator(".progress-games").inner_text()) == (
        "2 of 2 games of the tournament decided"
    )

    assert browser.dialogs == [] and browser.console_errors == []


async def test_a_swiss_page_shows_the_round_of_all_rounds(
    live_server: LiveServer, browser: Browser
) -> None:
    srv = live_server
    names = [srv.create_bot(f"sw{i}")[0] for i in range(4)]
    created = post(srv, "/api/tournaments", srv.admin_token, name="sw", game="tic_tac_toe",
                   format="swiss", rounds=3, bots=names, no_show_s=600)  # fmt: skip
    assert created.status_code == 201, created.text
    assert post(srv, "/api/tournaments/sw/start", srv.admin_token).status_code == 200

    def drawn() -> dict[str, Any] | None:
        doc: dict[str, Any] = get(srv, "/api/tournaments/sw").json()
        return doc if doc["schedule"] else None

    await until(drawn, 20, "round 1 drawn")
    page = await browser.page()
    await page.goto(f"{srv.url}/tournaments/sw")
    assert await page.locator(".progress-round").inner_text() == (
        "Round 1 of 3: 0 of 2 games decided"
    )
    assert await page.locator(".progress-games").inner_text() == (
        "0 of 6 games of the tournament decided"
    )
    assert post(srv, "/api/tournaments/sw/cancel", srv.admin_token).status_code == 200
    assert browser.dialogs == [] and browser.console_errors == []
