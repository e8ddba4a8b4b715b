"""``arena check-bot`` against bots with one bug each: each fails exactly the item it breaks.

A real server, the real checker (relay and checker bot) and real bots over WebSocket, all in
this test's event loop but the server (tests/conftest.py); tests/checkbot/test_examples_pass.py
runs the example bots and the command itself as processes.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
import websockets
from broken_bot import BrokenBot

from ply_arena.protocol.messages import TimeControl
from ply_arena.server.checkbot.checklist import TITLES, Item, judge, read_wire, report
from ply_arena.server.checkbot.relay import Frame, Link, Relay
from ply_arena.server.checkbot.session import (
    STEP_PLAIN,
    STEP_RECONNECT,
    STEP_TWO,
    CheckConfig,
    Observations,
    PlayedMatch,
    run_check,
)

#: The items each bot fails; every other item passes or is not checked.
EXPECTED = {
    "good": set(),
    "gson": set(),  # "ply": 24.0 is the integer 24, for the checklist as for the arena
    "no_pong": {"ping"},
    "stale_ply": {"ply"},
    "illegal": {"legal"},
    "sleeper": {"time"},
    "deaf_after_forced": {"forced"},
    "one_at_a_time": {"two"},
    "no_reconnect": {"reconnect"},
    "quits": {"connected"},
    "bad_version": {"handshake"},
}

#: What the failure says, in the bot's case.
SAYS = {
    "no_pong": "unanswered: the arena's ping",
    "stale_ply": "while its turn was ply",
    "illegal": "illegal or unreadable move",
    "sleeper": "timeout(s)",
    "deaf_after_forced": "it answered none of its",
    "one_at_a_time": "it answered none of the",
    "no_reconnect": "did not log in again",
    "quits": "s after a match ended",
    "bad_version": "protocol 2",
}


async def check(
    server: Any, mode: str, *, game: str = "tic_tac_toe", **options: Any
) -> tuple[list[Item], Observations, list[str]]:
    """Run the check on a BrokenBot in ``mode``, started as soon as the relay listens."""
    _, checker_token = server.create_bot()
    name, token = server.create_bot()
    lines: list[str] = []
    tasks: list[asyncio.Task[None]] = []

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith("waiting for your bot at "):
            bot = BrokenBot(line.split()[-1], token, mode, seed=7)
            tasks.append(asyncio.create_task(bot.run()))

    values: dict[str, Any] = {
        "url": server.ws_url,
        "token": checker_token,
        "game": game,
        "bot": name,
        "listen_port": 0,
        "wait_s": 20,
        "move_ms": 400,
        "bank_ms": 400,
        "absent_s": 2,
        "seed": 1,
    }
    values.update(options)
    try:
        obs = await asyncio.wait_for(run_check(CheckConfig(**values), say), 55)
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return judge(obs), obs, lines


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_a_broken_bot_fails_exactly_what_it_breaks(live_server: Any, mode: str) -> None:
    items, obs, lines = await check(live_server, mode)
    text = "\n".join(lines + report(obs, items))
    assert [item.key for item in items] == [key for key in TITLES if key != "accepts"]
    failed = {item.key for item in items if item.status == "fail"}
    if failed != EXPECTED[mode]:
        # What the bot was sent and answered, turn by turn: enough to tell a checker bug from
        # a bot that did fail the item (a failure here under load is rare and timing-bound).
        wire = read_wire(obs)
        text += "\n" + "\n".join(
            f"  wire {mid}: {turns!r}; sent {[m for m in wire.moves if m.match_id == mid]!r}"
            for mid, turns in wire.turns.items()
        )
        text += f"\n  ended {wire.ended!r}; forced {wire.forced!r}; starts {wire.starts!r}"
    assert failed == EXPECTED[mode], text
    for item in items:
        if item.status == "fail":
            assert item.should, text  # every failure says what to do instead
            assert SAYS[mode] in item.did, text
    if mode in ("good", "gson"):
        skipped = {item.key for item in items if item.status == "skip"}
        assert skipped == {"chance"}, text  # not asked for
    if mode == "bad_version":
        assert all(i.status == "skip" for i in items if i.key != "handshake"), text


async def test_backgammon_is_checked_on_every_match(live_server: Any) -> None:
    items, obs, lines = await check(live_server, "good", game="backgammon")
    text = "\n".join(lines + report(obs, items))
    assert all(item.status == "pass" for item in items), text
    chance = next(item for item in items if item.key == "chance")
    assert "dice rolls, all accepted" in chance.did


async def test_the_relay_serves_bots_at_ws_only(live_server: Any) -> None:
    relay = Relay(live_server.ws_url, "nobody")
    url = await relay.start()
    try:
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            await websockets.connect(url.removesuffix("/ws") + "/")
        assert refused.value.response.status_code == 404
    finally:
        await relay.stop()


# --- the verdicts on made-up observations -----------------------------------------------------


def _frame(at: float, direction: str, message: dict[str, Any], note: str = "") -> Frame:
    return Frame(at, 1, direction, message, note)  # type: ignore[arg-type]


def _observations(frames: list[Frame], moves: list[dict[str, Any]], **record: Any) -> Observations:
    tc = TimeControl(move_ms=1000, bank_ms=0)
    obs = Observations(
        game="tic_tac_toe",
        mode="relay",
        checker="checker",
        bot="b",
        time_control=tc,
        relay_url="ws://relay/ws",
        started_at=0.0,
        ended_at=10.0,
        frames=frames,
        links=[Link(number=1, opened_at=0.0, bot="b", hello={"protocol": 1}, hello_at=0.01)],
    )
    stored = {"status": "finished", "moves": moves, "plies": len(moves), **record}
    obs.matches.append(
        PlayedMatch(
            STEP_PLAIN, "M", "tic_tac_toe", "random_move", tc, 1, 0.0, 4.0, None, stored, False
        )
    )
    return obs


def _move(
    ply: int, seat: int, forced: str | None = None, think_ms: int | None = 5
) -> dict[str, Any]:
    return {"ply": ply, "seat": seat, "move": "a1", "think_ms": think_ms, "forced": forced}


def test_a_late_answer_is_the_clocks_and_a_repeated_ply_is_a_wrong_one() -> None:
    turn = {"type": "turn", "match_id": "M"}
    move = {"type": "move", "match_id": "M", "move": "a1"}
    frames = [
        _frame(0.5, "to_bot", {"type": "match_start", "match_id": "M", "ply": 0}),
        _frame(1.0, "to_bot", {**turn, "ply": 1}),
        _frame(
            2.2, "to_bot", {"type": "forced_move", "match_id": "M", "ply": 1, "reason": "timeout"}
        ),
        _frame(2.5, "from_bot", {**move, "ply": 1}),  # too late: the turn was forced
        _frame(3.0, "to_bot", {**turn, "ply": 3}),
        _frame(3.1, "from_bot", {**move, "ply": 1}),  # the old ply again: wrong
        _frame(
            3.15, "to_bot", {"type": "error", "match_id": "M", "code": "stale_ply", "message": "x"}
        ),
        _frame(3.2, "from_bot", {**move, "ply": 3}),  # the answer
        _frame(4.0, "to_bot", {"type": "match_end", "match_id": "M"}),
        _frame(4.5, "from_bot", {**move, "ply": 3}),  # after the end, answered: nobody's business
    ]
    moves = [_move(0, 0), _move(1, 1, "timeout", None), _move(2, 0), _move(3, 1)]
    obs = _observations(frames, moves, termination="normal", at_fault=None)
    wire = read_wire(obs)
    assert [m.kind for m in wire.moves] == ["late", "wrong", "answer", "after_end"]
    assert wire.moves[1].error == ("stale_ply", "x") and wire.moves[1].open_plies == (3,)
    items = {item.key: item for item in judge(obs)}
    assert items["time"].status == "fail"
    assert "ply 1: answered after 1500 ms (1000+0 ms allowed), too late" in items["time"].did
    assert items["ply"].status == "fail"
    assert "match M: ply 1 while its turn was ply 3 (stale_ply)" in items["ply"].did
    assert items["legal"].status == "pass" and items["forced"].status == "pass"


def test_a_timeout_after_a_refused_ply_is_not_the_clocks() -> None:
    frames = [
        _frame(0.5, "to_bot", {"type": "match_start", "match_id": "M", "ply": 0}),
        _frame(1.0, "to_bot", {"type": "turn", "match_id": "M", "ply": 1}),
        _frame(1.1, "from_bot", {"type": "move", "match_id": "M", "ply": "1", "move": "a1"}),
        _frame(2.2, "to_bot", {"type": "match_end", "match_id": "M"}),
    ]
    obs = _observations(frames, [_move(0, 0)], termination="timeout", at_fault=1)
    items = {item.key: item for item in judge(obs)}
    assert items["ply"].status == "fail" and "ply '1' while its turn was ply 1" in items["ply"].did
    assert items["time"].status == "skip"  # no move of its own was timed; the timeout excused


def test_the_resent_turn_of_a_cut_is_answered_on_the_new_connection() -> None:
    frames = [
        _frame(0.5, "to_bot", {"type": "match_start", "match_id": "M", "ply": 0}),
        _frame(1.0, "to_bot", {"type": "turn", "match_id": "M", "ply": 1}, note="cut"),
        Frame(1.3, 2, "to_bot", {"type": "welcome", "bot": "b"}),
        Frame(1.3, 2, "to_bot", {"type": "match_start", "match_id": "M", "ply": 1}),
        Frame(1.31, 2, "to_bot", {"type": "turn", "match_id": "M", "ply": 1}),
        Frame(1.32, 2, "from_bot", {"type": "move", "match_id": "M", "ply": 1, "move": "b2"}),
    ]
    obs = _observations(frames, [_move(0, 0), _move(1, 1, think_ms=320)], termination="resign",
                        at_fault=0)  # fmt: skip
    obs.matches[0].step = STEP_RECONNECT
    obs.links.append(Link(number=2, opened_at=1.25, bot="b", hello={"protocol": 1}, hello_at=1.26))
    obs.links[0].closed_at, obs.links[0].closed_by = 1.0, "relay"
    obs.cut_match, obs.cut_at, obs.cut_link = "M", 1.0, 1
    items = {item.key: item for item in judge(obs)}
    assert items["reconnect"].status == "pass", items["reconnect"]
    assert "logged in again 250 ms after the cut, was resynced at ply 1" in items["reconnect"].did
    assert items["ply"].status == "pass" and items["connected"].status == "pass"
    assert items["time"].status == "skip"  # the cut turn's 320 ms are the checker's doing


def test_a_turn_answered_after_its_match_ended_is_the_clocks_not_two_at_once() -> None:
    # Two at once: match A runs from 1.0 to 5.0; the bot sleeps past its turn in match B, the
    # referee forces a move, the checker resigns B, and only then does the answer arrive. The
    # bot took B's turn up while A ran: too slow (time item), not one match at a time.
    frames = [
        _frame(0.5, "to_bot", {"type": "match_start", "match_id": "B", "ply": 0}),
        _frame(1.0, "to_bot", {"type": "match_start", "match_id": "A", "ply": 0}),
        _frame(2.0, "to_bot", {"type": "turn", "match_id": "B", "ply": 1}),
        _frame(
            3.1, "to_bot", {"type": "forced_move", "match_id": "B", "ply": 1, "reason": "timeout"}
        ),
        _frame(3.2, "to_bot", {"type": "match_end", "match_id": "B"}),
        _frame(3.4, "from_bot", {"type": "move", "match_id": "B", "ply": 1, "move": "a1"}),
        _frame(5.0, "to_bot", {"type": "match_end", "match_id": "A"}),
    ]
    obs = _observations(frames, [_move(0, 0), _move(1, 1, "timeout", None)],
                        termination="resign", at_fault=0)  # fmt: skip
    obs.matches[0].step, obs.matches[0].match_id = STEP_TWO, "B"
    tc = obs.matches[0].time_control
    a_record = {"status": "finished", "moves": [_move(0, 0)], "plies": 1,
                "termination": "normal", "at_fault": None}  # fmt: skip
    played_a = PlayedMatch(
        STEP_TWO, "A", "tic_tac_toe", "random_move", tc, 1, 1.0, 5.0, None, a_record, False
    )
    obs.matches.append(played_a)
    items = {item.key: item for item in judge(obs)}
    assert items["two"].status == "pass", items["two"]
    assert items["time"].status == "fail", items["time"]
    # Without the late answer, the same turn is one left unanswered while A ran.
    obs.frames = [f for f in frames if f.direction != "from_bot"]
    items = {item.key: item for item in judge(obs)}
    assert items["two"].status == "fail", items["two"]


# --- a check stays off the ladder --------------------------------------------------------------


@pytest.mark.timeout(120)
async def test_a_check_leaves_no_rated_match_and_no_fault(start_server: Any) -> None:
    # The quick start's bot waits in the lobby too (kit: game=..., games=0; here with room for
    # lobby matches during the check's, concurrent=3), on a server that rates challenges and
    # where another bot waits in the lobby all along: through the relay it is paired with
    # nobody, and the checker's matches are unrated, so the relay's cut and the check's end
    # leave no rated match and no fault (they once left `disconnect` faults).
    from ply_arena.protocol.client import BotClient

    srv = start_server(rated_challenges=True, pairing_tick_s=0.05)
    _, checker_token = srv.create_bot("fay-check")
    name, token = srv.create_bot("fay")
    _, other_token = srv.create_bot("gus")

    def first(state: Any, legal: list[str], clock: Any) -> str:
        return legal[0]

    def lobby_bot(url: str, bot_token: str) -> BotClient:
        return BotClient(url, bot_token, first, game="tic_tac_toe", games=0, concurrent=3)

    kits = [lobby_bot(srv.ws_url, other_token)]
    tasks = [asyncio.create_task(kits[0].run())]

    def say(line: str) -> None:
        if line.startswith("waiting for your bot at "):
            kits.append(lobby_bot(line.split()[-1], token))
            tasks.append(asyncio.create_task(kits[-1].run()))

    config = CheckConfig(
        url=srv.ws_url, token=checker_token, game="tic_tac_toe", bot=name, listen_port=0,
        wait_s=20, move_ms=400, bank_ms=400, absent_s=2, seed=1,
    )  # fmt: skip
    try:
        obs = await asyncio.wait_for(run_check(config, say), 90)
    finally:
        for kit in kits:
            kit.stop()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    assert obs.matches, "the check played no match"
    listed = srv.api("GET", f"/api/matches?bot={name}&limit=200").json()["matches"]
    assert {m["id"] for m in listed} == {m.match_id for m in obs.matches}  # no lobby match
    for summary in listed:
        record = srv.api("GET", f"/api/matches/{summary['id']}").json()
        assert (record["origin"], record["rated"]) == ("challenge", False), record["id"]
    page = srv.api("GET", f"/api/bots/{name}").json()
    assert page["ratings"] == []  # no rated match: no rating, no fault counted
    board = srv.api("GET", "/api/leaderboard/tic_tac_toe").json()["ranking"]
    assert name not in {row["bot"] for row in board}


@pytest.mark.timeout(60)
async def test_a_bot_made_for_checking_is_no_class_entrant(live_server: Any) -> None:
    from ply_arena.server.checkbot.opponent import CheckerBot

    srv = live_server
    made = srv.api("POST", "/api/classes", admin=True, json={"name": "ai-check"}).json()
    code, instructor = made["join_code"], made["instructor_token"]
    tokens = {}
    for bot in ("gil", "gil-check", "hana"):
        response = srv.api("POST", "/api/register", json={"code": code, "name": bot, "owner": "x"})
        assert response.status_code == 201, response.text
        tokens[bot] = response.json()["token"]
    checker = CheckerBot(srv.ws_url, tokens["gil-check"], seed=1)
    assert await checker.connect() == "gil-check"  # it logs in as a checker once
    await checker.close()
    auth = {"Authorization": f"Bearer {instructor}"}
    body = {"game": "tic_tac_toe", "format": "round_robin", "class": "ai-check"}
    response = srv.api("POST", "/api/tournaments", json={"name": "cup", **body}, headers=auth)
    assert response.status_code == 201, response.text
    tournament = srv.api("GET", "/api/tournaments/cup").json()
    assert sorted(tournament["entrants"]) == ["gil", "hana"]
    # Named, it takes part.
    named = {"name": "cup2", **body, "bots": ["gil", "gil-check"]}
    response = srv.api("POST", "/api/tournaments", json=named, headers=auth)
    assert response.status_code == 201, response.text
