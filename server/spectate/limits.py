"""The bounds on spectators, from the settings, and the decision to admit one (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from ply_arena.server.settings import Settings


@dataclass(frozen=True, slots=True)
class Limits:
    #: Spectator connections at once on the server (0: spectating is off), and on one match.
    max_spectators: int
    max_per_match: int
    #: Messages, and bytes, that may wait for one spectator (beyond its snapshot).
    queue_frames: int
    queue_bytes: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_spectators=settings.max_spectators,
            max_per_match=settings.max_spectators_per_match,
            queue_frames=settings.spectator_queue_frames,
            queue_bytes=settings.spectator_queue_bytes,
        )


def refusal(limits: Limits, connected: int, watching_match: int) -> str | None:
    """Why one more spectator may not watch a match (None: it may), given the spectators
    ``connected`` to the server and those ``watching_match`` already.

    >>> limits = Limits(max_spectators=3, max_per_match=2, queue_frames=16, queue_bytes=65536)
    >>> refusal(limits, connected=2, watching_match=1) is None
    True
    >>> refusal(limits, connected=2, watching_match=2)
    'this match has 2 spectators, the most it may have; try again later'
    >>> refusal(limits, connected=3, watching_match=0)
    'the server has 3 spectators, the most it takes; try again later'
    """
    if limits.max_spectators == 0:
        return "this server does not take spectators (ARENA_MAX_SPECTATORS=0)"
    if connected >= limits.max_spectators:
        return f"the server has {connected} spectators, the most it takes; try again later"
    if watching_match >= limits.max_per_match:
        return f"this match has {watching_match} spectators, the most it may have; try again later"
    return None
