"""the server process that directs each tournament

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 19:00:00

``tournaments.director``: the server process (``instances.id``) that directs a running or
paused tournament (server/tournaments/director.py). Several processes may share one PostgreSQL
database: one of them directs each tournament while its lease runs, and another one takes the
tournament over once that lease has run out. Tournaments stored before this revision have no
director: the first process to start claims them, as a restart resumed them before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (nullable, no default): a batch would copy the tournaments table,
    # which the entrants' and games' foreign keys refer to.
    op.add_column("tournaments", sa.Column("director", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("tournaments", "director")
