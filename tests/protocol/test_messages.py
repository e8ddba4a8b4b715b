"""Every wire message survives a JSON round trip; bad ones are refused with a clear reason."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from ply_arena.protocol import messages as m
from ply_arena.protocol.schema import CLIENT_MESSAGES, SERVER_MESSAGES

TC = m.TimeControl(move_ms=1000, bank_ms=10_000)
POSITION: dict[str, Any] = {"board": ["...", ".X.", "..."], "player": 1}

# One full example per message type (every optional field filled where it has one).
CLIENT_EXAMPLES: list[BaseModel] = [
    m.Hello(protocol=m.PROTOCOL_VERSION, token="t0k3n", client="my-bot/1.0"),
    m.JoinLobby(game="connect_four", time_control=TC, policy=m.Policy.random_move),
    m.LeaveLobby(game="connect_four"),
    m.LeaveLobby(),
    m.Challenge(game="tic_tac_toe", opponents=["alice"], time_control=TC),
    m.AcceptChallenge(challenge_id="c1"),
    m.DeclineChallenge(challenge_id="c1"),
    m.MakeMove(
        match_id="m1",
        ply=3,
        move="b2",
        info=m.MoveInfo(depth=4, score=0.5, nodes=1234, pv=["b2", "a1"], comment="centre"),
    ),
    m.MakeMove(match_id="m1", ply=0, move="a1"),
    m.Resign(match_id="m1"),
    m.Ping(id=7),
    m.Pong(id=7),
]
SERVER_EXAMPLES: list[BaseModel] = [
    m.Welcome(
        protocol=1, bot="alice", server="ply-arena 0.1.0", heartbeat_ms=15_000, matches=["m1"]
    ),
    m.LobbyJoined(game="connect_four", time_control=TC, policy=m.Policy.forfeit, waiting=1),
    m.LobbyLeft(game=None),
    m.ChallengeReceived(
        challenge_id="c1",
        challenger="bob",
        game="tic_tac_toe",
        opponents=["alice"],
        time_control=TC,
        policy=m.Policy.forfeit,
    ),
    m.ChallengeSent(challenge_id="c1"),
    m.ChallengeDeclined(challenge_id="c1", by="alice"),
    m.MatchStart(
        match_id="m1",
        game="tic_tac_toe",
        seats=[m.SeatInfo(seat=0, bot="alice"), m.SeatInfo(seat=1, bot="bob")],
        your_seat=1,
        time_control=TC,
        policy=m.Policy.forfeit,
        position=POSITION,
    ),
    m.Turn(
        match_id="m1",
        ply=1,
        position=POSITION,
        legal_moves=["a1", "c3"],
        since_last=[
            m.PlayedMove(ply=0, seat=0, move="b2"),
            m.PlayedMove(ply=1, seat=None, move="31"),
        ],
        clocks_ms=[10_000, 9_500],
        move_ms=1000,
        deadline_ms=10_500,
    ),
    m.ForcedMove(match_id="m1", ply=1, move="a1", reason="timeout"),
    m.MatchEnd(
        match_id="m1",
        payoffs=[1.0, -1.0],
        termination=m.Termination.illegal_move,
        at_fault=1,
        position=POSITION,
        plies=5,
    ),
    m.ErrorMessage(code="stale_ply", message="ply 3 is not 4", fatal=False, match_id="m1"),
    m.Ping(id=1),
    m.Pong(id=1),
]


def test_examples_cover_every_message_type() -> None:
    assert {type(x) for x in CLIENT_EXAMPLES} == set(CLIENT_MESSAGES)
    assert {type(x) for x in SERVER_EXAMPLES} == set(SERVER_MESSAGES)


@pytest.mark.parametrize("message", CLIENT_EXAMPLES, ids=lambda x: type(x).__name__)
def test_client_messages_round_trip(message: BaseModel) -> None:
    text = message.model_dump_json()
    assert json.loads(text)["type"] == type(message).model_fields["type"].default
    back = m.client_message_adapter.validate_json(text)
    assert back == message
    assert type(back) is type(message)
    # Also from plain Python objects, as a bot's json.loads() gives them.
    assert m.client_message_adapter.validate_python(json.loads(text)) == message


@pytest.mark.parametrize("message", SERVER_EXAMPLES, ids=lambda x: type(x).__name__)
def test_server_messages_round_trip(message: BaseModel) -> None:
    text = message.model_dump_json()
    back = m.server_message_adapter.validate_json(text)
    assert back == message
    assert type(back) is type(message)


def test_minimal_wire_forms_fill_defaults() -> None:
    hello = m.client_message_adapter.validate_json('{"type": "hello", "protocol": 1, "token": "x"}')
    assert hello == m.Hello(protocol=1, token="x", client="")
    join = m.client_message_adapter.validate_json('{"type": "join", "game": "connect_four"}')
    assert isinstance(join, m.JoinLobby)
    assert join.time_control is None and join.policy is m.Policy.forfeit
    move = m.client_message_adapter.validate_json(
        '{"type": "move", "match_id": "m", "ply": 2, "move": "d"}'
    )
    assert isinstance(move, m.MakeMove) and move.info is None
    tc = m.TimeControl.model_validate({"move_ms": 500})
    assert tc.bank_ms == 0


def _errors(adapter: Any, data: dict[str, Any]) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(data)
    return caught.value.errors()  # type: ignore[no-any-return]


BAD_CLIENT: list[tuple[str, dict[str, Any], str, tuple[Any, ...]]] = [
    # (case, data, expected pydantic error type, location that must appear)
    ("no type", {"protocol": 1, "token": "x"}, "union_tag_not_found", ()),
    ("unknown type", {"type": "hullo", "protocol": 1, "token": "x"}, "union_tag_invalid", ()),
    ("hello without token", {"type": "hello", "protocol": 1}, "missing", ("hello", "token")),
    (
        "hello protocol not int",
        {"type": "hello", "protocol": "one", "token": "x"},
        "int_parsing",
        ("hello", "protocol"),
    ),
    (
        "hello extra field",
        {"type": "hello", "protocol": 1, "token": "x", "name": "me"},
        "extra_forbidden",
        ("hello", "name"),
    ),
    (
        "long token",
        {"type": "hello", "protocol": 1, "token": "x" * 201},
        "string_too_long",
        ("hello", "token"),
    ),
    ("join without game", {"type": "join"}, "missing", ("join", "game")),
    (
        "join bad policy",
        {"type": "join", "game": "g", "policy": "lose"},
        "enum",
        ("join", "policy"),
    ),
    (
        "join zero move_ms",
        {"type": "join", "game": "g", "time_control": {"move_ms": 0}},
        "greater_than_equal",
        ("join", "time_control", "move_ms"),
    ),
    (
        "join move_ms under the minimum",
        {"type": "join", "game": "g", "time_control": {"move_ms": m.MIN_MOVE_MS - 1}},
        "greater_than_equal",
        ("join", "time_control", "move_ms"),
    ),
    (
        "join move_ms over the maximum",
        {"type": "join", "game": "g", "time_control": {"move_ms": m.MAX_MOVE_MS + 1}},
        "less_than_equal",
        ("join", "time_control", "move_ms"),
    ),
    (
        "join bank over the maximum",
        {
            "type": "join",
            "game": "g",
            "time_control": {"move_ms": 100, "bank_ms": m.MAX_BANK_MS + 1},
        },
        "less_than_equal",
        ("join", "time_control", "bank_ms"),
    ),
    (
        "ping id beyond JavaScript's exact integers",
        {"type": "ping", "id": 2**70},
        "less_than_equal",
        ("ping", "id"),
    ),
    (
        "move info score not finite",
        {"type": "move", "match_id": "m", "ply": 0, "move": "a", "info": {"score": float("inf")}},
        "finite_number",
        ("move", "info", "score"),
    ),
    (
        "join negative bank",
        {"type": "join", "game": "g", "time_control": {"move_ms": 100, "bank_ms": -1}},
        "greater_than_equal",
        ("join", "time_control", "bank_ms"),
    ),
    (
        "challenge nobody",
        {"type": "challenge", "game": "g", "opponents": []},
        "too_short",
        ("challenge", "opponents"),
    ),
    (
        "challenge three",
        {"type": "challenge", "game": "g", "opponents": ["a", "b", "c"]},
        "too_long",
        ("challenge", "opponents"),
    ),
    ("accept without id", {"type": "accept"}, "missing", ("accept", "challenge_id")),
    (
        "move without ply",
        {"type": "move", "match_id": "m", "move": "a1"},
        "missing",
        ("move", "ply"),
    ),
    (
        "move negative ply",
        {"type": "move", "match_id": "m", "ply": -1, "move": "a1"},
        "greater_than_equal",
        ("move", "ply"),
    ),
    (
        "move as number",
        {"type": "move", "match_id": "m", "ply": 0, "move": 3},
        "string_type",
        ("move", "move"),
    ),
    (
        "move info extra",
        {"type": "move", "match_id": "m", "ply": 0, "move": "a", "info": {"depth": 1, "eval": 3}},
        "extra_forbidden",
        ("move", "info", "eval"),
    ),
    (
        "move info long pv",
        {"type": "move", "match_id": "m", "ply": 0, "move": "a", "info": {"pv": ["a"] * 65}},
        "too_long",
        ("move", "info", "pv"),
    ),
    (
        "move info long comment",
        {"type": "move", "match_id": "m", "ply": 0, "move": "a", "info": {"comment": "x" * 281}},
        "string_too_long",
        ("move", "info", "comment"),
    ),
    (
        "resign with ply",
        {"type": "resign", "match_id": "m", "ply": 3},
        "extra_forbidden",
        ("resign", "ply"),
    ),
    ("ping id text", {"type": "ping", "id": "abc"}, "int_parsing", ("ping", "id")),
    (
        "server message sent by client",
        {
            "type": "welcome",
            "protocol": 1,
            "bot": "a",
            "server": "s",
            "heartbeat_ms": 1,
            "matches": [],
        },
        "union_tag_invalid",
        (),
    ),
]


@pytest.mark.parametrize(
    ("data", "error_type", "loc"), [c[1:] for c in BAD_CLIENT], ids=[c[0] for c in BAD_CLIENT]
)
def test_bad_client_messages_are_refused(
    data: dict[str, Any], error_type: str, loc: tuple[Any, ...]
) -> None:
    errors = _errors(m.client_message_adapter, data)
    assert any(e["type"] == error_type and tuple(e["loc"])[: len(loc)] == loc for e in errors), (
        errors
    )


BAD_SERVER: list[tuple[str, dict[str, Any], str]] = [
    (
        "turn without deadline",
        {
            "type": "turn",
            "match_id": "m",
            "ply": 0,
            "position": {},
            "legal_moves": [],
            "since_last": [],
            "clocks_ms": [],
            "move_ms": 1,
        },
        "missing",
    ),
    (
        "end with bad termination",
        {
            "type": "match_end",
            "match_id": "m",
            "payoffs": [0, 0],
            "termination": "boredom",
            "at_fault": None,
            "position": {},
            "plies": 0,
        },
        "enum",
    ),
    (
        "error fatal not bool",
        {"type": "error", "code": "x", "message": "y", "fatal": "maybe"},
        "bool_parsing",
    ),
    (
        "forced bad reason",
        {"type": "forced_move", "match_id": "m", "ply": 0, "move": "a", "reason": "bored"},
        "literal_error",
    ),
    (
        "client message from server",
        {"type": "hello", "protocol": 1, "token": "x"},
        "union_tag_invalid",
    ),
]


@pytest.mark.parametrize(
    ("data", "error_type"), [c[1:] for c in BAD_SERVER], ids=[c[0] for c in BAD_SERVER]
)
def test_bad_server_messages_are_refused(data: dict[str, Any], error_type: str) -> None:
    assert any(e["type"] == error_type for e in _errors(m.server_message_adapter, data))


def test_bad_json_text_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        m.client_message_adapter.validate_json('{"type": "ping", ')
    assert caught.value.errors()[0]["type"] == "json_invalid"


def test_messages_are_immutable() -> None:
    hello = m.Hello(protocol=1, token="x")
    with pytest.raises(ValidationError):
        hello.token = "y"  # type: ignore[misc]
