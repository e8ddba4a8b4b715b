"""Challenges: a kit bot declines them unless its author chose to accept (real server).

Otherwise any bot could challenge a student's bot to 50 ms per move and win on time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, BotError, Clock
from ply_arena.protocol.messages import ChallengeReceived, LobbyJoined, LobbyLeft, TimeControl

GAME = "tic_tac_toe"
ARENA = [sys.executable, "-m", "ply_arena"]


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


class Waiting(BotClient):
    """A lobby bot that says when it is in the queue (so a challenger finds it connected)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queued = asyncio.Event()
        self.received: list[ChallengeReceived] = []

    async def on_joined(self, message: LobbyJoined) -> None:
        await super().on_joined(message)
        self.queued.set()

    async def on_challenge_received(self, message: ChallengeReceived) -> None:
        self.received.append(message)
        await super().on_challenge_received(message)


async def challenge(
    server: Any, challenged: Waiting, challenged_name: str, **options: Any
) -> list[Any] | BaseException:
    """Start ``challenged`` (in the lobby), then one kit bot challenging it for one match;
    the challenger's results, or what its run() raised."""
    task = asyncio.create_task(challenged.run())
    await asyncio.wait_for(challenged.queued.wait(), 10)
    _, token = server.create_bot()
    challenger = BotClient(
        server.ws_url, token, random_choose, game=GAME, games=1, challenge=[challenged_name],
        **options,
    )  # fmt: skip
    try:
        outcome = await asyncio.wait_for(
            asyncio.gather(challenger.run(), return_exceptions=True), 20
        )
    finally:
        challenged.stop()
        await asyncio.wait_for(task, 10)
    return outcome[0]  # type: ignore[no-any-return]


async def test_a_kit_bot_declines_challenges_by_default(live_server: Any) -> None:
    name, token = live_server.create_bot()
    challenged = Waiting(live_server.ws_url, token, random_choose, game=GAME, games=1)
    outcome = await challenge(live_server, challenged, name, time_control=TimeControl(move_ms=50))
    # The challenger is told why, in the decliner's words, and no match was played.
    assert isinstance(outcome, BotError) and outcome.code == "challenge_declined"
    assert str(outcome) == (
        f"challenge_declined: {name} declined the challenge: it accepts no challenges (the bot "
        "kit's default; its author can start it with accept_challenges=True, or arena agent "
        "--accept-challenges)"
    )
    assert len(challenged.received) == 1
    assert live_server.api("GET", "/api/matches").json()["total"] == 0


async def test_accept_challenges_true_accepts(live_server: Any) -> None:
    name, token = live_server.create_bot()
    challenged = Waiting(
        live_server.ws_url, token, random_choose, game=GAME, games=1, accept_challenges=True
    )
    outcome = await challenge(live_server, challenged, name)
    assert not isinstance(outcome, BaseException), outcome
    assert [end.termination.value for end in outcome] == ["normal"]


async def test_accept_challenges_from_named_bots_and_above_a_minimum_move_time(
    live_server: Any,
) -> None:
    friend, friend_token = live_server.create_bot("friend")
    name, token = live_server.create_bot()
    challenged = Waiting(
        live_server.ws_url, token, random_choose, game=GAME, games=2,
        accept_challenges=[friend], min_move_ms=200,
    )  # fmt: skip
    task = asyncio.create_task(challenged.run())
    await asyncio.wait_for(challenged.queued.wait(), 10)
    stranger, stranger_token = live_server.create_bot()

    def challenger(token: str, move_ms: int) -> BotClient:
        return BotClient(
            live_server.ws_url, token, random_choose, game=GAME, games=1, challenge=[name],
            time_control=TimeControl(move_ms=move_ms, bank_ms=1000),
        )  # fmt: skip

    try:
        with pytest.raises(BotError, match="challenge_declined") as not_listed:
            await asyncio.wait_for(challenger(stranger_token, 1000).run(), 20)
        assert str(not_listed.value).endswith(
            f"declined the challenge: it accepts challenges only from the bots it lists, and "
            f"{stranger} is not one"
        )
        with pytest.raises(BotError, match="challenge_declined") as too_fast:
            await asyncio.wait_for(challenger(friend_token, 100).run(), 20)
        assert str(too_fast.value).endswith(
            "declined the challenge: it plays with at least 200 ms per move (min_move_ms), and "
            "the challenge gives 100 ms"
        )
        (end,) = await asyncio.wait_for(challenger(friend_token, 300).run(), 20)
        assert end.termination.value == "normal"
    finally:
        challenged.stop()
        await asyncio.wait_for(task, 10)
    assert [r.challenger for r in challenged.received] == [stranger, friend, friend]


async def test_a_predicate_decides(live_server: Any) -> None:
    name, token = live_server.create_bot()
    seen: list[ChallengeReceived] = []

    def only_slow_games(message: ChallengeReceived) -> bool:
        seen.append(message)
        return message.time_control.move_ms >= 500

    challenged = Waiting(
        live_server.ws_url, token, random_choose, game=GAME, games=1,
        accept_challenges=only_slow_games,
    )  # fmt: skip
    outcome = await challenge(live_server, challenged, name, time_control=TimeControl(move_ms=60))
    assert isinstance(outcome, BotError) and outcome.code == "challenge_declined"
    assert str(outcome).endswith("declined the challenge: its accept_challenges function said no")
    assert [m.time_control.move_ms for m in seen] == [60]


def test_a_bot_without_a_game_must_accept_something() -> None:
    with pytest.raises(ValueError, match="accept_challenges=True"):
        BotClient("ws://127.0.0.1:1/ws", "t", random_choose)


@pytest.mark.parametrize("flag", ["--accept-challenges", "--accept-from=KIT", None])
async def test_arena_agent_accepts_challenges_only_when_asked(
    live_server: Any, flag: str | None
) -> None:
    agent_name, agent_token = live_server.create_bot()
    kit_name, kit_token = live_server.create_bot()
    flags = [flag.replace("KIT", kit_name)] if flag else []
    proc = await asyncio.create_subprocess_exec(
        *ARENA, "agent", GAME, "random", "--url", live_server.ws_url, "--token", agent_token,
        "--games", "1", *flags,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    kit = BotClient(
        live_server.ws_url, kit_token, random_choose, game=GAME, games=1, challenge=[agent_name]
    )
    kit.retry_s = 0.2  # the agent process may not be connected yet: the kit asks again
    try:
        if flag is not None:
            (end,), (out, err) = await asyncio.wait_for(
                asyncio.gather(kit.run(), proc.communicate()), 60
            )
            assert proc.returncode == 0, err.decode()
            assert out.decode().split()[0] == end.match_id
            return
        with pytest.raises(BotError, match="challenge_declined"):
            await asyncio.wait_for(kit.run(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
    _, err = await proc.communicate()
    assert f"declining {kit_name}'s challenge to {GAME}" in err.decode()


async def test_an_accepted_challenge_takes_a_full_bot_out_of_the_lobby(live_server: Any) -> None:
    # b waits in the lobby and accepts a challenge: with concurrent=1 it must leave the queue,
    # or the lobby would pair it with the next bot that joins, a match more than it plays at once.
    name_b, token_b = live_server.create_bot()
    _, token_a = live_server.create_bot()
    _, token_c = live_server.create_bot()
    left = asyncio.Event()
    c_joined = threading.Event()
    c_waiting: list[int] = []

    class Leaving(Waiting):
        async def on_left(self, message: LobbyLeft) -> None:
            await super().on_left(message)
            left.set()

    class Reporting(BotClient):
        async def on_joined(self, message: LobbyJoined) -> None:
            c_waiting.append(message.waiting)
            c_joined.set()
            await super().on_joined(message)

    def held(state: State, legal_moves: list[str], clock: Clock) -> str:
        c_joined.wait(10)  # keep the challenge match running until c has joined the lobby
        return random.choice(legal_moves)

    b = Leaving(
        live_server.ws_url, token_b, random_choose, game=GAME, games=2, accept_challenges=True
    )
    task_b = asyncio.create_task(b.run())
    await asyncio.wait_for(b.queued.wait(), 10)
    a = BotClient(live_server.ws_url, token_a, held, game=GAME, games=1, challenge=[name_b])
    task_a = asyncio.create_task(a.run())
    await asyncio.wait_for(left.wait(), 10)
    c = Reporting(live_server.ws_url, token_c, random_choose, game=GAME, games=1)
    (end_c,) = await asyncio.wait_for(c.run(), 30)
    (end_a,) = await asyncio.wait_for(task_a, 30)
    results_b = await asyncio.wait_for(task_b, 30)
    assert c_waiting[0] == 1  # b was not in the queue while it played a's challenge
    assert {r.match_id for r in results_b} == {end_a.match_id, end_c.match_id}


# --- a scripted server: the exact messages a challenger gets ---------------------------------


@asynccontextmanager
async def scripted(script: Callable[[ServerConnection], Awaitable[None]]) -> AsyncIterator[str]:
    """A WebSocket server on a free port running ``script`` for each connection; its URL."""
    async with serve(script, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws"


async def receive(ws: ServerConnection, kind: str) -> dict[str, Any]:
    while True:
        message = json.loads(await ws.recv())
        if message["type"] == kind:
            return message  # type: ignore[no-any-return]
        assert message["type"] in ("ping", "pong"), message


WELCOME = json.dumps(
    {"type": "welcome", "protocol": 1, "bot": "kit", "server": "script/1",
     "heartbeat_ms": 15000, "matches": []}
)  # fmt: skip


async def test_a_challenged_bot_that_never_connects_stops_the_challenger_in_time() -> None:
    challenges: list[float] = []

    async def script(ws: ServerConnection) -> None:
        await receive(ws, "hello")
        await ws.send(WELCOME)
        while True:
            message = await receive(ws, "challenge")
            challenges.append(time.monotonic())
            name = message["opponents"][0]
            await ws.send(json.dumps({
                "type": "error", "code": "unknown_bot", "fatal": False,
                "message": f"no bot named {name!r} is connected right now",
            }))  # fmt: skip

    async with scripted(script) as url:
        bot = BotClient(
            url, "t", random_choose, game=GAME, challenge=["carlo"], challenge_wait_s=0.5
        )
        bot.retry_s = 0.1
        started = time.monotonic()
        with pytest.raises(BotError) as caught:
            await asyncio.wait_for(bot.run(), 10)
    assert time.monotonic() - started < 3
    assert caught.value.code == "unknown_bot"
    assert str(caught.value).startswith(
        "unknown_bot: no bot named 'carlo' is connected right now, and was not during 0.5 s of "
        "challenging every 0.1 s: check the name (GET /api/bots lists every bot)"
    )
    assert 4 <= len(challenges) <= 8


@pytest.mark.parametrize(("reason", "said"), [("busy thinking", "busy thinking"), ("", None)])
async def test_the_challenger_says_the_decliners_reason(
    reason: str, said: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(ws: ServerConnection) -> None:
        await receive(ws, "hello")
        await ws.send(WELCOME)
        await receive(ws, "challenge")
        await ws.send(json.dumps({"type": "challenge_sent", "challenge_id": "c1"}))
        await ws.send(json.dumps(
            {"type": "challenge_declined", "challenge_id": "c1", "by": "bob", "reason": reason}
        ))  # fmt: skip
        await ws.wait_closed()

    async with scripted(script) as url:
        bot = BotClient(url, "t", random_choose, game=GAME, challenge=["bob"])
        with (
            caplog.at_level(logging.WARNING, logger="ply_arena.protocol.client"),
            pytest.raises(BotError) as caught,
        ):
            await asyncio.wait_for(bot.run(), 10)
    why = said or "it gave no reason"
    assert str(caught.value) == f"challenge_declined: bob declined the challenge: {why}"
    assert f"bob declined challenge c1: {why}" in [r.getMessage() for r in caplog.records]
