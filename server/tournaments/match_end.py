"""How a tournament game's match ended, wherever it was played.

A match the director's process plays is followed through its runner (whose result is the
stored one: the match's task ends once it is written). On PostgreSQL, where several server
processes share the database (server/cluster), a game's match may be played by another process
(the process of its first bot, which the director asked to play it: server/cluster/hosting.py;
or the director took the tournament over from a process that died, whose matches another one
resumes) or may stop here without a result (this process lost its lease and another took the
match over): its stored status is then read until it ends. The game is never started again
while its match may still be played.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ply_arena.protocol.messages import Termination
from ply_arena.server.db.database import Database
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import tournaments as repo

log = logging.getLogger(__name__)

#: How often a game whose match this process does not play looks at its match's stored status
#: (another process plays it, or will resume it once it has claimed it).
STORED_POLL_S = 0.25
#: How long a match stored as this process's, running, may have no runner here before its
#: game is played again: the referee claims a match and then launches its runner, a moment
#: later (a runner that failed leaves the match so for good, and nobody else will play it).
ORPHAN_GRACE_S = 10.0


class LeftRunning(Exception):
    """A match task ended without a result because this process is stopping: the match stays
    stored as running, and its game as playing (the next start, or another process, goes on)."""


@dataclass(frozen=True)
class Ending:
    """How a game's match ended (its stored result, or its runner's)."""

    termination: str
    payoffs: list[float]
    at_fault: int | None


def ending_of(outcome: repo.MatchOutcome | None) -> Ending | None:
    """The ending of a match stored as finished with its whole result; None for one aborted,
    not stored, or without a whole result (its game is played again)."""
    if (
        outcome is None
        or outcome.status != "finished"
        or outcome.payoffs is None
        or outcome.termination is None
    ):
        return None
    return Ending(outcome.termination, outcome.payoffs, outcome.at_fault)


def runs_here(referee: Referee, match_id: str | None) -> bool:
    """Whether this process's referee plays the match now."""
    if match_id is None:
        return False
    task = referee.match_task(match_id)
    return task is not None and not task.done() and referee.running_match(match_id) is not None


async def end_of(
    match_id: str,
    *,
    referee: Referee,
    database: Database,
    shared: bool,
    stopping: Callable[[], bool],
    lease_held: Callable[[], bool],
) -> Ending | None:
    """How the match ended; None when it ended aborted or nobody will play it (its game is
    played again). LeftRunning when this process stops meanwhile (``stopping()``).

    ``shared``: other processes may play this database's matches (PostgreSQL); else a match
    not played here is played by nobody. ``lease_held()``: this process surely holds its
    lease (one that lost it waits: its matches are another's to take over)."""
    mine_alone_since: float | None = None
    told = False
    while True:
        runner = referee.running_match(match_id)
        task = referee.match_task(match_id)
        if runner is not None and task is not None:
            await asyncio.wait([task])
            result = runner.result
            if result is not None:
                if result.termination == Termination.aborted:
                    return None
                return Ending(result.termination.value, list(result.payoffs), result.at_fault)
            if stopping():
                raise LeftRunning  # the match stays stored as running
            if not shared:
                return None  # on SQLite nobody else will play it
        async with database.session() as session:
            outcome = (await repo.match_outcomes(session, [match_id])).get(match_id)
        if outcome is None or outcome.status != "running":
            return ending_of(outcome)
        if not shared:
            return None  # on SQLite, a match not played here is played by nobody
        if not told and outcome.owner != referee.owner:
            told = True
            log.info(
                "match %s is not played by this server process (but by %s); its tournament "
                "game waits for its end through the database",
                match_id,
                outcome.owner or "none yet",
            )
        if outcome.owner == referee.owner and lease_held():
            if runs_here(referee, match_id):
                continue  # the referee has just resumed it
            # Stored as this process's, with no runner here: the referee may be about to
            # launch it (it claims, then launches); if not, nobody ever will.
            now = time.monotonic()
            mine_alone_since = mine_alone_since or now
            if now - mine_alone_since >= ORPHAN_GRACE_S:
                log.warning("match %s is played by no one; its game is played again", match_id)
                return None
        else:
            mine_alone_since = None
        await asyncio.sleep(STORED_POLL_S)
