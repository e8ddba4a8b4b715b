"""what a match needs to be resumed after a restart

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 05:10:00

A match running when its server stops is resumed at the next start (server/referee/resume.py):
the position comes back from the stored moves and the dice from the stored seed, but each seat's
clock cannot be recomputed from the rounded ``think_ms`` (the referee charges real elapsed time
less a latency grace), so every move now stores its mover's bank after the move was charged
(``moves.bank_ms``; null for moves stored before this migration: their seat resumes with what
the time control gives). ``match_resumes`` notes each resumption (at which ply, when), so the
record says the match was interrupted.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ply_arena.server.db.timestamps import UTCDateTime

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("bank_ms", sa.Integer(), nullable=True))
    op.create_table(
        "match_resumes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "match_id",
            sa.String(64),
            sa.ForeignKey("matches.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("resumed_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("match_resumes")
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("bank_ms")
