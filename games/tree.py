"""A game given as an explicit tree: the worked examples of the notes, playable by any agent.

Not registered in ``games.names()``: it is built from data, for tests and for students who want to
trace a search by hand. A node is one of

- a leaf: a number (two-player zero-sum: seat 0's payoff, seat 1 gets the negative) or a tuple
  with every seat's payoff (the max^n example of the notes);
- a decision node: ``{"player": p, "children": [node, ...]}``;
- a chance node: ``{"chance": [(probability, node), ...]}``.

Any node may carry a ``"label"``; moves are child indices and print as the child's label when it
has one. Figure 6.5 of Russell & Norvig (MAX at the root over three MIN nodes)::

    >>> fig65 = TreeGame({"player": 0, "children": [
    ...     {"player": 1, "label": "a1", "children": [3, 12, 8]},
    ...     {"player": 1, "label": "a2", "children": [2, 4, 6]},
    ...     {"player": 1, "label": "a3", "children": [14, 5, 2]}]})
    >>> s = fig65.initial_state()
    >>> [fig65.format_move(s, m) for m in s.actions()]
    ['a1', 'a2', 'a3']

``leaf_visits`` records the path of every leaf whose payoff was read, so a test can check which
leaves a search pruned.
"""

from __future__ import annotations

from typing import Any

from ply_arena.games._api import (
    CHANCE,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    State,
    illegal_move_message,
)

Path = tuple[int, ...]


class TreeState(State):
    __slots__ = ("_game", "_node", "path", "player")

    def __init__(self, game: TreeGame, path: Path) -> None:
        self._game = game
        self.path = path
        node: Any = game.tree
        for i in path:
            node = game._children(node)[i]
        self._node = node
        if isinstance(node, dict) and "chance" in node:
            self.player = CHANCE
        elif isinstance(node, dict):
            self.player = int(node["player"])
        else:
            self.player = 0

    def actions(self) -> list[int]:
        return list(range(len(self._game._children(self._node))))

    def result(self, move: Move) -> TreeState:
        if move not in self.actions():
            raise ValueError(f"move {move!r} is not legal at node {self.path}")
        return TreeState(self._game, (*self.path, move))

    def is_terminal(self) -> bool:
        return not isinstance(self._node, dict)

    def returns(self) -> tuple[float, ...]:
        if not self.is_terminal():
            return (0.0,) * self._game.num_players
        self._game.leaf_visits.append(self.path)
        if isinstance(self._node, tuple | list):
            return tuple(float(v) for v in self._node)
        return (float(self._node), -float(self._node))

    def chance_outcomes(self) -> list[tuple[Move, float]]:
        if self.player != CHANCE:
            return []
        return [(i, float(p)) for i, (p, _) in enumerate(self._node["chance"])]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TreeState) and other._game is self._game and other.path == self.path
        )

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"TreeState(path={self.path})"


class TreeGame(Game):
    """An explicit game tree (instances carry their own data, unlike registered games)."""

    name = "tree"
    has_chance = True
    summary = "An explicit game tree, for the worked examples of the notes."

    def __init__(self, tree: Any, num_players: int = 2) -> None:
        self.tree = tree
        self.num_players = num_players
        self.leaf_visits: list[Path] = []

    @staticmethod
    def _children(node: Any) -> list[Any]:
        if not isinstance(node, dict):
            return []
        if "chance" in node:
            return [child for _, child in node["chance"]]
        return list(node["children"])

    def initial_state(self) -> TreeState:
        return TreeState(self, ())

    def label(self, state: TreeState, move: Move) -> str:
        child = self._children(state._node)[move]  # type: ignore[call-overload]
        if isinstance(child, dict) and "label" in child:
            return str(child["label"])
        return str(move)

    def format_move(self, state: State, move: Move) -> str:
        assert isinstance(state, TreeState)
        return self.label(state, move)

    def parse_move(self, state: State, text: str) -> int:
        assert isinstance(state, TreeState)
        for move in state.actions():
            if self.label(state, move) == text.strip():
                return move
        if not text.strip().isdigit():
            raise InvalidMoveError(
                f"cannot parse tree move {text!r}: expected a child label or index"
            )
        raise IllegalMoveError(illegal_move_message(self, state, text))

    def state_to_json(self, state: State) -> dict[str, Any]:
        assert isinstance(state, TreeState)
        return {"path": list(state.path)}

    def state_from_json(self, data: dict[str, Any]) -> TreeState:
        path = data.get("path")
        if not isinstance(path, list) or not all(isinstance(i, int) for i in path):
            raise ValueError('tree JSON needs "path": a list of child indices')
        try:
            return TreeState(self, tuple(path))
        except (IndexError, KeyError) as exc:
            raise ValueError(f"tree path {path} does not exist") from exc

    def render(self, state: State) -> str:
        assert isinstance(state, TreeState)
        return f"node {'/'.join(map(str, state.path)) or 'root'}"
