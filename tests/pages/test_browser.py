"""The pages in a real browser (headless Chromium through Playwright): leaderboards after real
matches, a live match followed without a reload, replays stepped to their end, user text shown
as text, and every page at phone width.

Bots are the bot kit's BotClient in the test's own loop, playing through the live server;
stored matches come from ``store_match`` (seeded random legal games, dice from the seed).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import threading
import time
from typing import Any

import pytest
from _browser import Browser
from conftest import LiveServer

from ply_arena import games
from ply_arena.protocol.client import BotClient
from ply_arena.protocol.messages import TimeControl
from ply_arena.reference_agents.registry import make
from ply_arena.server.db.database import Database
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo

SCRIPT = "<script>alert(1)</script>"


def _agent(spec: str) -> Any:
    return lambda game: make(spec, game)


async def _until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


async def test_the_leaderboard_shows_results_and_ratings_after_reference_agents_play(
    live_server: LiveServer, browser: Browser
) -> None:
    _, random_token = live_server.create_bot("randy")
    _, ab_token = live_server.create_bot("alfa")
    clients = [
        BotClient(live_server.ws_url, random_token, agent=_agent("random"), game="tic_tac_toe",
                  games=3),
        BotClient(live_server.ws_url, ab_token, agent=_agent("alphabeta"), game="tic_tac_toe",
                  games=3),
    ]  # fmt: skip
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 60)
    board = live_server.api("GET", "/api/leaderboard/tic_tac_toe").json()["ranking"]
    assert {row["bot"] for row in board} == {"randy", "alfa"}

    page = await browser.page()
    await page.goto(f"{live_server.url}/leaderboard/tic_tac_toe")
    rows = page.locator("table.leaderboard tbody tr")
    assert await rows.count() == 2
    for i, expected in enumerate(board):
        cells = rows.nth(i).locator("td")
        assert (await cells.nth(0).inner_text()).strip() == str(expected["rank"])
        assert (await cells.nth(1).inner_text()).strip().startswith(expected["bot"])
        rating = (await cells.nth(2).inner_text()).strip().rstrip("?")
        assert rating == f"{expected['conservative']:.1f}"
        wdl = f"{expected['wins']}/{expected['draws']}/{expected['losses']}"
        assert (await cells.nth(4).inner_text()).strip() == wdl
        # The sparkline has one point per rated match (3 each).
        points = await rows.nth(i).locator("td.spark polyline").get_attribute("points")
        assert points is not None and len(points.split()) == expected["matches"] == 3
    await browser.shot(page, "leaderboard-tic_tac_toe")

    # The home page lists the results, each linking to its match.
    await page.goto(live_server.url + "/")
    recent = page.locator("table.matches tbody tr")
    assert await recent.count() == 3
    first = live_server.api("GET", "/api/matches", params={"limit": 1}).json()["matches"][0]
    link = recent.first.locator("td").first.locator("a")
    assert await link.get_attribute("href") == f"/matches/{first['id']}"
    winner = next((s for s in first["seats"] if s["payoff"] == 1), None)
    result = (await recent.first.locator("td").nth(2).inner_text()).strip()
    assert result == (f"{winner['bot']} ({'XO'[winner['seat']]}) won" if winner else "drawn")
    assert browser.dialogs == [] and browser.console_errors == []


def _slow_random(delay: float) -> Any:
    def choose(state: Any, legal: list[str], clock: Any) -> str:
        time.sleep(delay)
        return random.choice(legal)

    return choose


class _Gate:
    """Lets the bots of a match make only as many moves as the test allows, so the match is
    still running, whatever the machine's load, when the test looks at its live page."""

    def __init__(self) -> None:
        self.allowed = 0
        self.made = 0
        self._changed = threading.Condition()

    def allow(self, moves: float) -> None:
        with self._changed:
            self.allowed = moves  # type: ignore[assignment]
            self._changed.notify_all()

    def agent(self, delay: float) -> Any:
        def choose(state: Any, legal: list[str], clock: Any) -> str:
            with self._changed:
                self._changed.wait_for(lambda: self.made < self.allowed, timeout=50)
                self.made += 1
            time.sleep(delay)
            return random.choice(legal)

        return choose


async def test_a_live_match_page_updates_without_a_reload(
    live_server: LiveServer, browser: Browser
) -> None:
    _, token_a = live_server.create_bot("livea")
    _, token_b = live_server.create_bot("liveb")
    # Long enough for the gate's holds on a loaded machine; no move is late.
    tc = TimeControl(move_ms=30_000, bank_ms=0)
    gate = _Gate()
    clients = [
        BotClient(live_server.ws_url, token_a, gate.agent(0.05), game="connect_four", games=1,
                  time_control=tc, client_name=SCRIPT),
        BotClient(live_server.ws_url, token_b, gate.agent(0.05), game="connect_four", games=1,
                  time_control=tc),
    ]  # fmt: skip
    tasks = [asyncio.create_task(c.run()) for c in clients]
    referee = live_server.app.state.referee
    try:
        await _until(lambda: referee.matches, 20, "the match to start")
        runner = next(iter(referee.matches.values()))
        page = await browser.page()
        await page.goto(f"{live_server.url}/matches/{runner.match_id}")
        await page.evaluate("() => { window.notReloaded = true; }")
        assert await page.locator(".tag.live").count() == 1
        # The seat of the bot whose client said <script>: shown as text.
        assert SCRIPT in await page.locator(".seats").inner_text()
        shown = await page.locator("#moves tr").count()
        assert shown == 0  # the gate has let no move through yet
        # Moves arrive over the spectator stream: rows and the board follow, no reload. Three
        # moves are let through: no Connect Four match ends in fewer than seven, so it is
        # still live when the page is read.
        # (Predicates are functions: a string expression is an eval, which the page's CSP
        # refuses.)
        gate.allow(3)
        await page.wait_for_function(
            "(n) => document.querySelectorAll('#moves tr').length >= n",
            arg=3,
            timeout=30_000,
        )
        # The board is drawn after its row is added: waited for in its turn.
        await page.wait_for_function(
            """() => {
                const svg = document.querySelector('#board svg');
                if (!svg) return false;
                const board = JSON.parse(svg.dataset.position).board;
                return board.join('').split('').filter((c) => c !== '.').length === 3;
            }""",
            timeout=30_000,
        )
        assert await page.evaluate("() => window.notReloaded === true")
        assert await page.locator("#moves tr").count() == 3
        position = json.loads(await page.locator("#board svg").get_attribute("data-position"))
        assert sum(row.count(".") for row in position["board"]) == 42 - 3  # three discs
        clocks = await page.locator(".clock").all_inner_texts()
        assert all(re.fullmatch(r"\d+\.\d s( \+ \d+\.\d s)?", t.strip()) for t in clocks), clocks
        assert "so far" in await page.locator("#result").inner_text()
        await browser.shot(page, "live-connect_four")
        gate.allow(float("inf"))
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
        # At the end the page turns into the replay, which says how the match ended.
        await page.wait_for_function("() => window.notReloaded === undefined", timeout=15_000)
        await page.locator("#slider").wait_for()
        assert "after" in await page.locator("#result").inner_text()
    finally:
        gate.allow(float("inf"))
        for task in tasks:
            task.cancel()
    assert browser.dialogs == [] and browser.console_errors == []


async def _board_position(page: Any) -> dict[str, Any]:
    return json.loads(await page.locator("#board svg").get_attribute("data-position"))


async def _step_to(page: Any, key: str, index: int, position: dict[str, Any]) -> None:
    """Press ``key`` and wait until the board shows ``position`` (the fetch is asynchronous)."""
    await page.keyboard.press(key)
    await _shows(page, position)
    assert await page.locator("#slider").input_value() == str(index)


async def _shows(page: Any, position: dict[str, Any]) -> None:
    """Wait until the board shows ``position``: the page's script draws it again once it has
    started (a read at one instant may fall between the server's board and the script's)."""
    expected = json.dumps(position, sort_keys=True)
    await page.wait_for_function(
        """(expected) => {
            const svg = document.querySelector('#board svg');
            if (!svg) return false;
            const sorted = (v) => Array.isArray(v) ? v.map(sorted) : (v && typeof v === 'object')
                ? Object.keys(v).sort().reduce((o, k) => (o[k] = sorted(v[k]), o), {}) : v;
            return JSON.stringify(sorted(JSON.parse(svg.dataset.position))) ===
                   JSON.stringify(sorted(JSON.parse(expected)));
        }""",
        arg=expected,
    )


async def test_a_backgammon_replay_steps_to_the_end_with_the_dice(
    live_server: LiveServer, database: Database, store_match: Any, browser: Browser
) -> None:
    stored = await store_match(database, game="backgammon", seed=7)
    record = live_server.api("GET", f"/api/matches/{stored.match_id}/replay").json()
    positions = [record["initial"]["position"]] + [p["position"] for p in record["plies"]]
    page = await browser.page()
    await page.goto(f"{live_server.url}/matches/{stored.match_id}")
    # It opens at the end: the board is the stored final position.
    await _shows(page, stored.final_position)
    assert await _board_position(page) == stored.final_position
    await _step_to(page, "Home", 0, positions[0])
    # Forward until a position with dice: the board draws those dice.
    index = 0
    while positions[index]["dice"] is None:
        index += 1
        await _step_to(page, "ArrowRight", index, positions[index])
    dice = page.locator("#board svg .die")
    assert sorted([int(await d.get_attribute("data-value")) for d in await dice.all()]) == sorted(
        positions[index]["dice"]
    )
    await browser.shot(page, "replay-backgammon-dice")
    await _step_to(page, "End", len(positions) - 1, stored.final_position)
    assert await _board_position(page) == stored.final_position
    # The move list marks the last move; dice rolls are listed as such.
    assert await page.locator("#moves tr.current").get_attribute("data-index") == str(
        len(positions) - 1
    )
    assert await page.locator("#moves tr.dice").count() == sum(
        1 for _, seat, _ in stored.events if seat is None
    )
    assert "Verified" in await page.locator(".verified").inner_text()
    assert browser.dialogs == [] and browser.console_errors == []


async def test_a_chinese_checkers_replay_shows_three_seats(
    live_server: LiveServer, database: Database, store_match: Any, browser: Browser
) -> None:
    stored = await store_match(database, game="chinese_checkers", seed=3, max_plies=30)
    page = await browser.page()
    await page.goto(f"{live_server.url}/matches/{stored.match_id}")
    seats = page.locator(".seats .seat")
    assert await seats.count() == 3
    for seat, bot in enumerate(stored.bots):
        text = await seats.nth(seat).inner_text()
        assert bot in text and games.get("chinese_checkers").seat_names[seat] in text
    for seat in range(3):
        assert await page.locator(f"#board svg .piece.seat-{seat}").count() == 10
    assert await _board_position(page) == stored.final_position
    assert "move limit" in await page.locator("#result").inner_text()
    await browser.shot(page, "replay-chinese_checkers")
    assert browser.dialogs == [] and browser.console_errors == []


async def _store_hostile_match(database: Database, bots: list[str]) -> str:
    """A finished tic-tac-toe match whose moves carry <script> in every text a bot may send."""
    rules = games.get("tic_tac_toe")
    async with database.session() as session:
        ids = [(await bot_repo.bot_by_name(session, b)).id for b in bots]  # type: ignore[union-attr]
        await match_repo.create_match(
            session, match_id="hostile1", game="tic_tac_toe", bot_ids=ids,
            time_control={"move_ms": 1000, "bank_ms": 0}, policy="forfeit", seed=1,
        )  # fmt: skip
        state = rules.initial_state()
        for ply, text in enumerate(["b2", "a1", "c3"]):
            await match_repo.record_move(
                session, match_id="hostile1", ply=ply, seat=state.player, move=text,
                think_ms=10, info={"comment": SCRIPT, "pv": ["a2"], "score": 0.5, "depth": 1},
            )  # fmt: skip
            state = state.result(rules.parse_move(state, text))
        await match_repo.finish_match(
            session, match_id="hostile1", payoffs=[1.0, -1.0], termination="resign",
            at_fault=1, final_position=rules.state_to_json(state),
        )  # fmt: skip
    return "hostile1"


async def test_user_text_is_shown_as_text_on_every_page(
    live_server: LiveServer, database: Database, browser: Browser
) -> None:
    live_server.create_bot("mallory")
    _, token = live_server.create_bot("trudy")
    match_id = await _store_hostile_match(database, ["mallory", "trudy"])
    # trudy is connected with a <script> as its client name.
    client = BotClient(
        live_server.ws_url,
        token,
        _slow_random(0),
        client_name=SCRIPT,
        games=0,
        accept_challenges=True,
    )
    task = asyncio.create_task(client.run())
    try:
        page = await browser.page()
        # The bot page says what trudy's client is once trudy is connected.
        deadline = time.monotonic() + 20
        while True:
            await page.goto(f"{live_server.url}/bots/trudy")
            if await page.locator("q.client").count():
                break
            assert time.monotonic() < deadline, "trudy did not log in within 20 s"
            await asyncio.sleep(0.1)
        assert await page.locator("q.client").inner_text() == SCRIPT
        await page.goto(f"{live_server.url}/matches/{match_id}")
        comments = await page.locator("#moves q.comment").all_inner_texts()
        assert comments == [SCRIPT] * 3
        assert await page.locator("#result").inner_text() == "trudy (O) resigned at move 4."
        for path in ("/", "/matches", "/bots/mallory", f"/matches/{match_id}"):
            await page.goto(live_server.url + path)
            assert (
                await page.locator("script:not([src]):not([type='application/json'])").count() == 0
            )
    finally:
        task.cancel()
    assert browser.dialogs == []
    assert browser.console_errors == []


@pytest.mark.parametrize("width", [375])
async def test_every_page_fits_a_phone_screen(
    live_server: LiveServer, database: Database, store_match: Any, browser: Browser, width: int
) -> None:
    bg = await store_match(
        database,
        game="backgammon",
        seed=2,
        bots=["a-rather-long-bot-name-01", "another-long-bot-name-02"],
    )
    cc = await store_match(database, game="chinese_checkers", seed=4, max_plies=12)
    await store_match(database, game="othello", seed=5)
    created = live_server.api(
        "POST", "/api/classes", admin=True, json={"name": "a-long-class-name-2026"}
    )
    assert created.status_code == 201, created.text
    joined = live_server.api(
        "POST",
        "/api/register",
        json={
            "code": created.json()["join_code"],
            "name": "a-rather-long-student-bot-name",
            "owner": "x",
        },
    )
    assert joined.status_code == 201, joined.text
    page = await browser.page(width=width, height=800)
    for path in (
        "/",
        "/matches",
        "/leaderboard/backgammon",
        f"/bots/{bg.bots[0]}",
        f"/matches/{bg.match_id}",
        f"/matches/{cc.match_id}",
        "/analyze?game=chinese_checkers&agent=maxn&depth=2",
        "/classes/a-long-class-name-2026",
        "/leaderboard/backgammon?class=a-long-class-name-2026",
        "/analyze?game=backgammon&moves=3-1+8/5+6/5+6-5&agent=expectiminimax&depth=1",
        "/no/such/page",
    ):  # fmt: skip  (the 404 page last: the browser logs its status as a console error)
        await page.goto(live_server.url + path)
        overflow = await page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        await browser.shot(page, f"phone{path.replace('/', '-')}")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow} px at {width} px"
    # Stepping through a replay on a phone scrolls the move list's box, never the page away
    # from the board.
    await page.goto(f"{live_server.url}/matches/{bg.match_id}")
    for key in ("Home", "ArrowRight", "ArrowRight", "End"):
        await page.keyboard.press(key)
        assert await page.evaluate("() => window.scrollY") == 0, key
    assert browser.dialogs == []
    assert [e for e in browser.console_errors if "404" not in e] == []
