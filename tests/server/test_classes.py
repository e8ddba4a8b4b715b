"""Classes on a real server: the admin creates one, students register bots with its join code
(over REST and with ``arena register``), the instructor manages its class and nothing else, the
leaderboard and the class page rank the class's bots, and owners stay private."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from _api import error_of as _error
from _api import get as _get
from _api import post as _post
from conftest import LiveServer
from typer.testing import CliRunner

from ply_arena.protocol.client import BotClient
from ply_arena.reference_agents.registry import make
from ply_arena.server.cli import app


def _new_class(srv: LiveServer, name: str) -> dict[str, Any]:
    response = _post(srv, "/api/classes", srv.admin_token, name=name)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _register(srv: LiveServer, code: str, name: str, owner: str = "Ana Pérez") -> httpx.Response:
    return _post(srv, "/api/register", code=code, name=name, owner=owner)


async def test_a_class_from_creation_to_its_leaderboard(live_server: LiveServer) -> None:
    created = _new_class(live_server, "ai-2026")
    assert set(created) == {"name", "join_code", "join_open", "created_at", "instructor_token"}
    code, instructor = created["join_code"], created["instructor_token"]
    assert len(code) == 9 and code[4] == "-" and created["join_open"] is True
    # Students type the code as they like: case, dashes and spaces do not matter.
    first = _register(live_server, code.lower().replace("-", " "), "ana-bot", "ana@uni.es")
    assert first.status_code == 201, first.text
    second = _register(live_server, code, "ben-bot", "Ben Ortiz")
    assert second.status_code == 201, second.text
    assert first.json()["class"] == "ai-2026" and first.json()["token"]

    # The instructor sees the class's bots with their owners.
    view = _get(live_server, "/api/classes/ai-2026", instructor).json()
    assert view["join_code"] == code
    assert [(b["name"], b["owner"]) for b in view["bots"]] == [
        ("ana-bot", "ana@uni.es"),
        ("ben-bot", "Ben Ortiz"),
    ]
    # Nobody else does: the public answers and pages have no owner.
    for path in ("/api/bots", "/api/bots/ana-bot", "/bots/ana-bot", "/classes/ai-2026"):
        text = _get(live_server, path).text
        assert "ana@uni.es" not in text and "Ben Ortiz" not in text, path

    # The tokens log the bots in: they play, and the class's leaderboard ranks them.
    clients = [
        BotClient(live_server.ws_url, r.json()["token"], agent=lambda g: make("random", g),
                  game="tic_tac_toe", games=2)
        for r in (first, second)
    ]  # fmt: skip
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 60)
    admin_bot = live_server.create_bot("outsider")  # rated elsewhere, not in the class
    assert admin_bot
    board = _get(live_server, "/api/leaderboard/tic_tac_toe?class=ai-2026").json()
    assert board["class"] == "ai-2026"
    assert {row["bot"] for row in board["ranking"]} == {"ana-bot", "ben-bot"}
    assert [row["rank"] for row in board["ranking"]] == [1, 2]
    page = _get(live_server, "/classes/ai-2026")
    assert page.status_code == 200 and "ana-bot" in page.text and "ben-bot" in page.text
    assert 'data-game="tic_tac_toe"' in page.text
    filtered = _get(live_server, "/leaderboard/tic_tac_toe?class=ai-2026")
    assert filtered.status_code == 200 and "of class" in filtered.text
    _error(_get(live_server, "/api/leaderboard/tic_tac_toe?class=nope"), 404, "not_found")
    shown = CliRunner().invoke(
        app, ["leaderboard", "tic_tac_toe", "--url", live_server.url, "--class", "ai-2026",
              "--json"],
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert {row["bot"] for row in json.loads(shown.output)["ranking"]} == {"ana-bot", "ben-bot"}

    # The instructor disables a bot: it is closed and refused, and left out of the ranking.
    assert _post(live_server, "/api/bots/ben-bot/disable", instructor).status_code == 200
    board = _get(live_server, "/api/leaderboard/tic_tac_toe?class=ai-2026").json()
    assert [row["bot"] for row in board["ranking"]] == ["ana-bot"]
    assert _post(live_server, "/api/bots/ben-bot/enable", instructor).status_code == 200
    rotated = _post(live_server, "/api/bots/ana-bot/rotate", instructor)
    assert rotated.status_code == 200 and rotated.json()["token"] != first.json()["token"]


def test_registration_is_refused_with_a_code_that_says_why(live_server: LiveServer) -> None:
    created = _new_class(live_server, "ai-2027")
    code, instructor = created["join_code"], created["instructor_token"]
    assert "check it with your instructor" in _error(
        _register(live_server, "ZZZZ-ZZZZ", "x1"), 403, "bad_join_code"
    )
    assert _register(live_server, code, "taken").status_code == 201
    assert "already exists" in _error(_register(live_server, code, "TAKEN"), 409, "conflict")
    _error(_register(live_server, code, "bad name!"), 400, "bad_request")
    _error(_register(live_server, code, "a" * 65), 400, "bad_request")
    _error(_register(live_server, code, "house-x"), 400, "bad_request")
    _error(_register(live_server, code, "no-owner", owner="  "), 400, "bad_request")
    _error(_register(live_server, code, "long-owner", owner="o" * 255), 400, "bad_request")
    _error(_register(live_server, code, "ctl-owner", owner="a\x1bb"), 400, "bad_request")
    _error(_post(live_server, "/api/register", code=code, name="n"), 400, "invalid_message")
    _error(
        _post(live_server, "/api/register", code=code, name="n", owner="o", extra="x"),
        400,
        "invalid_message",
    )
    _error(_post(live_server, "/api/register", code=code, name=5, owner="o"), 400,
           "invalid_message")  # fmt: skip

    # Closed: nobody registers until it is opened again.
    assert _post(live_server, "/api/classes/ai-2027/code/close", instructor).status_code == 200
    assert "ask your instructor" in _error(_register(live_server, code, "late"), 403,
                                           "join_closed")  # fmt: skip
    assert _post(live_server, "/api/classes/ai-2027/code/open", instructor).status_code == 200
    # Rotated: the old code registers nobody, the new one does.
    new_code = _post(live_server, "/api/classes/ai-2027/code/rotate", instructor).json()
    assert new_code["join_code"] != code
    _error(_register(live_server, code, "old-code"), 403, "bad_join_code")
    assert _register(live_server, new_code["join_code"], "new-code").status_code == 201


def test_flooding_registrations_from_one_address_is_refused(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(register_limit=3, register_window_s=600)
    code = _new_class(srv, "flood")["join_code"]
    answers = [_register(srv, code, f"f{i}").status_code for i in range(3)]
    assert answers == [201, 201, 201]
    refused = _register(srv, code, "f3")
    assert "too many registrations" in _error(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["retry-after"]) <= 600
    # Wrong codes count too: guessing codes is as limited as registering.
    _error(_register(srv, "ZZZZ-ZZZZ", "f4"), 429, "rate_limited")
    names = {b["name"] for b in _get(srv, "/api/bots").json()["bots"]}
    assert {"f0", "f1", "f2"} <= names and "f3" not in names


def test_arena_register_on_the_command_line(live_server: LiveServer) -> None:
    code = _new_class(live_server, "cli-class")["join_code"]
    command = [sys.executable, "-m", "ply_arena", "register",
               "--url", live_server.url, "--code", code, "--owner", "eve@uni.es"]  # fmt: skip
    done = subprocess.run([*command, "eve-bot"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip().splitlines()[-1]
    assert "Registered bot 'eve-bot' in class 'cli-class'" in done.stdout
    assert len(token) > 30
    again = subprocess.run([*command, "eve-bot"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "error (conflict)" in again.stderr
    wrong = subprocess.run(
        [*command[:7], "WRONG-CODE", *command[8:], "other"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode == 1 and "error (bad_join_code)" in wrong.stderr
    # The address as a student has it at hand: the bots' ws://HOST:PORT/ws (what their bot
    # connects to), or http://HOST:PORT/ with a slash, as arena leaderboard and replay take it.
    for n, url in enumerate([live_server.ws_url, live_server.url + "/"]):
        pasted = [*command[:5], url, *command[6:], f"eve-bot-{n}"]
        done = subprocess.run(pasted, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (url, done.stderr)
        assert f"Registered bot 'eve-bot-{n}' in class 'cli-class'" in done.stdout


# -- who may do what -----------------------------------------------------------------------

#: (method, path, who may: "admin" or "class"), with {A} the class under test, {bot} a bot
#: registered in it and {lone} a bot the admin made (in no class).
ENDPOINTS = [
    ("POST", "/api/classes", "admin"),
    ("GET", "/api/classes", "admin"),
    ("POST", "/api/bots", "admin"),
    ("GET", "/api/classes/{A}", "class"),
    ("POST", "/api/classes/{A}/code/rotate", "class"),
    ("POST", "/api/classes/{A}/code/close", "class"),
    ("POST", "/api/classes/{A}/code/open", "class"),
    ("POST", "/api/classes/{A}/token/rotate", "class"),
    ("POST", "/api/bots/{bot}/disable", "class"),
    ("POST", "/api/bots/{bot}/enable", "class"),
    ("POST", "/api/bots/{bot}/rotate", "class"),
    ("POST", "/api/bots/{lone}/disable", "admin"),
    ("POST", "/api/bots/{lone}/rotate", "admin"),
    # {T}: a tournament of class A; {U}: the admin's own, of bots in no class.
    ("POST", "/api/tournaments", "class"),
    ("GET", "/api/tournaments/{T}/grades.csv", "class"),
    ("POST", "/api/tournaments/{T}/start", "class"),
    ("POST", "/api/tournaments/{T}/cancel", "class"),
    ("GET", "/api/tournaments/{U}/grades.csv", "admin"),
    ("POST", "/api/tournaments/{U}/cancel", "admin"),
]
#: In this order: a principal that changes a token (instructor A rotating its own) comes after
#: those whose answer does not depend on it.
PRINCIPALS = ["none", "garbage", "student", "instructor_b", "instructor_a", "admin"]


@pytest.mark.parametrize(("method", "path", "allowed"), ENDPOINTS)
def test_authorization_matrix(
    live_server: LiveServer, method: str, path: str, allowed: str
) -> None:
    tag = f"m{ENDPOINTS.index((method, path, allowed))}"
    a = _new_class(live_server, f"{tag}-a")
    b = _new_class(live_server, f"{tag}-b")
    student = _register(live_server, a["join_code"], f"{tag}-bot").json()
    lone, _ = live_server.create_bot(f"{tag}-lone")
    tokens = {
        "none": None,
        "garbage": "not-a-token",
        "student": student["token"],
        "instructor_b": b["instructor_token"],
        "instructor_a": a["instructor_token"],
        "admin": live_server.admin_token,
    }
    classmate = _register(live_server, a["join_code"], f"{tag}-bot2").json()
    other_lone, _ = live_server.create_bot(f"{tag}-lone2")
    tournaments = {"T": f"{tag}-cup", "U": f"{tag}-open"}
    for name, players in ((tournaments["T"], [student["name"], classmate["name"]]),
                          (tournaments["U"], [lone, other_lone])):  # fmt: skip
        made = _post(live_server, "/api/tournaments", live_server.admin_token, name=name,
                     game="tic_tac_toe", format="round_robin", bots=players,
                     **({"class": a["name"]} if name == tournaments["T"] else {}))  # fmt: skip
        assert made.status_code == 201, made.text
    url = path.format(A=a["name"], bot=student["name"], lone=lone, **tournaments)
    seen = {}
    for n, who in enumerate(PRINCIPALS):
        body: dict[str, Any] | None = None
        if url in ("/api/classes", "/api/bots"):
            body = {"name": f"{tag}-new{n}"}
        elif url == "/api/tournaments":
            body = {"name": f"{tag}-t{n}", "game": "tic_tac_toe", "format": "round_robin",
                    "class": a["name"]}  # fmt: skip
        headers = {"Authorization": f"Bearer {tokens[who]}"} if tokens[who] else {}
        response = live_server.api(method, url, json=body, headers=headers)
        seen[who] = response.status_code
        if response.status_code >= 400:
            code = response.json()["error"]["code"]
            wanted = {401: "unauthorized", 403: "forbidden", 409: "conflict"}
            assert code == wanted[response.status_code], who
    may = {"admin"} | ({"instructor_a"} if allowed == "class" else set())
    # A tournament's steps depend on its state: the second allowed caller may find it already
    # started, paused or cancelled (409): allowed, not refused.
    done = (200, 201, 409) if "/api/tournaments/" in url else (200, 201)
    expected = {
        who: done if who in may else (403,) if who.startswith("instructor") else (401,)
        for who in PRINCIPALS
    }
    for who in PRINCIPALS:
        assert seen[who] in expected[who], (url, who, seen)
    assert any(seen[who] in (200, 201) for who in may), (url, seen)
