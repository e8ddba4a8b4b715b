"""Tournaments on a real server, played by reference agents through the bot kit over real
WebSockets: a Swiss tournament to the end (no rematch; standings and tiebreaks recomputed here
from the stored matches), a three-player round robin with balanced seats, no-shows, pausing and
cancelling, exports, and who may do what."""

from __future__ import annotations

import asyncio
import csv
import io
import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Any

import httpx
import pytest
from _api import error_of as _error
from _api import get as _get
from _api import post as _post
from _waiting import until
from conftest import LiveServer

from ply_arena.protocol.client import BotClient
from ply_arena.reference_agents.registry import make


def tournament_bot(srv: LiveServer, token: str, spec: str, game: str) -> BotClient:
    """A kit bot that plays only what the server starts for it (no lobby), until stopped."""
    name, _, options = spec.partition(":")
    kwargs = dict(kv.split("=") for kv in options.split(",") if kv)
    parsed: dict[str, Any] = {k: int(v) for k, v in kwargs.items()}
    return BotClient(
        srv.ws_url, token, agent=lambda g: make(name, g, **parsed), game=game, lobby=False, games=0
    )


async def wait_status(srv: LiveServer, name: str, status: str, timeout: float) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            doc: dict[str, Any] = (
                await asyncio.to_thread(_get, srv, f"/api/tournaments/{name}")
            ).json()
            if doc["status"] == status:
                return doc
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(poll(), timeout)


async def play(
    srv: LiveServer, name: str, clients: list[BotClient], token: str, timeout: float = 120
) -> dict[str, Any]:
    """Connect the bots, start the tournament, and return it once finished (bots stopped)."""
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "every bot logged in")
        started = _post(srv, f"/api/tournaments/{name}/start", token)
        assert started.status_code == 200, started.text
        return await wait_status(srv, name, "finished", timeout)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


def stored_results(
    srv: LiveServer, doc: dict[str, Any]
) -> list[tuple[int, list[str], list[float]]]:
    """(round, bots in seat order, payoffs) of every played game, read from the stored matches
    (GET /api/matches/{id}), not from the tournament's own table."""
    found = []
    for round_ in doc["schedule"]:
        for game in round_["games"]:
            if game["status"] != "finished":
                continue
            match = _get(srv, f"/api/matches/{game['match_id']}").json()
            assert match["status"] == "finished"
            seats = [s["bot"] for s in match["seats"]]
            assert seats == game["bots"]  # the tournament's seat order is the match's
            found.append((round_["round"], seats, [s["payoff"] for s in match["seats"]]))
    return found


def independent_standings(
    entrants: Sequence[str],
    results: Sequence[tuple[int, list[str], list[float]]],
    byes: Counter[str],
) -> dict[str, dict[str, float]]:
    """Points, Buchholz and Sonneborn-Berger of two-player games, computed from scratch."""
    points: dict[str, float] = {b: float(byes[b]) for b in entrants}
    scored: list[tuple[str, str, float]] = []  # (bot, opponent, points in that game)
    for _, (a, b), (pa, pb) in results:
        sa = 1.0 if pa > pb else 0.5 if pa == pb else 0.0
        points[a] += sa
        points[b] += 1.0 - sa
        scored += [(a, b, sa), (b, a, 1.0 - sa)]
    buchholz: dict[str, float] = defaultdict(float)
    sb: dict[str, float] = defaultdict(float)
    for bot, opponent, got in scored:
        buchholz[bot] += points[opponent]
        sb[bot] += got * points[opponent]
    return {b: {"points": points[b], "buchholz": buchholz[b], "sb": sb[b]} for b in entrants}


SWISS_FIELD = [
    "alphabeta:depth=9",
    "alphabeta:depth=4",
    "alphabeta:depth=2",
    "minimax:depth=1",
    "mcts:simulations=50",
    "mcts:simulations=5",
    "random",
    "random",
]


async def test_a_swiss_tournament_of_eight_reference_agents_runs_to_the_end(
    live_server: LiveServer,
) -> None:
    srv = live_server
    bots = [srv.create_bot(f"swiss{i}") for i in range(len(SWISS_FIELD))]
    created = _post(
        srv,
        "/api/tournaments",
        srv.admin_token,
        name="spring-swiss",
        game="tic_tac_toe",
        format="swiss",
        rounds=3,
        bots=[name for name, _ in bots],
        time_control={"move_ms": 2000, "bank_ms": 5000},
        concurrency=4,
    )
    assert created.status_code == 201, created.text
    assert created.json()["status"] == "created" and created.json()["schedule"] == []
    clients = [
        tournament_bot(srv, token, spec, "tic_tac_toe")
        for (_, token), spec in zip(bots, SWISS_FIELD, strict=True)
    ]
    doc = await play(srv, "spring-swiss", clients, srv.admin_token, 120)

    names = [name for name, _ in bots]
    assert [r["round"] for r in doc["schedule"]] == [1, 2, 3]
    met: set[frozenset[str]] = set()
    for round_ in doc["schedule"]:
        assert len(round_["games"]) == 4  # eight entrants: four boards, no bye
        seen_in_round = [b for g in round_["games"] for b in g["bots"]]
        assert sorted(seen_in_round) == sorted(names)  # everyone plays once a round
        for game in round_["games"]:
            pair = frozenset(game["bots"])
            assert pair not in met, f"rematch {sorted(pair)}"
            met.add(pair)
            assert game["status"] == "finished" and game["match_id"]
    results = stored_results(srv, doc)
    assert len(results) == 12
    expected = independent_standings(names, results, Counter())
    for row in doc["standings"]:
        want = expected[row["bot"]]
        assert row["points"] == want["points"], row
        assert row["buchholz"] == pytest.approx(want["buchholz"]), row
        assert row["sonneborn_berger"] == pytest.approx(want["sb"]), row
    # The order: points, then Buchholz, then Sonneborn-Berger (then head-to-head, then name).
    keys = [(-r["points"], -r["buchholz"], -r["sonneborn_berger"]) for r in doc["standings"]]
    assert keys == sorted(keys)
    assert [r["rank"] for r in doc["standings"]] == list(range(1, 9))
    # First seats: nobody more than two games off balance over three rounds.
    firsts = Counter(seats[0] for _, seats, _ in results)
    assert all(abs(2 * firsts[b] - 3) <= 3 for b in names)
    # Its matches were rated tournament matches.
    listed = _get(srv, "/api/matches?limit=50").json()["matches"]
    assert len(listed) == 12 and all(m["origin"] == "tournament" for m in listed)

    # Exports agree with the document.
    table = list(
        csv.DictReader(
            io.StringIO(
                _get(srv, "/api/tournaments/spring-swiss/export?what=standings&format=csv").text
            )
        )
    )
    assert [(r["bot"], float(r["points"])) for r in table] == [
        (r["bot"], r["points"]) for r in doc["standings"]
    ]  # fmt: skip
    matches = list(
        csv.DictReader(
            io.StringIO(
                _get(srv, "/api/tournaments/spring-swiss/export?what=matches&format=csv").text
            )
        )
    )
    assert len(matches) == 12 and {m["match_id"] for m in matches} == {
        g["match_id"] for r in doc["schedule"] for g in r["games"]
    }  # fmt: skip
    as_json = _get(srv, "/api/tournaments/spring-swiss/export?what=matches&format=json").json()
    assert len(as_json["matches"]) == 12
    page = _get(srv, "/tournaments/spring-swiss")
    assert page.status_code == 200 and ">Byes</th>" in page.text and ">Buchholz</th>" in page.text


async def test_a_three_player_round_robin_plays_every_seat_order(live_server: LiveServer) -> None:
    srv = live_server
    bots = [srv.create_bot(f"cc{i}") for i in range(4)]
    created = _post(
        srv,
        "/api/tournaments",
        srv.admin_token,
        name="cc-robin",
        game="chinese_checkers",
        format="round_robin",
        bots=[name for name, _ in bots],
        time_control={"move_ms": 2000, "bank_ms": 20000},
        concurrency=2,
        rated=False,
    )
    assert created.status_code == 201, created.text
    # What is tested is who sits where in the 24 games, not the games themselves: bots that
    # resign at once (alpha-beta does not play a three-player game) keep each game to its first
    # turn. Random bots took 24 games of up to 1,000 plies (a minute, several under coverage).
    clients = [tournament_bot(srv, token, "alphabeta", "connect_four") for _, token in bots]
    doc = await play(srv, "cc-robin", clients, srv.admin_token, 120)
    names = [name for name, _ in bots]
    games = [g for r in doc["schedule"] for g in r["games"]]
    # Four triples, each in its six seat orders.
    assert len(games) == 24 and all(g["status"] == "finished" for g in games)
    # All three resign at once: whose resignation the referee gets first is the machine's
    # timing (seat 0's, as a rule; on a busy machine another's), so any seat may be at fault.
    assert all(g["termination"] == "resign" and g["at_fault"] in (0, 1, 2) for g in games)
    orders = Counter(tuple(g["bots"]) for g in games)
    for triple in [t for t in permutations(names, 3)]:
        assert orders[triple] == 1
    for name in names:
        seats = Counter(g["bots"].index(name) for g in games if name in g["bots"])
        assert seats == Counter({0: 6, 1: 6, 2: 6}), (name, seats)
    for round_ in doc["schedule"]:
        playing = [b for g in round_["games"] for b in g["bots"]]
        assert len(playing) == len(set(playing))  # nobody twice in a round
    assert sum(r["games"] for r in doc["standings"]) == 24 * 3
    unrated = _get(srv, f"/api/matches/{games[0]['match_id']}").json()
    assert unrated["rated"] is False


def _doc(srv: LiveServer, name: str) -> dict[str, Any]:
    response = _get(srv, f"/api/tournaments/{name}")
    assert response.status_code == 200, response.text
    doc: dict[str, Any] = response.json()
    return doc


async def test_absent_bots_lose_by_no_show_and_a_paused_tournament_starts_nothing(
    live_server: LiveServer,
) -> None:
    srv = live_server
    bots = [srv.create_bot(f"ns{i}") for i in range(4)]
    created = _post(
        srv,
        "/api/tournaments",
        srv.admin_token,
        name="with-absent",
        game="tic_tac_toe",
        format="round_robin",
        bots=[name for name, _ in bots],
        concurrency=1,
        no_show_s=0.5,
    )
    assert created.status_code == 201, created.text
    absent_name = bots[3][0]
    clients = [tournament_bot(srv, token, "random", "tic_tac_toe") for _, token in bots[:3]]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    directors = srv.app.state.tournaments
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "three bots logged in")
        assert _post(srv, "/api/tournaments/with-absent/start", srv.admin_token).status_code == 200
        await until(lambda: _doc(srv, "with-absent")["games"]["decided"] >= 3, 60, "3 games")
        paused = _post(srv, "/api/tournaments/with-absent/pause", srv.admin_token)
        assert paused.status_code == 200 and paused.json()["status"] == "paused"
        # The director stops once paused; the game under way (if any) still ends and counts.
        # (The server runs in a thread of its own: its tasks are watched, not awaited.)
        tid = await task_id(srv, "with-absent")
        director = directors._directors[tid]
        await until(director.done, 30, "the director to stop")
        await until(lambda: directors.playing(tid) == 0, 30, "the game under way to end")
        still = _doc(srv, "with-absent")
        assert not any(g["status"] == "playing" for r in still["schedule"] for g in r["games"])
        assert any(g["status"] == "pending" for r in still["schedule"] for g in r["games"])
        _error(_post(srv, "/api/tournaments/with-absent/pause", srv.admin_token), 409, "conflict")
        resumed = _post(srv, "/api/tournaments/with-absent/resume", srv.admin_token)
        assert resumed.status_code == 200 and resumed.json()["status"] == "running"
        doc = await wait_status(srv, "with-absent", "finished", 120)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
    games = [g for r in doc["schedule"] for g in r["games"]]
    assert len(games) == 12
    for g in games:
        if absent_name in g["bots"]:
            assert g["status"] == "no_show" and g["match_id"] is None
            assert g["absent"] == [g["bots"].index(absent_name)]
        else:
            assert g["status"] == "finished" and g["match_id"]
    row = next(r for r in doc["standings"] if r["bot"] == absent_name)
    assert (row["points"], row["games"], row["losses"]) == (0.0, 6, 6)
    assert doc["standings"][-1]["bot"] == absent_name
    grades = list(
        csv.DictReader(
            io.StringIO(_get(srv, "/api/tournaments/with-absent/grades.csv", srv.admin_token).text)
        )
    )
    assert {r["bot"]: int(r["no_shows"]) for r in grades}[absent_name] == 6  # fmt: skip
    assert sum(int(r["no_shows"]) for r in grades) == 6


async def task_id(srv: LiveServer, name: str) -> int:
    """The tournament's id, read from the server's database (the API does not show it)."""
    from sqlalchemy import text

    from ply_arena.server.db.database import Database

    database = Database(srv.db_url)
    try:
        async with database.session() as session:
            found = await session.scalar(
                text("SELECT id FROM tournaments WHERE name = :name"), {"name": name}
            )
    finally:
        await database.dispose()
    assert found is not None, name
    return int(found)


async def test_a_gauntlet_ranks_its_entrants_against_the_pool(live_server: LiveServer) -> None:
    srv = live_server
    entrants = [srv.create_bot(f"gx{i}") for i in range(2)]
    pool = [srv.create_bot(f"ref{i}") for i in range(2)]
    created = _post(
        srv,
        "/api/tournaments",
        srv.admin_token,
        name="gauntlet-1",
        game="tic_tac_toe",
        format="gauntlet",
        bots=[n for n, _ in entrants],
        pool=[n for n, _ in pool],
    )
    assert created.status_code == 201, created.text
    specs = ["random", "random", "alphabeta:depth=9", "alphabeta:depth=9"]
    clients = [
        tournament_bot(srv, token, spec, "tic_tac_toe")
        for (_, token), spec in zip(entrants + pool, specs, strict=True)
    ]
    doc = await play(srv, "gauntlet-1", clients, srv.admin_token, 120)
    games = [g for r in doc["schedule"] for g in r["games"]]
    assert len(games) == 8  # each entrant meets each pool bot in both seats
    pool_names = {n for n, _ in pool}
    for g in games:
        assert len(set(g["bots"]) & pool_names) == 1  # never two entrants, never two pool bots
    assert [r["bot"] for r in doc["standings"]] != [] and {r["bot"] for r in doc["standings"]} == {
        n for n, _ in entrants
    }  # the pool is not ranked
    assert doc["pool"] == sorted(pool_names)
    # Perfect play never loses: the random entrants score at most draws against the pool.
    assert all(r["wins"] == 0 for r in doc["standings"])


async def test_refusals_say_what_to_fix(live_server: LiveServer) -> None:
    srv = live_server
    names = [srv.create_bot(f"rf{i}")[0] for i in range(3)]

    def create(token: str | None = srv.admin_token, **body: Any) -> httpx.Response:
        base: dict[str, Any] = {"name": "t1", "game": "tic_tac_toe", "format": "round_robin"}
        base.update(body)
        return _post(srv, "/api/tournaments", token, **base)

    _error(create(bots=names, game="chess"), 400, "unknown_game")
    _error(create(bots=names, colour="red"), 400, "invalid_message")
    _error(create(bots=names, rounds="3"), 400, "invalid_message")
    _error(create(bots=names, rounds=0), 400, "invalid_message")
    _error(create(bots=names, format="knockout"), 400, "invalid_message")
    _error(create(bots=[*names, "ghost"]), 400, "unknown_bot")
    _error(create(bots=[names[0], names[0].upper()]), 400, "invalid_message")
    _error(create(bots=names, time_control={"move_ms": 1}), 400, "bad_time_control")
    assert "at most 2 rounds" in _error(create(bots=names, format="swiss", rounds=3), 400,
                                        "bad_request")  # fmt: skip
    assert "two-player" in _error(
        create(bots=names, game="chinese_checkers", format="swiss"), 400, "bad_request"
    )
    assert "pool" in _error(create(bots=names, format="gauntlet"), 400, "bad_request")
    _error(create(bots=names[:1]), 400, "bad_request")
    assert "class" in _error(create(), 400, "invalid_message")
    _error(create(token=None, bots=names), 401, "unauthorized")
    _error(create(token="not-a-token", bots=names), 401, "unauthorized")
    # The token first: a caller without one learns nothing about the body.
    _error(create(token=None, colour="red"), 401, "unauthorized")
    # "class" with "bots": those bots, all of the class.
    _post(srv, "/api/classes", srv.admin_token, name="rf-class")
    assert "not in class" in _error(create(bots=names, **{"class": "rf-class"}), 400,
                                     "bad_request")  # fmt: skip
    _error(create(bots=names, name="bad name!"), 400, "bad_request")
    assert create(bots=names).status_code == 201
    _error(create(bots=names, name="T1"), 409, "conflict")
    _error(_get(srv, "/api/tournaments/nope"), 404, "not_found")
    _error(_post(srv, "/api/tournaments/t1/resume", srv.admin_token), 409, "conflict")
    _error(_get(srv, "/api/tournaments/t1/export?what=everything"), 400, "bad_request")
    cancelled = _post(srv, "/api/tournaments/t1/cancel", srv.admin_token)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    _error(_post(srv, "/api/tournaments/t1/start", srv.admin_token), 409, "conflict")


async def test_only_the_admin_and_the_class_instructor_steer_a_class_tournament(
    live_server: LiveServer,
) -> None:
    srv = live_server
    mine = _post(srv, "/api/classes", srv.admin_token, name="class-a").json()
    other = _post(srv, "/api/classes", srv.admin_token, name="class-b").json()
    tokens = {}
    for i, owner in enumerate(["ana@uni.es", "ben@uni.es", "=cmd|calc"]):
        registered = _post(
            srv, "/api/register", code=mine["join_code"], name=f"a{i}", owner=owner
        ).json()
        tokens[registered["name"]] = registered["token"]
    outsider = _post(
        srv, "/api/register", code=other["join_code"], name="b0", owner="bea@uni.es"
    ).json()
    instructor, stranger = mine["instructor_token"], other["instructor_token"]
    bot_token = tokens["a0"]

    # An instructor creates its class's tournament; not with another class's bots or class.
    body = {"name": "final-a", "game": "tic_tac_toe", "format": "round_robin"}
    _error(_post(srv, "/api/tournaments", instructor, **body, bots=["a0", "b0"]), 403, "forbidden")
    _error(_post(srv, "/api/tournaments", instructor, **body, **{"class": "class-b"}), 403,
           "forbidden")  # fmt: skip
    _error(_post(srv, "/api/tournaments", bot_token, **body), 401, "unauthorized")
    created = _post(srv, "/api/tournaments", instructor, **body)
    assert created.status_code == 201, created.text
    assert created.json()["class"] == "class-a"
    assert created.json()["entrants"] == ["a0", "a1", "a2"]
    admin_own = _post(
        srv, "/api/tournaments", srv.admin_token,
        name="open-t", game="tic_tac_toe", format="round_robin", bots=["a0", outsider["name"]],
    )  # fmt: skip
    assert admin_own.status_code == 201

    steer = ["start", "pause", "resume", "cancel"]
    for action in steer:
        _error(_post(srv, f"/api/tournaments/final-a/{action}"), 401, "unauthorized")
        _error(_post(srv, f"/api/tournaments/final-a/{action}", bot_token), 401, "unauthorized")
        _error(_post(srv, f"/api/tournaments/final-a/{action}", stranger), 403, "forbidden")
        _error(_post(srv, f"/api/tournaments/open-t/{action}", instructor), 403, "forbidden")
    _error(_get(srv, "/api/tournaments/final-a/grades.csv"), 401, "unauthorized")
    _error(_get(srv, "/api/tournaments/final-a/grades.csv", bot_token), 401, "unauthorized")
    _error(_get(srv, "/api/tournaments/final-a/grades.csv", stranger), 403, "forbidden")
    _error(_get(srv, "/api/tournaments/open-t/grades.csv", instructor), 403, "forbidden")

    clients = [tournament_bot(srv, t, "random", "tic_tac_toe") for t in tokens.values()]
    doc = await play(srv, "final-a", clients, instructor, 120)

    # Public views name bots, never owners; the grade sheet names owners, for the instructor.
    for path in (
        "/api/tournaments/final-a",
        "/tournaments/final-a",
        "/api/tournaments/final-a/export?what=matches&format=csv",
        "/classes/class-a",
    ):
        assert "ana@uni.es" not in _get(srv, path).text, path  # fmt: skip
    sheet = _get(srv, "/api/tournaments/final-a/grades.csv", instructor)
    assert sheet.status_code == 200 and sheet.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(sheet.text)))
    assert [r["bot"] for r in rows] == [r["bot"] for r in doc["standings"]]
    owners = {r["bot"]: r["owner"] for r in rows}
    assert owners["a0"] == "ana@uni.es"
    assert owners["a2"] == "'=cmd|calc"  # a spreadsheet would run it as a formula
    for r in rows:
        standing = next(s for s in doc["standings"] if s["bot"] == r["bot"])
        assert int(r["rank"]) == standing["rank"] and float(r["points"]) == standing["points"]
        assert int(r["matches"]) == 4
        assert int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == 4
        assert r["rating"] != ""  # rated: the tournament moved the ratings
    assert _get(srv, "/api/tournaments/final-a/grades.csv", srv.admin_token).status_code == 200
    # Matches played after the tournament move the ratings, not the finished grade sheet.
    before = _get(srv, "/api/leaderboard/tic_tac_toe").json()["ranking"]
    after_cup = [
        BotClient(srv.ws_url, tokens[name], agent=lambda g: make("random", g),
                  game="tic_tac_toe", games=1)
        for name in ("a0", "a1")
    ]  # fmt: skip
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in after_cup)), 60)
    assert _get(srv, "/api/leaderboard/tic_tac_toe").json()["ranking"] != before
    again = _get(srv, "/api/tournaments/final-a/grades.csv", instructor)
    assert again.text == sheet.text
    listed = _get(srv, "/api/tournaments?class=class-a").json()["tournaments"]
    assert [t["name"] for t in listed] == ["final-a"]
    page = _get(srv, "/classes/class-a").text
    assert "/tournaments/final-a" in page and "open-t" not in page


async def test_a_gauntlet_against_the_house_bots(start_server: Callable[..., LiveServer]) -> None:
    srv = start_server(house_bots="tic_tac_toe=random,alphabeta:depth=9@0.2", house_workers=1)
    pool = ["house-random", "house-alphabeta-depth9-0.2"]
    (student, token) = srv.create_bot("student")
    created = _post(srv, "/api/tournaments", srv.admin_token, name="vs-house",
                    game="tic_tac_toe", format="gauntlet", bots=[student], pool=pool)  # fmt: skip
    assert created.status_code == 201, created.text
    doc = await play(srv, "vs-house", [tournament_bot(srv, token, "random", "tic_tac_toe")],
                     srv.admin_token)  # fmt: skip
    games = [g for r in doc["schedule"] for g in r["games"]]
    assert len(games) == 4 and all(g["status"] == "finished" for g in games)
    assert Counter(b for g in games for b in g["bots"] if b != student) == Counter(
        {name: 2 for name in pool}
    )
    # The perfect player never loses to a random one.
    for g in games:
        if "house-alphabeta-depth9-0.2" in g["bots"]:
            seat = g["bots"].index("house-alphabeta-depth9-0.2")
            assert g["payoffs"][seat] >= 0
    assert [r["bot"] for r in doc["standings"]] == [student]


async def test_a_bot_given_a_game_it_cannot_play_resigns_it_at_once(
    live_server: LiveServer,
) -> None:
    srv = live_server
    bots = [srv.create_bot(f"wrong{i}") for i in range(3)]
    created = _post(srv, "/api/tournaments", srv.admin_token, name="wrong-game",
                    game="chinese_checkers", format="round_robin",
                    bots=[n for n, _ in bots])  # fmt: skip
    assert created.status_code == 201, created.text
    # The third bot runs alpha-beta, which does not play Chinese checkers (three players).
    clients = [tournament_bot(srv, t, "random", "chinese_checkers") for _, t in bots[:2]]
    clients.append(tournament_bot(srv, bots[2][1], "alphabeta", "connect_four"))
    doc = await play(srv, "wrong-game", clients, srv.admin_token, 120)
    games = [g for r in doc["schedule"] for g in r["games"]]
    assert len(games) == 6
    for g in games:
        assert (g["termination"], g["bots"][g["at_fault"]]) == ("resign", "wrong2"), g


async def test_the_command_line_runs_a_tournament(live_server: LiveServer, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from ply_arena.server.cli import app

    srv = live_server
    bots = [srv.create_bot(f"cli{i}") for i in range(3)]
    common = ["--url", srv.url, "--token", srv.admin_token]

    def arena(*args: str) -> str:
        done = CliRunner().invoke(app, list(args))
        assert done.exit_code == 0, done.output
        return str(done.output)

    names = ",".join(n for n, _ in bots)
    said = arena("tournament", "create", "cli-cup", "--game", "tic_tac_toe", "--bot", names,
                 "--move-ms", "500", "--bank-ms", "2000", *common)  # fmt: skip
    assert "Created tournament 'cli-cup': round_robin of tic_tac_toe, 3 entrant(s)" in said
    refused = CliRunner().invoke(app, ["tournament", "create", "x", "--game", "tic_tac_toe",
                                       "--bank-ms", "5", *common])  # fmt: skip
    assert refused.exit_code == 2 and "--bank-ms goes with --move-ms" in refused.output
    nobody = CliRunner().invoke(app, ["tournament", "start", "cli-cup", "--url", srv.url,
                                      "--token", "wrong"])  # fmt: skip
    assert nobody.exit_code == 1 and "error (unauthorized)" in nobody.output
    clients = [tournament_bot(srv, t, "random", "tic_tac_toe") for _, t in bots]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "every bot logged in")
        assert "is running" in await asyncio.to_thread(
            arena, "tournament", "start", "cli-cup", *common
        )
        await wait_status(srv, "cli-cup", "finished", 120)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
    shown = await asyncio.to_thread(arena, "tournament", "show", "cli-cup", "--crosstable",
                                    "--rounds", "--url", srv.url)  # fmt: skip
    assert "cli-cup" in shown and "6 of 6 game(s)" in shown and "round 6" in shown
    as_json = json.loads(await asyncio.to_thread(arena, "tournament", "show", "cli-cup", "--json",
                                                 "--url", srv.url))  # fmt: skip
    assert as_json["status"] == "finished" and len(as_json["standings"]) == 3
    out = tmp_path / "grades.csv"
    await asyncio.to_thread(arena, "tournament", "grades", "cli-cup", "-o", str(out), *common)
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [r["bot"] for r in rows] == [r["bot"] for r in as_json["standings"]]
    exported = await asyncio.to_thread(arena, "tournament", "export", "cli-cup", "--what",
                                       "matches", "--url", srv.url)  # fmt: skip
    assert len(list(csv.DictReader(io.StringIO(exported)))) == 6
    listed = await asyncio.to_thread(arena, "tournament", "list", "--url", srv.url)
    assert "cli-cup" in listed


async def test_a_bot_in_two_tournaments_plays_one_game_at_a_time(live_server: LiveServer) -> None:
    srv = live_server
    bots = [srv.create_bot(f"two{i}") for i in range(3)]
    for name in ("first-of-two", "second-of-two"):
        made = _post(srv, "/api/tournaments", srv.admin_token, name=name, game="tic_tac_toe",
                     bots=[n for n, _ in bots], concurrency=8)  # fmt: skip
        assert made.status_code == 201, made.text
    clients = [tournament_bot(srv, t, "random", "tic_tac_toe") for _, t in bots]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "every bot logged in")
        for name in ("first-of-two", "second-of-two"):
            assert _post(srv, f"/api/tournaments/{name}/start", srv.admin_token).status_code == 200
        for name in ("first-of-two", "second-of-two"):
            await wait_status(srv, name, "finished", 120)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
    matches = _get(srv, "/api/matches?limit=50").json()["matches"]
    assert len(matches) == 12
    for name, _ in bots:
        spans = sorted(
            (m["created_at"], m["finished_at"])
            for m in matches
            if name in [s["bot"] for s in m["seats"]]
        )
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, (name, spans)  # never two of its games at once


async def test_match_start_says_where_the_match_came_from(live_server: LiveServer) -> None:
    from _ws_client import WsBot, start_pair

    srv = live_server
    (a, token_a), (b, token_b) = srv.create_bot("origin-a"), srv.create_bot("origin-b")
    bot_a, bot_b, start_a, start_b = await start_pair(srv.ws_url, token_a, token_b)
    assert start_a["origin"] == start_b["origin"] == "lobby"
    await asyncio.gather(bot_a.play(start_a["match_id"]), bot_b.play(start_b["match_id"]))
    made = _post(srv, "/api/tournaments", srv.admin_token, name="origins", game="tic_tac_toe",
                 bots=[a, b])  # fmt: skip
    assert made.status_code == 201, made.text
    assert _post(srv, "/api/tournaments/origins/start", srv.admin_token).status_code == 200
    # No join, no challenge: the tournament's match comes, and says so.
    first_a = await bot_a.expect("match_start", timeout=10)
    first_b = await bot_b.expect("match_start", timeout=10)
    assert first_a["origin"] == first_b["origin"] == "tournament"
    await asyncio.gather(bot_a.play(first_a["match_id"]), bot_b.play(first_b["match_id"]))
    await WsBot.close_all()


def most_at_once(spans: list[tuple[str, str]]) -> int:
    """The most intervals (start, end) open at one moment; one ending as another starts is not
    an overlap."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    open_now = most = 0
    for _, step in events:  # at equal times the end (-1) sorts first
        open_now += step
        most = max(most, open_now)
    return most


async def test_the_concurrency_caps_the_games_played_at_once(live_server: LiveServer) -> None:
    # Six bots could play three games at a time; the tournament allows two.
    srv = live_server
    bots = [srv.create_bot(f"cap{i}") for i in range(6)]
    made = _post(srv, "/api/tournaments", srv.admin_token, name="capped", game="tic_tac_toe",
                 bots=[n for n, _ in bots], concurrency=2)  # fmt: skip
    assert made.status_code == 201, made.text
    clients = [tournament_bot(srv, t, "random", "tic_tac_toe") for _, t in bots]
    doc = await play(srv, "capped", clients, srv.admin_token)
    matches = _get(srv, "/api/matches?limit=100").json()["matches"]
    games = sum(len(round_["games"]) for round_ in doc["schedule"])
    assert len(matches) == games == 30  # 15 pairs, both seat orders
    spans = [(m["created_at"], m["finished_at"]) for m in matches]
    assert most_at_once(spans) == 2  # the cap, and the cap was used


def test_most_at_once_counts_overlaps() -> None:
    assert most_at_once([("1", "3"), ("2", "4"), ("3", "5")]) == 2
    assert most_at_once([("1", "2"), ("2", "3")]) == 1
    assert most_at_once([("1", "9"), ("2", "8"), ("3", "7")]) == 3
