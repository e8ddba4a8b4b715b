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

from ply_arena import games
from ply_arena.protocol.client import BotClient
from ply_arena.reference_agents.registry import make
from ply_arena.server.db.database import Database
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo

#: How a table's box and its content compare, and whether the box shows that it scrolls.
TABLES = """() => Array.from(document.querySelectorAll('.table-wrap')).map(w => ({
  table: w.querySelector('table').className,
  overflow: w.scrollWidth - w.clientWidth,
  cue: getComputedStyle(w).backgroundImage.includes('gradient')
    && ['auto', 'scroll'].includes(getComputedStyle(w).overflowX),
}))"""

#: Bot and game names drawn on more than one line (an inline link broken across lines has
#: several boxes).
BROKEN_NAMES = """() => Array.from(document.querySelectorAll('a.bot, a[href^="/leaderboard/"]'))
  .filter(a => a.getClientRects().length > 1).map(a => a.textContent)"""

#: The size, in CSS pixels, each text of the page's charts is drawn at.
CHART_LABEL_PX = """() => Array.from(document.querySelectorAll('figure.chart svg')).flatMap(svg => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return Array.from(svg.querySelectorAll('text'))
    .map(t => Number(t.getAttribute('font-size')) * scale);
})"""


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
        # A chart's labels are no bigger than the page's small text, however wide the page.
        sizes = await page.evaluate(CHART_LABEL_PX)
        assert max(sizes, default=0) <= 17, (path, sizes)
        assert path != f"/bots/{names[0]}" or sizes  # the bot's rating chart is there
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

    # Othello: the disc count under the board, right at every position stepped to (each read
    # in one go from the board drawn, once the board shows the new position).
    await page.goto(f"{live_server.url}/matches/{othello.match_id}")
    await page.keyboard.press("Home")
    await page.wait_for_function(
        "() => JSON.parse(document.querySelector('#board svg').dataset.position).board[3]"
        " === '...WB...'"
    )
    for key in ("ArrowRight", "ArrowRight", "ArrowRight", "End", None):
        counted = await page.evaluate(DISC_COUNTS)
        assert counted["discs"] == counted["shown"] == counted["data"], (key, counted)
        if key is None:
            break
        before = await page.locator("#board svg").get_attribute("data-position")
        await page.keyboard.press(key)
        await page.wait_for_function(
            "(before) => document.querySelector('#board svg').dataset.position !== before",
            arg=before,
        )
    await browser.shot(page, "othello-disc-count")

    # Backgammon: the board uses the room a 1280 px page has, and shows both numberings, the
    # seat on turn's in bold.
    await page.goto(f"{live_server.url}/matches/{backgammon.match_id}")
    assert await _board_width(page) >= 600
    await page.goto(
        f"{live_server.url}/analyze?game=backgammon&moves=3-1+8/5+6/5+6-5&agent=expectiminimax&depth=1"
    )
    assert await _board_width(page) >= 500
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


async def _store_scored_match(database: Database, bots: list[str]) -> str:
    """A finished tic-tac-toe match whose bots reported scores with many decimals."""
    rules = games.get("tic_tac_toe")
    async with database.session() as session:
        ids = []
        for name in bots:
            bot = await bot_repo.bot_by_name(session, name)
            if bot is None:
                bot, _ = await bot_repo.create_bot(session, name)
            ids.append(bot.id)
        await match_repo.create_match(
            session, match_id="scored1", game="tic_tac_toe", bot_ids=ids,
            time_control={"move_ms": 1000, "bank_ms": 0}, policy="forfeit", seed=1,
        )  # fmt: skip
        state = rules.initial_state()
        for ply, (text, value) in enumerate([("b2", 0.0271532), ("a1", -0.123456), ("c3", 312.66)]):
            await match_repo.record_move(
                session, match_id="scored1", ply=ply, seat=state.player, move=text,
                think_ms=10, info={"score": value, "depth": 2},
            )  # fmt: skip
            state = state.result(rules.parse_move(state, text))
        await match_repo.finish_match(
            session, match_id="scored1", payoffs=[1.0, -1.0], termination="resign",
            at_fault=1, final_position=rules.state_to_json(state),
        )  # fmt: skip
    return "scored1"


async def test_numbers_and_words_read_as_people_write_them(
    live_server: LiveServer, database: Database, browser: Browser
) -> None:
    match_id = await _store_scored_match(database, ["scorer-a", "scorer-b"])
    page = await browser.page(width=1280, height=900)
    await page.goto(f"{live_server.url}/matches/{match_id}")
    scores = [
        s for s in await page.locator("#moves td.info span").all_text_contents() if "score" in s
    ]
    assert scores == ["score 0.0272", "score -0.123", "score 313"]
    # The evaluation chart's labels are no bigger than the page's small text.
    sizes = await page.evaluate(CHART_LABEL_PX)
    assert sizes and max(sizes) <= 17, sizes
    await page.goto(f"{live_server.url}/bots/scorer-a")
    await browser.shot(page, "bot-chart-1280")

    # The analysis page: the status line starts with a capital.
    await page.goto(f"{live_server.url}/analyze?game=backgammon&moves=3-1+8/5+6/5+6-5")
    assert await page.locator("#position-status").inner_text() == "Black to move"
    assert browser.dialogs == [] and browser.console_errors == []


async def test_another_game_or_agent_picked_on_the_analysis_page_never_leaves_a_stale_tree(
    live_server: LiveServer, browser: Browser
) -> None:
    page = await browser.page(width=1280, height=900)
    await page.goto(f"{live_server.url}/analyze?game=tic_tac_toe&moves=b2&agent=alphabeta&depth=2")
    await page.locator("#tree-box svg").wait_for()
    assert await page.locator("#best").inner_text() != ""
    # Another game: its start, with no search of the game before.
    async with page.expect_navigation():
        await page.select_option("select[name=game]", "connect_four")
    assert "game=connect_four" in page.url
    assert await page.locator("#board svg.board-connect_four").count() == 1
    assert await page.locator("#tree-box svg").count() == 0
    assert await page.locator("#best").count() == 0
    assert await page.locator("input[name=moves]").input_value() == ""
    # Another agent: its search, run at once.
    async with page.expect_navigation():
        await page.select_option("select[name=agent]", "minimax")
    assert "agent=minimax" in page.url
    await page.locator("#tree-box svg").wait_for()
    assert (await page.locator("#summary").inner_text()).count("minimax") >= 1
    assert browser.dialogs == [] and browser.console_errors == []


async def _board_width(page: Any) -> float:
    """The board's drawn width, read in one go once a board is drawn: the page's script may
    draw it again just after loading, and a locator's bounding box of the board it replaced is
    None (seen in a doubled run)."""
    await page.wait_for_function(
        "() => { const svg = document.querySelector('#board svg');"
        " return svg !== null && svg.getBoundingClientRect().width > 0; }"
    )
    width = await page.evaluate(
        "() => document.querySelector('#board svg').getBoundingClientRect().width"
    )
    return float(width)


#: Each seat's discs on the board drawn, and the count under it (its text and ``data-count``).
DISC_COUNTS = """() => {
  const svg = document.querySelector('#board svg');
  const seats = [0, 1];
  return {
    discs: seats.map(n => svg.querySelectorAll('.piece.seat-' + n).length),
    shown: seats.map(n => Number((svg.querySelector('.disc-count.seat-' + n) || {textContent: ''})
      .textContent.split(' ').pop())),
    data: seats.map(n => Number((svg.querySelector('.disc-count.seat-' + n) || {dataset: {}})
      .dataset.count)),
  };
}"""
