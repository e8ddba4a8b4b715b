"""classes: join codes, instructor tokens, and the bots' class and owner

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 22:30:00

A class groups the bots its students register with its join code; its instructor's token
reaches that class only. A bot made by the admin has no class and no owner.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "classes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("name_key", sa.String(length=80), nullable=False),
        sa.Column("join_code", sa.String(length=16), nullable=False),
        sa.Column("join_open", sa.Boolean(), nullable=False),
        sa.Column("instructor_token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_classes")),
        sa.UniqueConstraint("name", name=op.f("uq_classes_name")),
        sa.UniqueConstraint("name_key", name=op.f("uq_classes_name_key")),
        sa.UniqueConstraint("join_code", name=op.f("uq_classes_join_code")),
        sa.UniqueConstraint("instructor_token_hash", name=op.f("uq_classes_instructor_token_hash")),
    )
    # batch mode: SQLite adds a foreign key only by copying the table.
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("class_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("owner", sa.String(length=254), nullable=True))
        batch.create_foreign_key(op.f("fk_bots_class_id_classes"), "classes", ["class_id"], ["id"])
        batch.create_index(op.f("ix_bots_class_id"), ["class_id"])


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_index(op.f("ix_bots_class_id"))
        batch.drop_constraint(op.f("fk_bots_class_id_classes"), type_="foreignkey")
        batch.drop_column("owner")
        batch.drop_column("class_id")
    op.drop_table("classes")
