"""A runner for a match stored as running: the referee resumes it after a restart.

Only the stored facts are used: the game, the seats, the time control, the policy and the seed
of the match row, and its events (``restore`` replays them through the rules and checks every
roll against the seed). Origin and ``rated`` carry over, so a resumed tournament or ladder match
counts as it would have.
"""

from __future__ import annotations

from typing import Any

from ply_arena import games
from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server import time_controls
from ply_arena.server.referee.match_runner import MatchRunner, SeatBot
from ply_arena.server.repositories.resume import StoredMatch


def runner_for(match: StoredMatch, **options: Any) -> MatchRunner:
    """The runner of ``match`` before its events are restored (``options``: the referee's shared
    runner arguments). ValueError when the row names what this server does not know."""
    game = games.get(match.game)
    if len(match.seats) != game.num_players:
        raise ValueError(f"{len(match.seats)} seats stored for {game.name}")
    return MatchRunner(
        match_id=match.match_id,
        game=game,
        seats=[SeatBot(bot_id, name) for bot_id, name in match.seats],
        time_control=TimeControl(move_ms=match.move_ms, bank_ms=match.bank_ms),
        policy=Policy(match.policy),
        move_limit=time_controls.move_limit(game.name),
        origin=match.origin,
        rated=match.rated,
        seed=match.seed,
        **options,
    )
