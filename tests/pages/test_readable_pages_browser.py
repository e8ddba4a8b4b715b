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
