"""server processes and the matches each one plays

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 18:00:00

Several ``arena serve`` processes may share one PostgreSQL database (server/cluster). Each one
registers in ``instances`` with a lease on the database's clock and renews it while it lives;
``matches.owner`` names the process that plays a running match. When a process's lease runs
out (it was killed, its machine or its network went away), another process takes over its
running matches and resumes them from their stored moves. Matches stored before this revision
have no owner: the first process to start claims them, as a restart resumed them before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ply_arena.server.db.timestamps import UTCDateTime

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "instances",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("process_start", sa.String(32), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("lease_until", sa.Double(), nullable=False),
        sa.Column("stopped_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_instances"),
    )
    op.create_index("ix_instances_lease_until", "instances", ["lease_until"])
    # A plain ADD COLUMN (nullable, no default): a batch would copy the matches table.
    op.add_column("matches", sa.Column("owner", sa.String(64), nullable=True))
    op.create_index("ix_matches_owner", "matches", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_matches_owner", table_name="matches")
    op.drop_column("matches", "owner")
    op.drop_index("ix_instances_lease_until", table_name="instances")
    op.drop_table("instances")
