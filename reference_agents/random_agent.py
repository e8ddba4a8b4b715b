"""``random``: a uniformly random legal move; the baseline every other agent must beat."""

from __future__ import annotations

import random
import time
from typing import Any

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import Agent, SearchInfo


class RandomAgent(Agent):
    name = "random"

    def __init__(self, game: games.Game, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(game)
        if options:
            raise ValueError(f"random takes only 'seed', not {', '.join(sorted(options))}")
        self.rng = random.Random(seed)

    def choose(self, state: State, time_limit: float | None = None) -> tuple[Move, SearchInfo]:
        start = time.monotonic()
        move = self.rng.choice(list(state.actions()))
        return move, SearchInfo(nodes=1, time_ms=int((time.monotonic() - start) * 1000))
