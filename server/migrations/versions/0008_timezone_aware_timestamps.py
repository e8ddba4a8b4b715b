"""timestamps timezone-aware: PostgreSQL's timestamptz, SQLite's text with its offset

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 02:10:00

Every time this server stored was UTC, written without its offset. On PostgreSQL the columns
become ``timestamp with time zone``, the old values read as UTC. On SQLite (text) each stored
value gets ``+00:00`` appended, the form server/db/timestamps.py now writes; the column type
stays DATETIME there, so no table is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: (table, column, nullable) of every timestamp.
TIMESTAMPS = (
    ("admin_tokens", "created_at", False),
    ("classes", "created_at", False),
    ("bots", "created_at", False),
    ("matches", "created_at", False),
    ("moves", "played_at", False),
    ("chance_events", "played_at", False),
    ("results", "finished_at", False),
    ("ratings", "last_played_at", True),
    ("rating_history", "at", False),
    ("tournaments", "created_at", False),
    ("tournaments", "started_at", True),
    ("tournaments", "finished_at", True),
    ("tournament_games", "finished_at", True),
)
OFFSET = "+00:00"


def upgrade() -> None:
    _convert(aware=True)


def downgrade() -> None:
    _convert(aware=False)


def _convert(*, aware: bool) -> None:
    """To the aware form (``aware``) or back: SQLite's text gains or loses its offset,
    PostgreSQL's columns change type, their values read as UTC either way."""
    if op.get_bind().dialect.name == "sqlite":
        for table, column, _ in TIMESTAMPS:
            new = (
                f"{column} || '{OFFSET}'"
                if aware
                else f"substr({column}, 1, length({column}) - {len(OFFSET)})"
            )
            which = "NOT LIKE" if aware else "LIKE"
            op.execute(
                f"UPDATE {table} SET {column} = {new} "
                f"WHERE {column} IS NOT NULL AND {column} {which} '%{OFFSET}'"
            )
        return
    for table, column, nullable in TIMESTAMPS:
        op.alter_column(
            table,
            column,
            type_=sa.DateTime(timezone=aware),
            existing_type=sa.DateTime(timezone=not aware),
            existing_nullable=nullable,
            postgresql_using=f"{column} AT TIME ZONE 'UTC'",
        )
