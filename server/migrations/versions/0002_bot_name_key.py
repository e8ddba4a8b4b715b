"""bot names unique whatever their case

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 14:00:00

``bots.name_key`` is the name in lower case, unique: ``Alice``, ``ALICE`` and ``alice`` are one
name, so no bot can pass for another. Bots that an older database already holds under names
differing only in case keep working: the later ones get ``#<id>`` appended to their key.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("name_key", sa.String(length=80), nullable=True))
    bots = sa.table(
        "bots", sa.column("id", sa.Integer), sa.column("name", sa.String), sa.column("name_key")
    )
    connection = op.get_bind()
    seen: set[str] = set()
    for bot_id, name in connection.execute(sa.select(bots.c.id, bots.c.name).order_by(bots.c.id)):
        key = name.lower()
        if key in seen:
            key = f"{key}#{bot_id}"
        seen.add(key)
        connection.execute(bots.update().where(bots.c.id == bot_id).values(name_key=key))
    with op.batch_alter_table("bots") as batch:
        batch.alter_column("name_key", existing_type=sa.String(length=80), nullable=False)
        batch.create_unique_constraint(op.f("uq_bots_name_key"), ["name_key"])


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_constraint(op.f("uq_bots_name_key"), type_="unique")
        batch.drop_column("name_key")
