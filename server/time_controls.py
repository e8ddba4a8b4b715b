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
at 1 000 plies (scored by progress, as OpenSpiel caps its version), so the referee needs no cap.
Backgammon ends by rule with probability one, but the cap bounds pathological bots; a capped
match ends with termination ``move_limit``.
"""

from __future__ import annotations

from protocol.messages import TimeControl

DEFAULT_TIME_CONTROL = TimeControl(move_ms=1_000, bank_ms=10_000)
_DEFAULTS: dict[str, TimeControl] = {
    "chinese_checkers": TimeControl(move_ms=1_000, bank_ms=20_000),
}

#: Limits on requested time controls (inclusive).
MIN_MOVE_MS = 50
MAX_MOVE_MS = 60_000
MAX_BANK_MS = 600_000

#: Seat moves (dice not counted) after which the referee ends a match as ``move_limit``.
#: Games not listed end by their own rules.
MOVE_LIMIT: dict[str, int] = {
    "backgammon": 2_000,
}


class TimeControlError(ValueError):
    """A requested time control is outside the limits."""


def default_time_control(game_name: str) -> TimeControl:
    return _DEFAULTS.get(game_name, DEFAULT_TIME_CONTROL)


def limits() -> dict[str, int]:
    """The limits, as served by ``GET /api/games``."""
    return {"min_move_ms": MIN_MOVE_MS, "max_move_ms": MAX_MOVE_MS, "max_bank_ms": MAX_BANK_MS}


def move_limit(game_name: str) -> int | None:
    return MOVE_LIMIT.get(game_name)


def resolve_time_control(game_name: str, requested: TimeControl | None) -> TimeControl:
    """The requested time control if it is within limits, the game's default if None.

    Raises TimeControlError (code ``bad_time_control``) with the limits in the message.
    """
    if requested is None:
        return default_time_control(game_name)
    if not MIN_MOVE_MS <= requested.move_ms <= MAX_MOVE_MS:
        raise TimeControlError(
            f"move_ms={requested.move_ms} is outside {MIN_MOVE_MS}..{MAX_MOVE_MS} ms"
        )
    if requested.bank_ms > MAX_BANK_MS:
        raise TimeControlError(f"bank_ms={requested.bank_ms} is over the maximum {MAX_BANK_MS} ms")
    return requested


def validate_time_control(game_name: str, requested: TimeControl) -> None:
    """Raise TimeControlError (a ValueError) if ``requested`` is outside the limits."""
    resolve_time_control(game_name, requested)
