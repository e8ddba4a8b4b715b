"""protocol/schema.json is generated from protocol/messages.py and must not drift from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

from ply_arena.protocol import messages, schema


def test_committed_schema_matches_the_models() -> None:
    committed = schema.SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == schema.render(), (
        "protocol/schema.json is stale: run `python -m ply_arena.protocol.schema` and commit it"
    )


def test_check_flag_detects_drift(tmp_path: Path) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text(schema.render().replace('"hello"', '"helo"', 1), encoding="utf-8")
    assert schema.main(["--check", "--path", str(stale)]) == 1
    assert schema.main(["--path", str(stale)]) == 0  # regenerates
    assert schema.main(["--check", "--path", str(stale)]) == 0


def test_module_runs_as_a_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena.protocol.schema", "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_every_message_type_is_in_its_direction() -> None:
    doc = json.loads(schema.render())
    client_types = set(doc["client_to_server"]["discriminator"]["mapping"])
    server_types = set(doc["server_to_client"]["discriminator"]["mapping"])
    assert client_types == {m.model_fields["type"].default for m in schema.CLIENT_MESSAGES}
    assert server_types == {m.model_fields["type"].default for m in schema.SERVER_MESSAGES}
    assert {"hello", "join", "move", "resign", "ping", "pong"} <= client_types
    assert {"welcome", "match_start", "turn", "match_end", "error"} <= server_types
    assert doc["protocol_version"] == messages.PROTOCOL_VERSION
    for model in schema.CLIENT_MESSAGES:
        definition = doc["$defs"][model.__name__]
        # Other languages' validators must see what pydantic enforces: a required tag, no extras.
        assert definition["required"][0] == "type"
        assert definition["additionalProperties"] is False
    for ref in doc["server_to_client"]["discriminator"]["mapping"].values():
        definition = doc["$defs"][ref.rsplit("/", 1)[-1]]
        # The server may add fields within a protocol version: its messages stay open.
        assert definition["required"][0] == "type"
        assert definition["additionalProperties"] is True


def test_the_spectator_stream_is_in_the_schema_and_the_docs() -> None:
    from ply_arena.protocol import spectator

    doc = json.loads(schema.render())
    stream = doc["spectator_stream"]
    assert set(stream["discriminator"]["mapping"]) == {
        "watch_start",
        "move",
        "turn",
        "match_end",
        "error",
        "pong",
    }
    assert doc["spectator_stream_version"] == spectator.SPECTATOR_STREAM_VERSION == 1
    # The spectators' move and turn are their own models, not the bots' (same tags, other
    # directions): each union maps its tag to its own definition.
    assert stream["discriminator"]["mapping"]["move"].endswith("/WatchMove")
    assert doc["client_to_server"]["discriminator"]["mapping"]["move"].endswith("/MakeMove")
    text = schema.DOCS_PATH.read_text(encoding="utf-8")
    assert "## Watching a match (spectator stream, version 1)" in text
    for model in schema.SPECTATOR_MESSAGES:
        kind = model.model_fields["type"].default
        assert f"#### `{kind}` ({model.__name__})" in text
        ref = stream["discriminator"]["mapping"][kind]
        definition = doc["$defs"][ref.rsplit("/", 1)[-1]]
        assert definition["required"][0] == "type" and definition["additionalProperties"] is True


def _validator(direction: str) -> Any:
    doc = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({"$defs": doc["$defs"], **doc[direction]})


#: A real message of each direction as the wire carries it, with a field that version 1 does
#: not have; and the same message without it.
_TIME_CONTROL = {"move_ms": 1000, "bank_ms": 10000}
_JOINED = {"type": "joined", "game": "connect_four", "time_control": _TIME_CONTROL,
           "policy": "forfeit", "waiting": 1}  # fmt: skip
_JOIN = {"type": "join", "game": "connect_four", "time_control": _TIME_CONTROL}


def test_the_server_may_add_fields_and_a_client_may_not() -> None:
    # docs/protocol.md: the server may add fields to its own messages within a protocol version,
    # so a client generated from the committed schema must accept them (nested objects too);
    # the server refuses an unknown field from a client, and so must the schema.
    server, client = _validator("server_to_client"), _validator("client_to_server")
    assert server.is_valid(_JOINED) and client.is_valid(_JOIN)
    assert server.is_valid({**_JOINED, "queue_rank": 3})
    assert server.is_valid({**_JOINED, "time_control": {**_TIME_CONTROL, "increment_ms": 0}})
    assert server.is_valid({"type": "ping", "id": 4, "sent_at": "now"})
    stream = _validator("spectator_stream")
    assert stream.is_valid({"type": "pong", "id": 4, "server_ms": 12})
    assert not client.is_valid({**_JOIN, "queue_rank": 3})
    assert not client.is_valid({**_JOIN, "time_control": {**_TIME_CONTROL, "increment_ms": 0}})
    assert not client.is_valid({"type": "pong", "id": 4, "sent_at": "now"})
    # Closed or open, a message is still checked: a wrong type stays wrong.
    assert not server.is_valid({**_JOINED, "waiting": "one"})


def test_every_position_links_its_games_shape() -> None:
    from ply_arena import games

    doc = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    holders = {"MatchStart", "Turn", "MatchEnd", "WatchStart", "WatchMove"}
    for name in holders:
        assert doc["$defs"][name]["properties"]["position"]["$ref"] == "#/$defs/Position"
    position = doc["$defs"]["Position"]
    games_md = (schema.DOCS_PATH.parent / "games.md").read_text(encoding="utf-8")
    server = _validator("server_to_client")
    for name, example in zip(games.names(), position["examples"], strict=True):
        # The link leads to the game's section, and the example is that game's own position.
        assert f"{name}: docs/games.md#{name}" in position["description"]
        assert f"\n## {name}\n" in games_md
        game = games.get(name)
        assert game.state_to_json(game.state_from_json(example)) == example
        turn = {"type": "turn", "match_id": "M", "ply": 0, "position": example,
                "legal_moves": [], "since_last": [], "clocks_ms": [1, 1], "move_ms": 1,
                "deadline_ms": 2}  # fmt: skip
        assert server.is_valid(turn), list(server.iter_errors(turn))


def test_protocol_docs_tables_match_the_code() -> None:
    text = schema.DOCS_PATH.read_text(encoding="utf-8")
    assert schema.render_docs(text) == text, (
        "docs/protocol.md tables are stale: run `python -m ply_arena.protocol.schema` and commit it"
    )


def test_protocol_docs_cover_every_message_and_error() -> None:
    from ply_arena.protocol.errors import ERRORS, ErrorCode

    text = schema.DOCS_PATH.read_text(encoding="utf-8")
    for model in (*schema.CLIENT_MESSAGES, *schema.SERVER_MESSAGES):
        kind = model.model_fields["type"].default
        assert f"#### `{kind}` ({model.__name__})" in text
        for field_name in model.model_fields:
            assert f"| `{field_name}` |" in text
    assert set(ERRORS) == set(ErrorCode)
    for code in ErrorCode:
        assert f"| `{code.value}` |" in text
    for needle in ("/ws", "64 KiB", "deadline_ms", "bank", "grace", "forfeit", "random_move"):
        assert needle in text


def test_render_docs_rewrites_only_marked_sections() -> None:
    stale = "intro\n<!-- generated:errors -->\nSTALE-TABLE\n<!-- /generated:errors -->\noutro\n"
    fresh = schema.render_docs(stale)
    assert fresh.startswith("intro\n<!-- generated:errors -->\n| code |")
    assert fresh.endswith("<!-- /generated:errors -->\noutro\n")
    assert "STALE-TABLE" not in fresh
    assert schema.render_docs(fresh) == fresh
