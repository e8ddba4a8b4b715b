"""The tournament and class pages in a real browser: the standings shown are the export's, the
games link to their matches, and a class page lists its own bots and tournaments only."""

from __future__ import annotations

import asyncio
import csv
import io
import re
import time
from collections.abc import Callable
from typing import Any

from _browser import Browser
from _tournament_field import tournament_bots
from conftest import LiveServer


async def until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := await asyncio.to_thread(condition)):
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await asyncio.sleep(0.05)
    return value


def _post(srv: LiveServer, path: str, token: str, **body: Any) -> Any:
    response = srv.api("POST", path, json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code in (200, 201), response.text
    return response.json()


async def _play_to_the_end(srv: LiveServer, name: str, tokens: list[str]) -> dict[str, Any]:
    async with tournament_bots(srv, tokens):
        _post(srv, f"/api/tournaments/{name}/start", srv.admin_token)
        doc: dict[str, Any] = await until(
            lambda: (
                (d := srv.api("GET", f"/api/tournaments/{name}").json())["status"] == "finished"
                and d
            ),
            120,
            "the tournament to finish",
        )
    return doc


async def test_the_tournament_page_shows_the_exported_standings(
    live_server: LiveServer, browser: Browser
) -> None:
    srv = live_server
    a = _post(srv, "/api/classes", srv.admin_token, name="class-one")
    b = _post(srv, "/api/classes", srv.admin_token, name="class-two")
    tokens = [
        _post(srv, "/api/register", "-", code=a["join_code"], name=f"one{i}", owner=f"o{i}@x.es")[
            "token"
        ]
        for i in range(3)
    ]
    _post(srv, "/api/register", "-", code=b["join_code"], name="two0", owner="t@x.es")
    _post(srv, "/api/tournaments", a["instructor_token"], name="cup", game="tic_tac_toe",
          format="round_robin")  # fmt: skip
    doc = await _play_to_the_end(srv, "cup", tokens)

    page = await browser.page()
    await page.goto(f"{srv.url}/tournaments/cup")
    rows = await page.locator("table.standings tbody tr").all()
    shown = []
    for row in rows:
        cells = [c.strip() for c in await row.locator("td").all_text_contents()]
        shown.append((int(cells[0]), cells[1], float(cells[2].replace("½", ".5"))))
    exported = list(
        csv.DictReader(
            io.StringIO(
                srv.api("GET", "/api/tournaments/cup/export?what=standings&format=csv").text
            )
        )
    )
    assert shown == [(int(r["rank"]), r["bot"], float(r["points"])) for r in exported]  # fmt: skip
    assert len(shown) == 3 and [r["bot"] for r in doc["standings"]] == [s[1] for s in shown]
    # Every game links to its match, and the crosstable has a row per entrant.
    links = await page.locator(".round-games a.match-link").all()
    assert len(links) == 6
    # Each game's result as the standings count it, then in words: "1-0, one2 won".
    results = await page.locator(".round-games .game-score").all_text_contents()
    assert len(results) == 6
    assert all(re.fullmatch(r"(1-0, \S+ won|0-1, \S+ won|½-½, drawn)", r) for r in results), results
    assert await page.locator("table.crosstable tbody tr").count() == 3
    first = await links[0].get_attribute("href")
    await page.goto(f"{srv.url}{first}")
    assert "tic_tac_toe" in (await page.content()).lower() or "Tic-tac-toe" in await page.content()
    await browser.shot(page, "tournament-match")

    # The class page: its bots and its tournament, not the other class's.
    await page.goto(f"{srv.url}/classes/class-one")
    bots = await page.locator("ul.class-bots li a.bot").all_text_contents()
    assert sorted(bots) == ["one0", "one1", "one2"]
    assert await page.locator('ul.class-tournaments a[href="/tournaments/cup"]').count() == 1
    await page.goto(f"{srv.url}/classes/class-two")
    assert await page.locator("ul.class-bots li a.bot").all_text_contents() == ["two0"]
    assert await page.locator("ul.class-tournaments").count() == 0

    # At phone width the page body never scrolls sideways.
    narrow = await browser.page(375, 800)
    for path in ("/tournaments", "/tournaments/cup"):
        await narrow.goto(f"{srv.url}{path}")
        width = await narrow.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, (path, width)
        # A table wider than its box (standings, crosstable) shows it scrolls: a shadow.
        cut = await narrow.evaluate(
            """() => Array.from(document.querySelectorAll('.table-wrap'))
              .filter(w => w.scrollWidth > w.clientWidth
                && !getComputedStyle(w).backgroundImage.includes('gradient'))
              .map(w => w.querySelector('table').className)"""
        )
        assert cut == [], (path, cut)
    await browser.shot(narrow, "tournament-375")
    assert browser.dialogs == [] and browser.console_errors == []
