"""The matches being played now, from the referee's memory (the database lags them by the
recorder's batch), and, with several processes on one database, those the others play (from
the database: their plies as stored)."""

from __future__ import annotations

from typing import Any

from ply_arena.server.referee import Referee
from ply_arena.server.repositories import matches as match_repo


async def live_matches(referee: Referee, most: int) -> list[dict[str, Any]]:
    """Up to ``most`` running matches, longest-running first here, then elsewhere: id, game,
    bots, plies so far."""
    running = [
        {
            "id": r.match_id,
            "game": r.game.name,
            "bots": [s.name for s in r.seats],
            "plies": len(r.events),
        }
        for r in referee.live_matches()[:most]
    ]
    if referee.directory is None or len(running) >= most:
        return running
    here = {m["id"] for m in running}
    async with referee.database.session() as session:
        stored, _ = await match_repo.list_matches(
            session, status=match_repo.RUNNING, limit=most + len(here), count=False
        )
    for match in reversed(stored):  # the list is newest first
        if match["id"] not in here and len(running) < most:
            running.append(
                {
                    "id": match["id"],
                    "game": match["game"],
                    "bots": [s["bot"] for s in match["seats"]],
                    "plies": match["plies"],
                }
            )
    return running
