"""Evaluation functions eval(n) for depth-limited search, one module per game.

The notes (000, "Decisiones imperfectas") ask three things of eval(n): it orders terminal states
as the utility does, it correlates with the true minimax value, and it is cheap to compute. Our
contract adds one more, so that a real win or loss always outweighs an estimate:

    ``evaluator_for(game)(state)`` is a per-seat value vector, strictly inside
    ``(game.min_utility, game.max_utility)`` for a non-terminal state.

    >>> from ply_arena import games
    >>> from ply_arena.reference_agents.evaluation import evaluator_for
    >>> g = games.get("tic_tac_toe")
    >>> evaluator_for(g)(g.initial_state().result(4))  # X in the centre: E(n) = 8 - 4
    (0.4, -0.4)

Evaluators are registered by game name below ("module:function", imported on first use). A game
without one gets the neutral evaluation (every seat at the midpoint of its utility range), so a
search over it is still well defined, just blind at the cut-off.

Where the notes give the formula of a game's eval(n) in their own units, ``notes_form(game)`` says
how to show it: tic-tac-toe's E(n) = X(n) - O(n) is ten times the value ``evaluate`` returns.

    >>> form = notes_form(g)
    >>> form.formula, form.scale, form.terms(g.initial_state().result(4), 0)
    ('E(n) = X(n) - O(n)', 10.0, (8, 4))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from ply_arena import games
from ply_arena.games import State

Evaluator = Callable[[State], tuple[float, ...]]

_REGISTRY: dict[str, str] = {
    "tic_tac_toe": "ply_arena.reference_agents.evaluation.tic_tac_toe:evaluate",
    "connect_four": "ply_arena.reference_agents.evaluation.connect_four:evaluate",
    "othello": "ply_arena.reference_agents.evaluation.othello:evaluate",
    "backgammon": "ply_arena.reference_agents.evaluation.backgammon:evaluate",
    "chinese_checkers": "ply_arena.reference_agents.evaluation.chinese_checkers:evaluate",
}


#: Games whose eval(n) the notes write as a formula: "module:attribute" of a NotesForm.
_NOTES_FORMS: dict[str, str] = {
    "tic_tac_toe": "ply_arena.reference_agents.evaluation.tic_tac_toe:NOTES_FORM",
}


@dataclass(frozen=True)
class NotesForm:
    """A game's eval(n) as the notes write it: ``formula`` of two ``terms`` (for the player
    who is MAX), and ``scale``, the factor between it and what the evaluator returns
    (eval(n) = formula / scale, a positive linear map, so no search decides differently)."""

    formula: str
    scale: float
    #: (state, MAX's seat) -> the two terms; the formula's value is their difference
    terms: Callable[[State, int], tuple[int, int]]
    #: where the notes give it
    source: str


def evaluated_games() -> list[str]:
    """Names of the games with a registered evaluation function."""
    return sorted(_REGISTRY)


def has_evaluator(game: games.Game) -> bool:
    return game.name in _REGISTRY


def evaluator_for(game: games.Game) -> Evaluator:
    """eval(n) for ``game``: state -> value of every seat (see the module docstring)."""
    target = _REGISTRY.get(game.name)
    if target is None:
        mid = (game.min_utility + game.max_utility) / 2
        neutral = (mid,) * game.num_players

        def evaluate_neutral(state: State) -> tuple[float, ...]:
            return neutral

        return evaluate_neutral
    module_name, func_name = target.split(":")
    func: Evaluator = getattr(importlib.import_module(module_name), func_name)
    return func


def notes_form(game: games.Game) -> NotesForm | None:
    """How the notes write ``game``'s eval(n), if they give a formula for it."""
    target = _NOTES_FORMS.get(game.name)
    if target is None:
        return None
    module_name, attr = target.split(":")
    form: NotesForm = getattr(importlib.import_module(module_name), attr)
    return form
