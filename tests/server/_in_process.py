"""A bot connection in the test's own loop, logged in to an in-process Referee: no socket, no
session; what the referee sends arrives as JSON text, as a session would write it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from ply_arena.protocol.messages import MakeMove
from ply_arena.server.referee import Referee


class Bot:
    """A bot connection in the test's loop: plays the first legal move of each turn, or keeps
    its turns while ``holding`` until ``release``."""

    def __init__(self, referee: Referee, bot_id: int, name: str) -> None:
        self.referee, self.bot_id, self.bot_name, self.client = referee, bot_id, name, "tests"
        self.check_role = None
        self.holding = False
        self.held: list[dict[str, Any]] = []
        #: ("match_start" | "match_end", match id), in the order received.
        self.seen: list[tuple[str, str]] = []
        #: Called with each match_end (before the match's task is over).
        self.on_match_end: Callable[[dict[str, Any]], None] | None = None

    def send(self, message: Any) -> None:
        self.send_json(message.model_dump_json())

    def send_json(self, text: str) -> None:
        message = json.loads(text)
        if message["type"] in ("match_start", "match_end"):
            self.seen.append((message["type"], message["match_id"]))
        if message["type"] == "turn":
            if self.holding:
                self.held.append(message)
            else:
                self._answer(message)
        elif message["type"] == "match_end" and self.on_match_end is not None:
            self.on_match_end(message)

    def _answer(self, turn: dict[str, Any]) -> None:
        move = MakeMove(match_id=turn["match_id"], ply=turn["ply"], move=turn["legal_moves"][0])
        asyncio.get_running_loop().call_soon(self.referee.move, self, move, time.monotonic())

    def release(self) -> None:
        self.holding = False
        held, self.held = self.held, []
        for turn in held:
            self._answer(turn)

    def rtt_ms(self) -> float | None:
        return 1.0

    def close_with(self, error: Any) -> None:
        """Nothing to close: the referee has already forgotten this connection."""
