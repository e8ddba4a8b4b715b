"""The pages over plain HTTP (no browser): status codes, headers, escaping, errors, boards."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import LiveServer

from ply_arena import games
from ply_arena.server.db.database import Database
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo

HTML = {"Accept": "text/html,application/xhtml+xml"}
SCRIPT = "<script>alert(1)</script>"
#: Written out here, not read from the app's constant: a weakened policy must fail this test.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


def assert_security_headers(response: Any, where: str) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, (where, name, response.headers.get(name))


async def test_every_page_is_html_with_the_security_headers(
    live_server: LiveServer, database: Database, store_match: Any
) -> None:
    stored = await store_match(database, game="connect_four", seed=1)
    for path in (
        "/", "/matches", "/matches?game=connect_four", "/leaderboard/connect_four",
        f"/bots/{stored.bots[0]}", f"/matches/{stored.match_id}",
    ):  # fmt: skip
        response = live_server.api("GET", path, headers=HTML)
        assert response.status_code == 200, (path, response.text[:300])
        assert response.headers["content-type"].startswith("text/html")
        assert_security_headers(response, path)
        # No inline script and no inline style: every script has a src or is JSON data.
        for tag in re.findall(r"<script[^>]*>", response.text):
            assert "src=" in tag or 'type="application/json"' in tag, (path, tag)
        assert "style=" not in response.text and "<style" not in response.text, path
        # Every asset is the app's own.
        assert not re.search(r"(src|href)=\"(https?:)?//", response.text), path


def test_every_kind_of_response_carries_the_security_headers(live_server: LiveServer) -> None:
    # JSON, errors, assets, SVG, a redirect-free 404 page: not only the HTML pages.
    for method, path, headers in (
        ("GET", "/api/health", {}),
        ("GET", "/api/games", {}),
        ("GET", "/api/matches/nope", {}),
        ("GET", "/no/such/page", HTML),
        ("GET", "/static/arena.css", {}),
        ("GET", "/boards/tic_tac_toe.svg?position=" + json.dumps(
            games.get("tic_tac_toe").state_to_json(games.get("tic_tac_toe").initial_state())
        ), {}),
        ("POST", "/api/bots", {}),
    ):  # fmt: skip
        response = live_server.api(method, path, headers=headers)
        assert_security_headers(response, f"{method} {path} -> {response.status_code}")


async def _hostile_match(database: Database) -> str:
    rules = games.get("tic_tac_toe")
    async with database.session() as session:
        ids = []
        for name in ("eve", "oscar"):
            bot, _ = await bot_repo.create_bot(session, name)
            ids.append(bot.id)
        await match_repo.create_match(
            session, match_id="h1", game="tic_tac_toe", bot_ids=ids,
            time_control={"move_ms": 1000, "bank_ms": 0}, policy="forfeit", seed=9,
        )  # fmt: skip
        state = rules.initial_state()
        for ply, text in enumerate(["b2", "a1"]):
            comment = "</script><script>alert(2)</script>" if ply else SCRIPT + "\x1b[2J\u202e"
            await match_repo.record_move(
                session, match_id="h1", ply=ply, seat=state.player, move=text, think_ms=5,
                info={"comment": comment, "score": 1e9 if ply else -0.25},
            )  # fmt: skip
            state = state.result(rules.parse_move(state, text))
        await match_repo.finish_match(
            session, match_id="h1", payoffs=[-1.0, 1.0], termination="timeout", at_fault=0,
            final_position=rules.state_to_json(state),
        )  # fmt: skip
    return "h1"


async def test_bot_text_is_escaped_in_the_page_and_in_its_data(
    live_server: LiveServer, database: Database
) -> None:
    match_id = await _hostile_match(database)
    page = live_server.api("GET", f"/matches/{match_id}", headers=HTML).text
    assert SCRIPT not in page and "alert(2)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # Control characters are shown as escapes; bot text is isolated from the page's direction.
    assert "\x1b" not in page and "\\x1b[2J" in page
    assert '<q class="comment"><bdi>' in page
    # The replay's data island cannot be closed by a comment either.
    island = re.search(
        r'<script type="application/json" id="match-data">(.*?)</script>', page, re.S
    )
    assert island is not None
    data = json.loads(island.group(1))
    assert data["mode"] == "replay" and len(data["positions"]) == 3
    assert "eve (X) lost on time at move 3." in page
    # Scores as large as a won position's are clipped in the chart, not lost.
    assert "<svg" in page.split("Evaluation")[1]


async def test_a_browser_gets_an_error_page_and_a_program_gets_json(
    live_server: LiveServer,
) -> None:
    for path, status in (
        ("/matches/nope", 404), ("/bots/nobody", 404), ("/leaderboard/chess", 404),
        ("/no/such/page", 404), ("/matches?status=odd", 400),
        ("/leaderboard/othello?offset=x", 400),
    ):  # fmt: skip
        response = live_server.api("GET", path, headers=HTML)
        assert response.status_code == status, path
        assert response.headers["content-type"].startswith("text/html"), path
        assert "Back to the home page" in response.text
    # The API and tools that do not ask for HTML keep the JSON errors.
    response = live_server.api("GET", "/no/such/page")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    response = live_server.api("GET", "/api/matches/nope", headers=HTML)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("game", games.names())
def test_boards_are_drawn_for_any_valid_position_only(live_server: LiveServer, game: str) -> None:
    rules = games.get(game)
    state = rules.initial_state()
    while state.is_chance_node():
        state = state.result(state.chance_outcomes()[0][0])
    position = rules.state_to_json(state)
    response = live_server.api(
        "GET", f"/boards/{game}.svg", params={"position": json.dumps(position)}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert json.loads(re.search(r'data-position="([^"]*)"', response.text).group(1)  # type: ignore[union-attr]
                      .replace("&quot;", '"')) == position  # fmt: skip
    for bad in ("{", "[]", json.dumps({"board": SCRIPT}), "[" * 3000, "x" * 5000):
        response = live_server.api("GET", f"/boards/{game}.svg", params={"position": bad})
        assert response.status_code == 400, bad[:20]
        assert SCRIPT not in response.text
    assert live_server.api("GET", f"/boards/{game}.svg").status_code == 400
    assert live_server.api("GET", "/boards/chess.svg", params={"position": "{}"}).status_code == 404


def test_assets_are_served_by_the_app(live_server: LiveServer) -> None:
    page = live_server.api("GET", "/", headers=HTML).text
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert any(a.startswith("/static/arena.css?v=") for a in assets)
    for asset in assets:
        response = live_server.api("GET", asset)
        assert response.status_code == 200, asset
    css = live_server.api("GET", "/static/arena.css")
    assert css.headers["content-type"].startswith("text/css")
    assert "@import" not in css.text and "url(http" not in css.text  # nothing from elsewhere


def test_a_board_marks_the_move_that_led_to_it(live_server: LiveServer) -> None:
    rules = games.get("connect_four")
    state = rules.initial_state()
    state = state.result(rules.parse_move(state, "4"))
    position = json.dumps(rules.state_to_json(state))
    marked = live_server.api(
        "GET", "/boards/connect_four.svg", params={"position": position, "last": "4"}
    ).text
    assert "last-move" in marked
    for nothing in ("", "9", SCRIPT, "4" * 500):
        plain = live_server.api(
            "GET", "/boards/connect_four.svg", params={"position": position, "last": nothing}
        )
        assert plain.status_code == 200 and "last-move" not in plain.text, nothing
        assert SCRIPT not in plain.text
