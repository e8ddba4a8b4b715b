"""The REST API against a real uvicorn server and a real SQLite file."""

from __future__ import annotations

from typing import Any

import pytest

from ply_arena import games
from ply_arena.protocol.errors import ErrorCode
from ply_arena.server.db.database import Database
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.time_controls import MAX_BANK_MS, MAX_MOVE_MS, MIN_MOVE_MS


def _error(response: Any, status: int, code: ErrorCode) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code.value
    assert body["error"]["message"]
    return str(body["error"]["message"])


def test_health(live_server: Any) -> None:
    response = live_server.api("GET", "/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "protocol": 1}


def test_games_lists_every_game_with_default_time_control_and_limits(live_server: Any) -> None:
    body = live_server.api("GET", "/api/games").json()
    assert [g["name"] for g in body["games"]] == games.names()
    for entry in body["games"]:
        game = games.get(entry["name"])
        assert entry["players"] == game.num_players
        assert entry["chance"] is game.has_chance
        assert entry["summary"] == game.summary and entry["summary"]
        tc = entry["default_time_control"]
        assert MIN_MOVE_MS <= tc["move_ms"] <= MAX_MOVE_MS and 0 <= tc["bank_ms"] <= MAX_BANK_MS
    by_name = {g["name"]: g for g in body["games"]}
    assert by_name["tic_tac_toe"]["default_time_control"] == {"move_ms": 1000, "bank_ms": 10000}
    assert by_name["backgammon"]["chance"] is True
    assert by_name["chinese_checkers"]["players"] == 3
    assert by_name["backgammon"]["move_limit"] == 2000
    assert by_name["chinese_checkers"]["move_limit"] is None  # its rules stop at 1000 plies
    assert body["limits"] == {
        "min_move_ms": MIN_MOVE_MS,
        "max_move_ms": MAX_MOVE_MS,
        "max_bank_ms": MAX_BANK_MS,
    }


def test_unknown_paths_and_methods_are_json_errors(live_server: Any) -> None:
    _error(live_server.api("GET", "/api/nothing"), 404, ErrorCode.not_found)
    _error(live_server.api("DELETE", "/api/games"), 405, ErrorCode.bad_request)
    # The bots' address opened in a browser (or curl): what it is for, not "nothing here".
    at_ws = live_server.api("GET", "/ws")
    _error(at_ws, 426, ErrorCode.bad_request)
    assert "bots connect over WebSocket" in at_ws.json()["error"]["message"]


def test_bot_admin_endpoints_need_the_admin_token(live_server: Any) -> None:
    for path in ("/api/bots", "/api/bots/x/rotate", "/api/bots/x/disable", "/api/bots/x/enable"):
        response = live_server.api("POST", path, json={"name": "x"})
        _error(response, 401, ErrorCode.unauthorized)
        assert response.headers["www-authenticate"] == "Bearer"
        wrong = {"Authorization": "Bearer not-the-token"}
        _error(
            live_server.api("POST", path, json={"name": "x"}, headers=wrong),
            401,
            ErrorCode.unauthorized,
        )
        basic = {"Authorization": f"Basic {live_server.admin_token}"}
        _error(
            live_server.api("POST", path, json={"name": "x"}, headers=basic),
            401,
            ErrorCode.unauthorized,
        )
    assert live_server.api("GET", "/api/bots").json() == {"bots": []}


async def test_create_list_rotate_disable_enable(live_server: Any, database: Database) -> None:
    created = live_server.api("POST", "/api/bots", admin=True, json={"name": "alice"})
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == "alice" and body["enabled"] is True and len(body["token"]) >= 32
    token = body["token"]
    listed = live_server.api("GET", "/api/bots").json()["bots"]
    assert [b["name"] for b in listed] == ["alice"]
    assert "token" not in listed[0] and token not in live_server.api("GET", "/api/bots").text

    _error(
        live_server.api("POST", "/api/bots", admin=True, json={"name": "alice"}),
        409,
        ErrorCode.conflict,
    )
    _error(
        live_server.api("POST", "/api/bots", admin=True, json={"name": "a b"}),
        400,
        ErrorCode.bad_request,
    )
    _error(
        live_server.api("POST", "/api/bots", admin=True, json={"nom": "x"}),
        400,
        ErrorCode.invalid_message,
    )
    _error(
        live_server.api("POST", "/api/bots", admin=True, content=b"{nope"), 400, ErrorCode.bad_json
    )

    rotated = live_server.api("POST", "/api/bots/alice/rotate", admin=True)
    assert rotated.status_code == 200
    new_token = rotated.json()["token"]
    assert new_token != token
    async with database.session() as session:
        assert await bot_repo.bot_by_token(session, token) is None
        assert (await bot_repo.bot_by_token(session, new_token)).name == "alice"  # type: ignore[union-attr]

    disabled = live_server.api("POST", "/api/bots/alice/disable", admin=True)
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    assert live_server.api("GET", "/api/bots").json()["bots"][0]["enabled"] is False
    enabled = live_server.api("POST", "/api/bots/alice/enable", admin=True)
    assert enabled.json()["enabled"] is True

    for action in ("rotate", "disable", "enable"):
        _error(
            live_server.api("POST", f"/api/bots/ghost/{action}", admin=True),
            404,
            ErrorCode.not_found,
        )


def test_create_bot_fixture_returns_a_working_token(live_server: Any, create_bot: Any) -> None:
    name, token = create_bot()
    name2, _ = create_bot("named-bot")
    assert name2 == "named-bot" and name != name2 and token
    assert {b["name"] for b in live_server.api("GET", "/api/bots").json()["bots"]} == {name, name2}


async def test_list_matches_filters_and_paginates(
    live_server: Any, database: Database, store_match: Any
) -> None:
    stored = []
    for i in range(5):
        stored.append(await store_match(database, game="tic_tac_toe", seed=i, bots=["ann", "bob"]))
    stored.append(await store_match(database, game="connect_four", seed=9, bots=["bob", "cid"]))
    running = await store_match(
        database, game="connect_four", seed=10, bots=["cid", "ann"], max_plies=3, finish=False
    )

    everything = live_server.api("GET", "/api/matches").json()
    assert everything["total"] == 7 and len(everything["matches"]) == 7
    assert everything["limit"] == 50 and everything["offset"] == 0
    # Newest first.
    assert everything["matches"][0]["id"] == running.match_id
    first = everything["matches"][0]
    assert first["status"] == "running" and first["plies"] == 3 and first["termination"] is None
    assert [s["bot"] for s in first["seats"]] == ["cid", "ann"]
    assert "moves" not in first and "seed" not in first

    def ids(**params: Any) -> tuple[set[str], int]:
        body = live_server.api("GET", "/api/matches", params=params).json()
        return {m["id"] for m in body["matches"]}, body["total"]

    assert ids(game="connect_four") == ({stored[5].match_id, running.match_id}, 2)
    assert ids(bot="bob")[1] == 6
    assert ids(bot="cid") == ({stored[5].match_id, running.match_id}, 2)
    assert ids(bot="cid", status="finished") == ({stored[5].match_id}, 1)
    assert ids(status="running") == ({running.match_id}, 1)
    assert ids(status="aborted") == (set(), 0)
    assert ids(bot="nobody") == (set(), 0)

    pages = [
        live_server.api("GET", "/api/matches", params={"limit": 3, "offset": o}).json()
        for o in (0, 3, 6)
    ]
    assert [len(p["matches"]) for p in pages] == [3, 3, 1]
    assert all(p["total"] == 7 for p in pages)
    paged_ids = [m["id"] for p in pages for m in p["matches"]]
    assert paged_ids == [m["id"] for m in everything["matches"]]
    past_the_end = live_server.api("GET", "/api/matches", params={"offset": 7}).json()
    assert past_the_end["matches"] == [] and past_the_end["total"] == 7
    # Filters combine (and), and pages of a filtered list tile it too.
    ann_ttt = {m.match_id for m in stored[:5]}
    assert ids(game="tic_tac_toe", bot="ann", status="finished") == (ann_ttt, 5)
    assert ids(game="tic_tac_toe", bot="cid") == (set(), 0)
    filtered = [
        live_server.api(
            "GET", "/api/matches", params={"bot": "ann", "limit": 2, "offset": o}
        ).json()
        for o in (0, 2, 4)
    ]
    assert [len(p["matches"]) for p in filtered] == [2, 2, 2]
    assert {m["id"] for p in filtered for m in p["matches"]} == ann_ttt | {running.match_id}
    assert all(p["total"] == 6 and p["limit"] == 2 for p in filtered)

    for params, code in (
        ({"limit": 0}, ErrorCode.bad_request),
        ({"limit": 1000}, ErrorCode.bad_request),
        ({"limit": "ten"}, ErrorCode.bad_request),
        ({"offset": -1}, ErrorCode.bad_request),
        ({"status": "won"}, ErrorCode.bad_request),
        ({"game": "chess"}, ErrorCode.unknown_game),
    ):
        _error(live_server.api("GET", "/api/matches", params=params), 400, code)


async def test_match_queries_raise_no_deprecation_warnings(
    database: Database, store_match: Any
) -> None:
    """Checked in-process, where a warning cannot hide behind the server thread: every query
    behind GET /api/matches, /api/matches/{id} and the referee's start (SQLAlchemy 2.1)."""
    import warnings

    played = await store_match(database, game="backgammon", seed=1, max_plies=12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with database.session() as session:
            for game in (None, "backgammon"):
                for bot in (None, played.bots[0], "nobody"):
                    for status in (None, "finished", "running"):
                        items, total = await match_repo.list_matches(
                            session, game=game, bot=bot, status=status, limit=5, offset=0
                        )
                        assert len(items) == total
            record = await match_repo.get_match(session, played.match_id)
            assert record is not None and record["plies"] == 12
            assert sum((await match_repo.pairing_counts(session)).values()) == 1
    assert [str(w.message) for w in caught] == []


async def test_match_record_is_complete_and_hides_the_seed_until_the_end(
    live_server: Any, database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="tic_tac_toe", seed=4, max_plies=3, finish=False)
    record = live_server.api("GET", f"/api/matches/{m.match_id}").json()
    assert record["status"] == "running" and record["seed"] is None and record["result"] is None
    # The bots' info is theirs while they play (no opponent reads a pv), shown once it is over.
    assert len(record["moves"]) == 3 and all(move["info"] is None for move in record["moves"])
    async with database.session() as session:
        await match_repo.record_move(
            session,
            match_id=m.match_id,
            ply=3,
            seat=1,
            move="b2",
            think_ms=5,
            info={"depth": 7, "score": 0.5, "nodes": 1234, "pv": ["b2", "c3"], "comment": "centre"},
            forced="timeout",
        )
        await match_repo.finish_match(
            session,
            match_id=m.match_id,
            payoffs=[1.0, -1.0],
            termination="timeout",
            at_fault=1,
            final_position={"board": ["x"]},
        )
    record = live_server.api("GET", f"/api/matches/{m.match_id}").json()
    assert record["status"] == "finished"
    assert record["time_control"] == {"move_ms": 1000, "bank_ms": 10000}
    assert record["policy"] == "forfeit"
    assert [s["payoff"] for s in record["seats"]] == [1.0, -1.0]
    assert record["moves"][:3] == [
        {
            "ply": p,
            "seat": s,
            "move": t,
            "think_ms": record["moves"][p]["think_ms"],
            "info": {"depth": p % 5, "comment": f"ply {p}"},
            "forced": None,
        }
        for p, s, t in m.events
    ]
    assert record["moves"][3] == {
        "ply": 3,
        "seat": 1,
        "move": "b2",
        "think_ms": 5,
        "info": {"depth": 7, "score": 0.5, "nodes": 1234, "pv": ["b2", "c3"], "comment": "centre"},
        "forced": "timeout",
    }
    assert record["result"] == {
        "payoffs": [1.0, -1.0],
        "termination": "timeout",
        "at_fault": 1,
        "final_position": {"board": ["x"]},
    }
    assert record["seed"].isdigit()
    assert record["created_at"].endswith("Z") and record["finished_at"].endswith("Z")
    _error(live_server.api("GET", "/api/matches/does-not-exist"), 404, ErrorCode.not_found)
    _error(live_server.api("GET", "/api/matches/does-not-exist/replay"), 404, ErrorCode.not_found)


@pytest.mark.parametrize("game", games.names())
async def test_replay_re_derives_every_position(
    live_server: Any, database: Database, store_match: Any, game: str
) -> None:
    # Long games are cut at 150 plies (termination move_limit); dice come from the seed.
    m = await store_match(database, game=game, seed=21, max_plies=150)
    replay = live_server.api("GET", f"/api/matches/{m.match_id}/replay").json()
    assert replay["verified"] is True, replay["problems"]
    assert replay["problems"] == []
    rules = games.get(game)
    state = rules.initial_state()
    assert replay["initial"] == {
        "position": rules.state_to_json(state),
        "board": rules.render(state),
    }
    assert len(replay["plies"]) == len(m.events)
    for step, (ply, seat, text) in zip(replay["plies"], m.events, strict=True):
        state = state.result(
            rules.parse_move(state, text) if seat is not None else _outcome(rules, state, text)
        )
        assert (step["ply"], step["seat"], step["move"]) == (ply, seat, text)
        assert step["position"] == rules.state_to_json(state)
        assert step["board"] == rules.render(state)
    assert replay["derived"]["final_position"] == m.final_position
    assert replay["result"]["termination"] == m.termination


def _outcome(rules: Any, state: Any, text: str) -> Any:
    return next(o for o in state.actions() if rules.format_move(state, o) == text)


async def test_replay_reports_a_stored_result_that_does_not_re_derive(
    live_server: Any, database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="tic_tac_toe", seed=1, finish=False)
    async with database.session() as session:
        # A result that lies: the winner swapped, and a wrong final position.
        await match_repo.finish_match(
            session,
            match_id=m.match_id,
            payoffs=[-x for x in _payoffs(m)],
            termination="normal",
            at_fault=None,
            final_position={"board": ["...", "...", "..."], "player": 0},
        )
    replay = live_server.api("GET", f"/api/matches/{m.match_id}/replay").json()
    assert replay["verified"] is False
    assert any("final position" in p for p in replay["problems"])
    if _payoffs(m) != [0.0, 0.0]:
        assert any("payoffs" in p for p in replay["problems"])


async def test_replay_reports_an_illegal_stored_move(
    live_server: Any, database: Database, store_match: Any
) -> None:
    m = await store_match(database, game="tic_tac_toe", seed=6, max_plies=2, finish=False)
    taken = m.events[0][2]
    async with database.session() as session:
        await match_repo.record_move(
            session,
            match_id=m.match_id,
            ply=2,
            seat=0,
            move=taken,
            think_ms=1,
            info=None,
            forced=None,
        )
    running = live_server.api("GET", f"/api/matches/{m.match_id}/replay").json()
    assert running["verified"] is False and "ply 2" in running["problems"][0]
    assert len(running["plies"]) == 2


def _payoffs(m: Any) -> list[float]:
    rules = games.get(m.game)
    state = rules.initial_state()
    for _, _, text in m.events:
        state = state.result(rules.parse_move(state, text))
    return [float(x) for x in state.returns()]


def test_concurrent_creates_of_one_name_give_one_bot(live_server: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def create(_: int) -> int:
        return int(
            live_server.api("POST", "/api/bots", admin=True, json={"name": "twin"}).status_code
        )

    with ThreadPoolExecutor(8) as pool:
        codes = sorted(pool.map(create, range(8)))
    assert codes == [201] + [409] * 7
    assert [b["name"] for b in live_server.api("GET", "/api/bots").json()["bots"]] == ["twin"]
