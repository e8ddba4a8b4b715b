"""dice scheme per match

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 16:00:00

Each match says how its dice derive from its seed (protocol/dice.py): new matches roll with the
``sha256-v1`` scheme, which anyone can redo from the revealed seed; the matches already stored
rolled with CPython's random module and are marked ``python-random-v0``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "dice",
                sa.String(length=24),
                server_default="python-random-v0",
                nullable=False,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("dice")
