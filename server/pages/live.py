"""The matches being played now, from the referee's memory (the database lags them by the
recorder's batch)."""

from __future__ import annotations

from typing import Any

from ply_arena.server.referee import Referee


def live_matches(referee: Referee, most: int) -> list[dict[str, Any]]:
    """Up to ``most`` running matches, longest-running first: id, game, bots, plies so far."""
    running = referee.live_matches()[:most]
    return [
        {
            "id": r.match_id,
            "game": r.game.name,
            "bots": [s.name for s in r.seats],
            "plies": len(r.events),
        }
        for r in running
    ]
