"""Bots with one bug each, to show that ``arena check-bot`` fails exactly the item they break.

They speak the raw protocol, as a bot in another language would (the bot kit guards against most
of these bugs, which is the point of the kit): log in, answer pings, play a random legal move
for every turn of every match, reconnect after a drop. Each mode breaks one thing:

- ``good``: nothing (the control);
- ``gson``: nothing either, but writes every number as a float (``"ply": 24.0``), as Java's Gson
  does; the protocol reads it as the integer, so the checklist must pass it as ``good``;
- ``no_pong``: ignores pings;
- ``stale_ply``: echoes the ply of its first turn of a match in every move of that match;
- ``illegal``: on its second turn of each match plays a move that is not legal (an occupied
  cell in tic-tac-toe);
- ``sleeper``: on its second turn of each match answers 400 ms after the deadline (only when the
  deadline is under 2 s, to keep the tests short, and only while it plays no other match: in the
  two-at-once step a turn slept through can be the only one of its match sent while the other
  ran, when the load delays the second match's start, and the checker then rightly cannot
  tell it from a bot that ignores that match);
- ``deaf_after_forced``: too slow for 50 ms a move (it takes 150 ms when the deadline is under
  200 ms), and once forced in a match it answers none of that match's turns;
- ``one_at_a_time``: plays one match at a time and ignores the turns of any other;
- ``no_reconnect``: stops when its connection drops;
- ``quits``: leaves after its first match ends (a kit bot run with games=1);
- ``bad_version``: says protocol 2 in its hello.

As a process: ``python tests/checkbot/broken_bot.py MODE URL TOKEN``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

MODES = (
    "good",
    "gson",
    "no_pong",
    "stale_ply",
    "illegal",
    "sleeper",
    "deaf_after_forced",
    "one_at_a_time",
    "no_reconnect",
    "quits",
    "bad_version",
)
TTT_CELLS = [f"{col}{row}" for row in "321" for col in "abc"]


class BrokenBot:
    def __init__(self, url: str, token: str, mode: str, *, seed: int = 0) -> None:
        assert mode in MODES, mode
        self.url, self.token, self.mode = url, token, mode
        self.rng = random.Random(seed)
        self.first_ply: dict[str, int] = {}  # match -> ply of its first turn
        self.turns_seen: dict[str, set[int]] = {}  # match -> plies of its turns
        self.deaf: set[str] = set()
        self.current: str | None = None  # one_at_a_time: the match it plays
        self.ignored: set[str] = set()
        self.running: set[str] = set()  # matches started and not yet ended
        self.stopped = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Play until stopped (or, in some modes, until the bug ends it)."""
        while not self.stopped.is_set():
            try:
                async with websockets.connect(self.url, max_size=None, close_timeout=1) as ws:
                    await self._session(ws)
            except (OSError, websockets.exceptions.WebSocketException):
                pass
            if self.mode in ("no_reconnect", "quits", "bad_version"):
                break
            await asyncio.sleep(0.25)

    async def _session(self, ws: ClientConnection) -> None:
        protocol = 2 if self.mode == "bad_version" else 1
        self.running.clear()  # the arena starts the matches still running again on login
        await ws.send(json.dumps({"type": "hello", "protocol": protocol, "token": self.token}))
        async for raw in ws:
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "ping" and self.mode != "no_pong":
                pong_id = float(message["id"]) if self.mode == "gson" else message["id"]
                await ws.send(json.dumps({"type": "pong", "id": pong_id}))
            elif kind == "match_start":
                match_id = message["match_id"]
                self.running.add(match_id)
                if self.mode == "one_at_a_time":
                    if self.current is None:
                        self.current = match_id
                    elif self.current != match_id:
                        self.ignored.add(match_id)
            elif kind == "turn":
                self._turn(ws, message)
            elif kind == "forced_move" and self.mode == "deaf_after_forced":
                self.deaf.add(message["match_id"])
            elif kind == "match_end":
                self.running.discard(message["match_id"])
                if self.current == message["match_id"]:
                    self.current = None
                if self.mode == "quits":
                    self.stopped.set()
                    return

    def _turn(self, ws: ClientConnection, turn: dict[str, Any]) -> None:
        match_id, ply = turn["match_id"], turn["ply"]
        if match_id in self.ignored or match_id in self.deaf:
            return
        seen = self.turns_seen.setdefault(match_id, set())
        seen.add(ply)
        nth = len(seen)
        self.first_ply.setdefault(match_id, ply)
        move = self.rng.choice(turn["legal_moves"])
        sent_ply = ply
        delay = 0.0
        if self.mode == "gson":
            sent_ply = float(ply)
        elif self.mode == "stale_ply":
            sent_ply = self.first_ply[match_id]
        elif self.mode == "illegal" and nth == 2:
            taken = [cell for cell in TTT_CELLS if cell not in turn["legal_moves"]]
            move = taken[0] if taken else "nonsense"
        elif (
            self.mode == "sleeper"
            and nth == 2
            and turn["deadline_ms"] < 2000
            and self.running <= {match_id}
        ):
            delay = (turn["deadline_ms"] + 400) / 1000
        elif self.mode == "deaf_after_forced" and turn["deadline_ms"] < 200:
            delay = 0.15
        answer: dict[str, Any] = {
            "type": "move",
            "match_id": match_id,
            "ply": sent_ply,
            "move": move,
        }
        task = asyncio.create_task(self._send_later(ws, answer, delay))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_later(
        self, ws: ClientConnection, message: dict[str, Any], delay: float
    ) -> None:
        if delay:
            await asyncio.sleep(delay)
        with contextlib.suppress(websockets.ConnectionClosed):
            await ws.send(json.dumps(message))


if __name__ == "__main__":
    import sys

    mode, url, token = sys.argv[1:4]
    asyncio.run(BrokenBot(url, token, mode).run())
