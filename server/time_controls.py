"""Default time controls per game, the limits a requested one must respect, and move caps.

A move may take up to ``move_ms``; time beyond that comes from a bank that never refills (as in
Kaggle environments). Defaults:

===================  ========  =========  ==========
game                 move_ms   bank_ms    move cap
===================  ========  =========  ==========
tic_tac_toe          1 000     10 000     (9 by rule)
connect_four         1 000     10 000     (42 by rule)
othello              1 000     10 000     (60 by rule)
backgammon           1 000     10 000     2 000 seat moves
chinese_checkers     1 000     20 000     (1 000 plies by rule)
===================  ========  =========  ==========

Chinese checkers gets a larger bank: three players and long games. Its rules already end a game
at 1 000 plies (scored by progress, as OpenSpiel caps its version; termination ``normal``), so
the referee needs no cap.
Backgammon ends by rule with probability one, but the cap bounds pathological bots; a capped
match ends with termination ``move_limit``.
"""

from __future__ import annotations

from ply_arena.protocol.messages import MAX_BANK_MS, MAX_MOVE_MS, MIN_MOVE_MS, TimeControl

__all__ = [
    "MAX_BANK_MS",
    "MAX_MOVE_MS",
    "MIN_MOVE_MS",
    "default_time_control",
    "limits",
    "move_limit",
    "resolve_time_control",
]

DEFAULT_TIME_CONTROL = TimeControl(move_ms=1_000, bank_ms=10_000)
_DEFAULTS: dict[str, TimeControl] = {
    "chinese_checkers": TimeControl(move_ms=1_000, bank_ms=20_000),
}

#: Seat moves (dice not counted) after which the referee ends a match as ``move_limit``.
#: Games not listed end by their own rules.
MOVE_LIMIT: dict[str, int] = {
    "backgammon": 2_000,
}


def default_time_control(game_name: str) -> TimeControl:
    return _DEFAULTS.get(game_name, DEFAULT_TIME_CONTROL)


def limits() -> dict[str, int]:
    """The limits a requested time control must keep, as served by ``GET /api/games``.

    They live in ply_arena.protocol.messages (the TimeControl model enforces them, and the JSON
    Schema publishes them): one source for the server, the schema and the docs.
    """
    return {"min_move_ms": MIN_MOVE_MS, "max_move_ms": MAX_MOVE_MS, "max_bank_ms": MAX_BANK_MS}


def move_limit(game_name: str) -> int | None:
    return MOVE_LIMIT.get(game_name)


def resolve_time_control(game_name: str, requested: TimeControl | None) -> TimeControl:
    """The requested time control, or the game's default when None.

    A TimeControl is within the limits by construction (the model checks them; a bot's
    request outside them is refused while parsing, with ``bad_time_control``).
    """
    return default_time_control(game_name) if requested is None else requested
