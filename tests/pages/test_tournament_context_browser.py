"""Tournaments in context in a real browser: the gauntlet's crosstable of entrants against
the pool, and a tournament page showing the round under way of all its rounds and the games
decided in it and in the whole tournament."""

from __future__ import annotations

import asyncio
from typing import Any

from _api import get, post
from _browser import Browser
from _tournament_field import play_two_tournaments
from _waiting import until
from conftest import LiveServer


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
