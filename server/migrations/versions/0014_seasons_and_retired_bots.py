"""class seasons, and retired bots whose names are free again

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 22:00:00

``class_seasons``: the numbered seasons of each class (server/ratings/season.py); every class
stored before this revision gets its season 1, from its creation on, so that its class
leaderboard reads as before. ``bots.retired_at``: a retired bot is disabled for good and keeps
its name in every record, while its ``name_key`` becomes ``name#id`` so that a new bot may take
the name; ``bots.name`` is therefore no longer unique (an index instead: pages look bots up by
it). On SQLite, dropping that unique constraint copies the ``bots`` table (a batch), which
``Database.migrate`` runs with foreign keys off, as SQLite's documentation says to.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "class_seasons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("started_at", _STAMP, nullable=False),
        sa.Column("ended_at", _STAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_class_seasons_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_class_seasons")),
        sa.UniqueConstraint("class_id", "number", name=op.f("uq_class_seasons_class_id")),
    )
    classes = sa.table("classes", sa.column("id", sa.Integer), sa.column("created_at", _STAMP))
    seasons = sa.table(
        "class_seasons",
        sa.column("class_id", sa.Integer),
        sa.column("number", sa.Integer),
        sa.column("started_at", _STAMP),
    )
    op.execute(
        seasons.insert().from_select(
            ["class_id", "number", "started_at"],
            sa.select(classes.c.id, sa.literal(1), classes.c.created_at),
        )
    )
    op.add_column("bots", sa.Column("retired_at", _STAMP, nullable=True))
    with op.batch_alter_table("bots") as batch:
        batch.drop_constraint(op.f("uq_bots_name"), type_="unique")
        batch.create_index(op.f("ix_bots_name"), ["name"], unique=False)


def downgrade() -> None:
    # Fails (unique) once a retired bot's name was taken again: as it should. No batch: a
    # downgrade runs with SQLite's foreign keys on, so the unique constraint comes back as a
    # unique index there (the same rule), and the column goes with SQLite's own DROP COLUMN.
    op.drop_index(op.f("ix_bots_name"), table_name="bots")
    if op.get_bind().dialect.name == "sqlite":
        op.create_index(op.f("uq_bots_name"), "bots", ["name"], unique=True)
    else:
        op.create_unique_constraint(op.f("uq_bots_name"), "bots", ["name"])
    op.drop_column("bots", "retired_at")
    op.drop_table("class_seasons")
