"""A broken ``choose`` must not look like a working bot (real server, real WebSockets).

By default the kit resigns the match and ``run()`` raises the student's error; the random fallback
is an explicit choice (``on_choose_error="random"``), logged and counted.
"""

from __future__ import annotations

import asyncio
import logging
import random
import traceback
from typing import Any

import pytest

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, ChooseError, Clock

GAME = "tic_tac_toe"


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


def stored(server: Any, match_id: str) -> dict[str, Any]:
    response = server.api("GET", f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def play_against(server: Any, client_of: Any, game: str = GAME) -> tuple[Any, list[Any]]:
    """``client_of(url, token)`` against a random kit bot for one match: (what the broken bot's
    run() returned or raised, the opponent's results)."""
    _, token_a = server.create_bot()
    _, token_b = server.create_bot()
    broken = client_of(server.ws_url, token_a)
    opponent = BotClient(server.ws_url, token_b, random_choose, game=game, games=1)
    outcome, results = await asyncio.wait_for(
        asyncio.gather(broken.run(), opponent.run(), return_exceptions=True), 30
    )
    assert not isinstance(results, BaseException), results
    return outcome, results


async def test_a_raising_choose_resigns_and_run_raises_the_students_error(
    live_server: Any,
) -> None:
    def students_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
        raise KeyError("student bug")

    def client(url: str, token: str) -> BotClient:
        return BotClient(url, token, students_choose, game=GAME, games=3)

    outcome, (end,) = await play_against(live_server, client)
    assert isinstance(outcome, KeyError) and outcome.args == ("student bug",)
    # The student's own frame is in the traceback, and a note says what the kit did.
    frames = [f.name for f in traceback.extract_tb(outcome.__traceback__)]
    assert "students_choose" in frames
    assert any("resigned the match" in note for note in outcome.__notes__)
    # The record says what happened: the broken bot resigned, at fault; no other match began.
    assert end.termination.value == "resign"
    record = stored(live_server, end.match_id)
    assert record["termination"] == "resign"
    assert live_server.api("GET", "/api/matches").json()["total"] == 1


@pytest.mark.parametrize(
    ("returned", "needle"),
    [
        ("z9", "returned 'z9', which is not a legal move"),
        (None, "returned None (did you forget to return the move?)"),
        (
            42,
            "returned 42 (an int is read as a tic_tac_toe move object, the cell index, 0..8, "
            "row by row from the top-left: 0 is the move written 'a3'; return a string of "
            "legal_moves to play by notation), which is not a legal move",
        ),
    ],
)
async def test_an_illegal_return_resigns_and_names_the_value_and_the_legal_moves(
    live_server: Any, returned: Any, needle: str
) -> None:
    def client(url: str, token: str) -> BotClient:
        return BotClient(url, token, lambda state, legal, clock: returned, game=GAME, games=1)

    outcome, (end,) = await play_against(live_server, client)
    assert isinstance(outcome, ChooseError), outcome
    assert needle in str(outcome)
    assert f"legal moves: {', '.join(outcome.legal_moves)}" in str(outcome)
    assert "a3" in outcome.legal_moves or "b2" in outcome.legal_moves
    assert end.termination.value == "resign"


async def test_another_spelling_of_a_legal_move_is_accepted(live_server: Any) -> None:
    def shouting(state: State, legal_moves: list[str], clock: Clock) -> str:
        return random.choice(legal_moves).upper()  # "B2" for "b2": the game parses it

    def client(url: str, token: str) -> BotClient:
        return BotClient(url, token, shouting, game=GAME, games=1)

    outcome, (end,) = await play_against(live_server, client)
    assert not isinstance(outcome, BaseException), outcome
    assert end.termination.value == "normal"


async def test_the_random_fallback_is_explicit_loud_and_counted(
    live_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    calls = [0]

    def flaky(state: State, legal_moves: list[str], clock: Clock) -> str:
        calls[0] += 1
        if calls[0] % 2:
            raise RuntimeError("flaky student code")
        return legal_moves[0]

    clients: list[BotClient] = []

    def client(url: str, token: str) -> BotClient:
        bot = BotClient(url, token, flaky, game=GAME, games=1, on_choose_error="random")
        clients.append(bot)
        return bot

    with caplog.at_level(logging.INFO, logger="ply_arena.protocol.client"):
        outcome, (end,) = await play_against(live_server, client)
    assert not isinstance(outcome, BaseException), outcome
    assert end.termination.value == "normal"
    failed = (calls[0] + 1) // 2
    assert failed >= 2
    assert clients[0].fallbacks == {end.match_id: failed}
    # Each fallback is logged as an error with the student's traceback ...
    fallbacks = [r for r in caplog.records if "Playing a random legal move instead" in r.message]
    assert len(fallbacks) == failed
    assert all(r.levelno == logging.ERROR and r.exc_info for r in fallbacks)
    # ... the match_end line gives the count, and the record marks the moves.
    assert any(f"random fallbacks: {failed} of our moves" in r.message for r in caplog.records)
    infos = [m["info"] for m in stored(live_server, end.match_id)["moves"]]
    marked = [i for i in infos if i and "random fallback" in i.get("comment", "")]
    assert len(marked) == failed


def test_on_choose_error_is_checked() -> None:
    with pytest.raises(ValueError, match="on_choose_error must be 'raise' or 'random'"):
        BotClient(
            "ws://127.0.0.1:1/ws", "t", random_choose, game=GAME,
            on_choose_error="ignore",  # type: ignore[arg-type]
        )  # fmt: skip


async def test_an_element_of_state_actions_is_played_as_it_is_and_silently(
    live_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # The documented way: return one of state.actions(). In Connect Four 3 is the column index
    # 3, written '4', and its digits are also the notation of the column written '3': the kit
    # must play '4' and say nothing (it once warned at every match, advising to return '3').
    played: list[int] = []  # our seat, each time we return 3

    def from_actions(state: State, legal_moves: list[str], clock: Clock) -> Any:
        if 3 in state.actions():
            played.append(state.player)
            return state.actions()[state.actions().index(3)]
        return state.actions()[0]

    def client(url: str, token: str) -> BotClient:
        return BotClient(url, token, from_actions, game="connect_four", games=1)

    with caplog.at_level(logging.WARNING, logger="ply_arena.protocol.client"):
        outcome, (end,) = await play_against(live_server, client, "connect_four")
    assert not isinstance(outcome, BaseException), outcome
    assert len(played) >= 2
    ours = [r.getMessage() for r in caplog.records if "choose()" in r.getMessage()]
    assert ours == []
    moves = stored(live_server, end.match_id)["moves"]
    assert [m["move"] for m in moves if m["seat"] == played[0]][: len(played)] == ["4"] * len(
        played
    )


@pytest.mark.parametrize("returned", [7, -1])
async def test_an_int_that_is_no_column_index_says_how_ints_are_read(
    live_server: Any, returned: int
) -> None:
    # 7 is no column index; -1 must not be read as the last column (Python's index -1).
    def client(url: str, token: str) -> BotClient:
        return BotClient(
            url, token, lambda state, legal, clock: returned, game="connect_four", games=1
        )

    outcome, (end,) = await play_against(live_server, client, "connect_four")
    assert isinstance(outcome, ChooseError), outcome
    assert str(outcome).startswith(
        f"choose() returned {returned} (an int is read as a connect_four move object, the "
        "column index, 0..6 from the left: 0 is the move written '1'; return a string of "
        "legal_moves to play by notation), which is not a legal move in match"
    )
    assert end.termination.value == "resign"


async def test_info_mistakes_are_warned_about_once_per_match_in_one_line(
    live_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    moves = [0]

    def with_info(state: State, legal_moves: list[str], clock: Clock) -> Any:
        moves[0] += 1
        return legal_moves[0], {"depht": 3, "depth": "deep", "nodes": 5}

    def client(url: str, token: str) -> BotClient:
        return BotClient(url, token, with_info, game=GAME, games=1)

    with caplog.at_level(logging.WARNING, logger="ply_arena.protocol.client"):
        outcome, (end,) = await play_against(live_server, client)
    assert not isinstance(outcome, BaseException), outcome
    assert moves[0] >= 2
    said = [r.getMessage() for r in caplog.records if "info" in r.getMessage()]
    assert said == [
        f"match {end.match_id}: choose(): unknown info key 'depht' (did you mean 'depth'?) "
        "dropped; the keys are depth, score, nodes, pv, comment (said once per match)",
        f"match {end.match_id}: choose(): info depth='deep' is not usable (Input should be a "
        "valid integer, unable to parse string as an integer): dropped (said once per match)",
    ]
    # What was usable went with every move.
    infos = [m["info"] for m in stored(live_server, end.match_id)["moves"] if m["info"]]
    assert len(infos) == moves[0] and all(i["nodes"] == 5 and "depth" not in i for i in infos)


async def test_a_legal_move_with_something_that_is_not_info_blames_the_info(
    live_server: Any,
) -> None:
    def client(url: str, token: str) -> BotClient:
        return BotClient(
            url, token, lambda state, legal, clock: (legal[0], "not-info"), game=GAME, games=1
        )

    outcome, (end,) = await play_against(live_server, client)
    assert isinstance(outcome, ChooseError), outcome
    text = str(outcome)
    assert text.startswith("choose() returned ('")
    assert "is a legal move, but the second item, 'not-info', is not usable info (return the " in (
        text
    )
    assert "a dict of depth, score, nodes, pv, comment" in text
    assert end.termination.value == "resign"


async def test_info_the_server_refuses_is_logged_once(
    live_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from ply_arena.protocol.messages import MoveInfo

    # model_construct skips validation: the kit sends it as it is, the server refuses it (nodes
    # must be >= 0), plays the move anyway and says so with an error naming the match.
    def unchecked(state: State, legal_moves: list[str], clock: Clock) -> Any:
        return legal_moves[0], MoveInfo.model_construct(nodes=-5)

    def client(url: str, token: str) -> BotClient:
        return BotClient(url, token, unchecked, game=GAME, games=1)

    with caplog.at_level(logging.INFO, logger="ply_arena.protocol.client"):
        outcome, (end,) = await play_against(live_server, client)
    assert not isinstance(outcome, BaseException), outcome
    assert end.termination.value == "normal"
    refused = [r for r in caplog.records if "refused the info" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    text = refused[0].getMessage()
    assert text.startswith(f"match {end.match_id}: the server played our move but refused")
    assert "(invalid_message: info.nodes: Input should be greater than or equal to 0" in text
    assert not any("server error" in r.getMessage() for r in caplog.records)
