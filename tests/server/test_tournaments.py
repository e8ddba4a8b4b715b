"""Tournaments on a real server, played by reference agents through the bot kit over real
WebSockets: a Swiss tournament to the end (no rematch; standings and tiebreaks recomputed here
from the stored matches), a three-player round robin with balanced seats, no-shows, pausing and
cancelling, exports, and who may do what."""

from __future__ import annotations

import asyncio
import csv
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import permutations
from typing import Any

import httpx
import pytest
from _waiting import until
from conftest import LiveServer

from protocol.client import BotClient
from reference_agents.registry import make


def _post(srv: LiveServer, path: str, token: str | None = None, **body: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return srv.api("POST", path, json=body or None, headers=headers)


def _get(srv: LiveServer, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return srv.api("GET", path, headers=headers)


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])


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
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "every bot logged in")
        started = _post(srv, "/api/tournaments/spring-swiss/start", srv.admin_token)
        assert started.status_code == 200, started.text
        doc = await wait_status(srv, "spring-swiss", "finished", 120)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)

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
    clients = [tournament_bot(srv, token, "random", "chinese_checkers") for _, token in bots]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "every bot logged in")
        assert _post(srv, "/api/tournaments/cc-robin/start", srv.admin_token).status_code == 200
        doc = await wait_status(srv, "cc-robin", "finished", 240)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
    names = [name for name, _ in bots]
    games = [g for r in doc["schedule"] for g in r["games"]]
    # Four triples, each in its six seat orders.
    assert len(games) == 24 and all(g["status"] == "finished" for g in games)
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
