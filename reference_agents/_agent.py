"""What every reference agent is: ``choose(state, time_limit) -> (move, info)``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._gc import paused_gc


@dataclass
class SearchInfo:
    """What a search reports about its decision; the server carries it into replays."""

    depth: int = 0
    nodes: int = 0
    score: float | None = None
    pv: list[Move] = field(default_factory=list)
    time_ms: int = 0
    comment: str = ""

    def as_json(self, game: games.Game, state: State) -> dict[str, Any]:
        """Plain JSON, the principal variation in the game's notation (from ``state`` on)."""
        pv_text: list[str] = []
        s = state
        for move in self.pv:
            if s.is_terminal():
                break
            try:
                pv_text.append(game.format_move(s, move))
                s = s.result(move)
            except (ValueError, KeyError, IndexError, TypeError):
                break
            if s.is_chance_node():
                break  # the line beyond a dice roll is not a line of moves
        return {
            "depth": self.depth,
            "nodes": self.nodes,
            "score": self.score,
            "pv": pv_text,
            "time_ms": self.time_ms,
            "comment": self.comment,
        }


class Agent(ABC):
    """A reference agent bound to one game."""

    #: Registry name, e.g. "alphabeta".
    name: ClassVar[str]

    def __init__(self, game: games.Game, **options: Any) -> None:
        self.game = game

    @classmethod
    def refusal(cls, game: games.Game) -> str | None:
        """Why this agent does not apply to ``game`` (None when it does)."""
        return None

    @abstractmethod
    def choose(self, state: State, time_limit: float | None = None) -> tuple[Move, SearchInfo]:
        """The move to play in ``state`` (not terminal, not a chance node), found within
        ``time_limit`` seconds (None: the agent's own depth or iteration limit)."""


class SearchAgent(Agent):
    """An agent whose ``search`` runs with Python's cyclic garbage collector paused.

    A search allocates tens of thousands of objects a second; a full collection in the middle of
    one can take tens of milliseconds and carry the agent past its time limit (see ``_gc``).
    """

    def choose(self, state: State, time_limit: float | None = None) -> tuple[Move, SearchInfo]:
        with paused_gc():
            return self.search(state, time_limit)

    @abstractmethod
    def search(self, state: State, time_limit: float | None) -> tuple[Move, SearchInfo]:
        """What ``choose`` does, with the collector paused."""
