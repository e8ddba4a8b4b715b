"""Records anyone can verify: bots play every kind of match through a real server; every stored
record passes ``arena verify`` offline, and fails it with one die, one move, the result or the
seed changed; the kit checks the dice against match_start's commitment at match_end."""

from __future__ import annotations

import asyncio
import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer
from typer.testing import CliRunner

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock, MatchView
from ply_arena.protocol.messages import MatchEnd
from ply_arena.server.cli import app

runner = CliRunner()


class Recorder(BotClient):
    """A kit bot playing random moves that keeps each match's view for the test."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.views: list[tuple[MatchView, MatchEnd]] = []

    def on_result(self, view: MatchView, end: MatchEnd) -> None:
        self.views.append((view, end))


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def play(server: LiveServer, game: str, players: int) -> list[Recorder]:
    bots = [
        Recorder(server.ws_url, server.create_bot()[1], random_choose, game=game, games=1)
        for _ in range(players)
    ]
    async with asyncio.timeout(90):
        await asyncio.gather(*(bot.run() for bot in bots))
    return bots


def verify_file(tmp_path: Path, record: dict[str, Any], name: str) -> tuple[int, str]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(record))
    done = runner.invoke(app, ["verify", str(path)])
    return done.exit_code, done.output


@pytest.fixture
async def played(live_server: LiveServer) -> dict[str, list[Recorder]]:
    return {
        "backgammon": await play(live_server, "backgammon", 2),
        "connect_four": await play(live_server, "connect_four", 2),
        "chinese_checkers": await play(live_server, "chinese_checkers", 3),
    }


async def test_every_stored_record_verifies_offline(
    live_server: LiveServer, played: dict[str, list[Recorder]], tmp_path: Path
) -> None:
    listing = live_server.api("GET", "/api/matches?limit=50").json()
    assert listing["total"] == 3
    for summary in listing["matches"]:
        response = live_server.api("GET", f"/api/matches/{summary['id']}/record")
        assert response.status_code == 200
        assert f'filename="{summary["id"]}.json"' in response.headers["content-disposition"]
        record = response.json()
        assert record["record_version"] == 1
        assert record["dice"]["scheme"] == "sha256-v1"
        assert record["dice"]["seed"] == record["seed"] is not None
        status, output = verify_file(tmp_path, record, summary["id"])
        assert status == 0, output
        assert "OK: the record holds" in output
        if record["game"] == "backgammon":
            assert "dice rolls re-derived from the seed" in output
    # The same, fetched by id from the server.
    first = listing["matches"][0]["id"]
    done = runner.invoke(app, ["verify", first, "--url", live_server.url])
    assert done.exit_code == 0 and "OK: the record holds" in done.output, done.output


async def test_one_change_to_a_record_fails_it(
    live_server: LiveServer, played: dict[str, list[Recorder]], tmp_path: Path
) -> None:
    (_, end), _ = (bot.views[0] for bot in played["backgammon"])
    record = live_server.api("GET", f"/api/matches/{end.match_id}/record").json()
    moves = record["moves"]
    die = next(i for i, m in enumerate(moves) if m["seat"] is None and i > 0)
    move = next(i for i, m in enumerate(moves) if m["seat"] is not None and i > 10)

    other_die = copy.deepcopy(record)
    rolled = moves[die]["move"]
    other_die["moves"][die]["move"] = "6-6" if rolled != "6-6" else "1-1"
    status, output = verify_file(tmp_path, other_die, "die")
    assert status == 1 and f"ply {die} " in output and "the seed gives the roll" in output, output

    other_move = copy.deepcopy(record)
    other_move["moves"][move]["move"] = "bar/1"
    status, output = verify_file(tmp_path, other_move, "move")
    assert status == 1 and f"FAIL: ply {move} ('bar/1')" in output, output

    other_result = copy.deepcopy(record)
    other_result["result"]["payoffs"] = list(reversed(record["result"]["payoffs"]))
    status, output = verify_file(tmp_path, other_result, "result")
    assert status == 1 and "FAIL: the stored payoffs" in output, output

    other_seed = copy.deepcopy(record)
    other_seed["dice"]["seed"] = str(int(record["dice"]["seed"]) + 1)
    status, output = verify_file(tmp_path, other_seed, "seed")
    assert status == 1 and "does not match the commitment" in output, output

    # What the record repeats for its readers must agree with what is checked.
    for change, expected in [
        (lambda r: r["seats"][0].update(payoff=r["seats"][1]["payoff"]), "the seats' payoffs"),
        (lambda r: r.update(termination="resign", at_fault=0), "termination 'resign'"),
        (lambda r: r.update(status="aborted"), "status is 'aborted'"),
        (lambda r: r.update(seed="42"), "seed '42' is not the dice's seed"),
        (lambda r: r.update(plies=3), "plies is 3"),
    ]:
        copied = copy.deepcopy(record)
        change(copied)
        status, output = verify_file(tmp_path, copied, "copy")
        assert status == 1 and expected in output, output

    status, output = verify_file(tmp_path, record, "untouched")
    assert status == 0, output


async def test_the_kit_checks_the_dice_at_match_end(
    live_server: LiveServer, played: dict[str, list[Recorder]]
) -> None:
    for game, bots in played.items():
        for bot in bots:
            ((view, end),) = bot.views
            record = live_server.api("GET", f"/api/matches/{end.match_id}/record").json()
            # match_start committed to the seed that match_end revealed.
            assert view.start.dice_commitment == record["dice"]["commitment"]
            assert end.seed == record["dice"]["seed"]
            assert end.game == game  # match_end names its game, for the bot's next join
            assert view.dice_verified is True, game
            if game == "backgammon":
                seen = [ply for ply, (seat, _) in view.events.items() if seat is None]
                assert len(seen) > 5  # the bot re-derived the dice it saw


def test_arena_verify_says_what_it_cannot_read(tmp_path: Path) -> None:
    done = runner.invoke(app, ["verify", str(tmp_path / "missing.json")])
    assert done.exit_code == 2 and "cannot read" in done.output
    (tmp_path / "bad.json").write_text("{not json")
    done = runner.invoke(app, ["verify", str(tmp_path / "bad.json")])
    assert done.exit_code == 2 and "is not JSON" in done.output
    (tmp_path / "other.json").write_text('{"hello": 1}')
    done = runner.invoke(app, ["verify", str(tmp_path / "other.json")])
    assert done.exit_code == 2 and "is not a match record" in done.output
