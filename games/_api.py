"""The game API every game implements, named after the lecture notes.

Russell & Norvig define a game by S0, PLAYER(s), ACTIONS(s), RESULT(s, a), TERMINAL-TEST(s) and
UTILITY(s, p); the notes translate them as "estado inicial", "jugador", "acciones", "resultado",
"test terminal" and "utilidad". Our names are the same ones::

    >>> from ply_arena import games
    >>> game = games.get("tic_tac_toe")
    >>> s = game.initial_state()
    >>> s.player, len(s.actions()), s.is_terminal()
    (0, 9, False)
    >>> s2 = s.result(s.actions()[4])
    >>> s2.player, s.player          # s itself never changes
    (1, 0)

States are immutable and hashable; two states are equal when they describe the same position,
so they can key a transposition table.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

#: ``state.player`` at a chance node (dice rolls in backgammon).
CHANCE = -1

#: A move: a small hashable value whose meaning is documented per game in docs/games.md.
Move = Hashable


class InvalidMoveError(ValueError):
    """The move text does not parse in this game's notation."""


class IllegalMoveError(ValueError):
    """The move text parses but the move is not legal in this position."""


class State(ABC):
    """A position. Subclasses are slotted and never change after construction."""

    __slots__ = ()

    #: Seat 0..n-1 whose turn it is, or ``CHANCE`` at a chance node.
    player: int

    @abstractmethod
    def actions(self) -> Sequence[Move]:
        """Legal moves (or chance outcomes at a chance node), in a deterministic order.

        Empty exactly when the state is terminal.
        """

    @abstractmethod
    def result(self, move: Move) -> State:
        """The state after ``move``; ``self`` is left unchanged."""

    @abstractmethod
    def is_terminal(self) -> bool:
        """TERMINAL-TEST(s): has the game ended?"""

    @abstractmethod
    def returns(self) -> tuple[float, ...]:
        """Payoff for every seat at a terminal state (all zeros before the end)."""

    def utility(self, p: int) -> float:
        """UTILITY(s, p): the payoff for seat ``p`` at a terminal state."""
        return self.returns()[p]

    def chance_outcomes(self) -> list[tuple[Move, float]]:
        """``[(outcome, probability), ...]`` at a chance node; empty elsewhere."""
        return []

    def is_chance_node(self) -> bool:
        return self.player == CHANCE


class Game(ABC):
    """The rules of one game: a factory of initial states plus notation and wire forms."""

    # Plain attributes (set at class level by the registered games, per instance by
    # ply_arena.games.tree).
    name: str
    num_players: int
    has_chance: ClassVar[bool] = False
    #: One line for listings (`arena games`, ``GET /api/games``).
    summary: ClassVar[str] = ""
    #: Display names of the seats, e.g. ("X", "O").
    seat_names: ClassVar[tuple[str, ...]] = ()
    #: Utility range [min, max] of any seat's payoff, used by pruning searches (Star1, max^n).
    min_utility: ClassVar[float] = -1.0
    max_utility: ClassVar[float] = 1.0
    #: Payoffs of all seats always add up to this (None when they do not).
    constant_sum: ClassVar[float | None] = 0.0

    @abstractmethod
    def initial_state(self) -> State:
        """S0."""

    @abstractmethod
    def format_move(self, state: State, move: Move) -> str:
        """The move (legal in ``state``) in this game's human notation."""

    @abstractmethod
    def parse_move(self, state: State, text: str) -> Move:
        """The move that ``text`` names in ``state``.

        Raises InvalidMoveError when the text does not parse, IllegalMoveError when it parses but
        is not a legal move here (the message lists the legal ones).
        """

    @abstractmethod
    def state_to_json(self, state: State) -> dict[str, Any]:
        """The wire form of a position (plain JSON types only)."""

    @abstractmethod
    def state_from_json(self, data: dict[str, Any]) -> State:
        """Inverse of state_to_json; raises ValueError on malformed data."""

    @abstractmethod
    def render(self, state: State) -> str:
        """A text board for terminals and logs."""

    def __repr__(self) -> str:
        return f"<Game {self.name}>"


def illegal_move_message(game: Game, state: State, text: str) -> str:
    """A message for IllegalMoveError that tells the user what would have been legal."""
    legal = [game.format_move(state, m) for m in state.actions()]
    shown = ", ".join(legal[:40]) + (f", ... ({len(legal)} in all)" if len(legal) > 40 else "")
    return f"illegal move {text!r} in {game.name}: legal moves are {shown or 'none'}"
