"""bots made for checking

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 15:30:00

``bots.checker``: the bot has logged in as an ``arena check-bot`` checker. A class tournament
does not enter such a bot unless it is named. Bots that checked before this revision are not
known: they are marked at their next check.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (SQLite takes one with a constant default): a batch would copy the
    # table, which other tables' foreign keys refer to.
    op.add_column(
        "bots", sa.Column("checker", sa.Boolean(), server_default=sa.false(), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("bots", "checker")
