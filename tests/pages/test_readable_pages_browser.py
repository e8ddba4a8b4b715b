"""What testers found on the pages at 1280 and 375 px (issue 24, "Pages"), in a real browser:
tables that cut their columns off without a cue, bot names broken mid-word, boards that do not
say what their notation needs, and the analysis page showing a stale tree.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _browser import Browser
from conftest import LiveServer

from ply_arena.protocol.client import BotClient
from ply_arena.reference_agents.registry import make
from ply_arena.server.db.database import Database

#: How a table's box and its content compare, and whether the box shows that it scrolls.
TABLES = """() => Array.from(document.querySelectorAll('.table-wrap')).map(w => ({
  table: w.querySelector('table').className,
  overflow: w.scrollWidth - w.clientWidth,
  cue: getComputedStyle(w).backgroundImage.includes('gradient')
    && ['auto', 'scroll'].includes(getComputedStyle(w).overflowX),
}))"""

#: Bot names drawn on more than one line (an inline link broken across lines has several boxes).
BROKEN_NAMES = """() => Array.from(document.querySelectorAll('a.bot'))
  .filter(a => a.getClientRects().length > 1).map(a => a.textContent)"""


def _agent(spec: str) -> Any:
    return lambda game: make(spec, game)


@pytest.mark.parametrize("width", [375, 1280])
async def test_tables_fit_or_show_they_scroll_and_names_stay_whole(
    live_server: LiveServer, browser: Browser, width: int
) -> None:
    names = ["ana-bot-alpha-01", "ben-bot-beta-02"]
    tokens = [live_server.create_bot(name)[1] for name in names]
    clients = [
        BotClient(live_server.ws_url, token, agent=_agent(spec), game="tic_tac_toe", games=2)
        for token, spec in zip(tokens, ["random", "alphabeta"], strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 60)
    page = await browser.page(width=width, height=800)
    for path in ("/", "/matches", "/leaderboard/tic_tac_toe", f"/bots/{names[0]}"):
        await page.goto(live_server.url + path)
        await browser.shot(page, f"tables-{width}{path.replace('/', '-')}")
        for table in await page.evaluate(TABLES):
            if table["overflow"] > 0:
                assert table["cue"], f"{path}: table.{table['table']} is cut at {width} px"
            if "stack" in table["table"].split():  # match lists, leaderboards: never cut
                assert table["overflow"] <= 0, f"{path}: table.{table['table']} at {width} px"
        assert await page.evaluate(BROKEN_NAMES) == [], f"{path} at {width} px"
    # On a phone the leaderboard's every column is there, labelled.
    if width == 375:
        await page.goto(f"{live_server.url}/leaderboard/tic_tac_toe")
        cell = page.locator("table.leaderboard tbody tr").first.locator("td.wdl")
        assert await cell.is_visible()
        box = await cell.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
    assert browser.dialogs == [] and browser.console_errors == []


async def test_the_boards_say_what_their_notation_needs(
    live_server: LiveServer, database: Database, store_match: Any, browser: Browser
) -> None:
    othello = await store_match(database, game="othello", seed=5, max_plies=20)
    backgammon = await store_match(database, game="backgammon", seed=2)
    chinese = await store_match(database, game="chinese_checkers", seed=4, max_plies=12)
    page = await browser.page(width=1280, height=900)

    # Othello: the disc count under the board, right at every position stepped to.
    await page.goto(f"{live_server.url}/matches/{othello.match_id}")
    for key in ("End", "Home", "ArrowRight", "ArrowRight", "ArrowRight"):
        await page.keyboard.press(key)
        for seat in (0, 1):
            discs = await page.locator(f"#board svg .piece.seat-{seat}").count()
            count = page.locator(f"#board svg .disc-count.seat-{seat}")
            assert await count.get_attribute("data-count") == str(discs), key
            assert (await count.text_content() or "").endswith(f" {discs}")
    await browser.shot(page, "othello-disc-count")

    # Backgammon: the board uses the room a 1280 px page has, and shows both numberings, the
    # seat on turn's in bold.
    await page.goto(f"{live_server.url}/matches/{backgammon.match_id}")
    box = await page.locator("#board svg").bounding_box()
    assert box is not None and box["width"] >= 600, box
    await page.goto(
        f"{live_server.url}/analyze?game=backgammon&moves=3-1+8/5+6/5+6-5&agent=expectiminimax&depth=1"
    )
    box = await page.locator("#board svg").bounding_box()
    assert box is not None and box["width"] >= 500, box
    # black to play 6-5: black's point 24 is white's 1, under it, in bold.
    black_24 = page.locator("#board svg text.point-number.seat-1", has_text="24").first
    white_1 = page.locator("#board svg text.point-number.seat-0", has_text="1").last  # bottom right
    assert await black_24.get_attribute("font-weight") == "bold"
    assert await white_1.get_attribute("font-weight") is None
    await browser.shot(page, "backgammon-analyze-1280")

    # Chinese checkers: the holes carry their names, rows their letters, and each seat's home
    # and goal are marked.
    await page.goto(f"{live_server.url}/matches/{chinese.match_id}")
    names = await page.locator("#board svg .hole title").all_text_contents()
    assert len(names) == 121 and "m2" in names and "a1" in names
    rows = await page.locator("#board svg .row-label").all_text_contents()
    assert rows == list("abcdefghijklmnopq")
    assert await page.locator("#board svg .home").count() == 3
    assert await page.locator("#board svg .target").count() == 3
    assert "row a-q" in (await page.locator("#board svg .naming").text_content() or "")
    await browser.shot(page, "chinese-checkers-names")
    assert browser.dialogs == [] and browser.console_errors == []
