"""Storage: the async database handle and the ORM models."""

from ply_arena.server.db.database import Database
from ply_arena.server.db.models import (
    AdminToken,
    Base,
    Bot,
    ChanceEvent,
    Match,
    MoveRecord,
    Result,
    Seat,
)
from ply_arena.server.db.recorder import Recorder

__all__ = [
    "AdminToken",
    "Base",
    "Bot",
    "ChanceEvent",
    "Database",
    "Match",
    "MoveRecord",
    "Recorder",
    "Result",
    "Seat",
]
