"""tournaments: their settings, entrants and games

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26 09:30:00

A tournament's games are stored round by round (a Swiss round when the previous one is over);
each names its match once started, so that a restart resumes without losing or replaying a
finished game.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("name_key", sa.String(length=80), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("policy", sa.String(length=16), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("no_show_s", sa.Double(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["class_id"], ["classes.id"], name=op.f("fk_tournaments_class_id_classes")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("name", name=op.f("uq_tournaments_name")),
        sa.UniqueConstraint("name_key", name=op.f("uq_tournaments_name_key")),
    )
    op.create_index(op.f("ix_tournaments_class_id"), "tournaments", ["class_id"])
    op.create_table(
        "tournament_entrants",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=8), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("final_mu", sa.Double(), nullable=True),
        sa.Column("final_sigma", sa.Double(), nullable=True),
        sa.Column("final_conservative", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_tournament_entrants_bot_id_bots")
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_entrants_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tournament_id", "bot_id", name=op.f("pk_tournament_entrants")),
    )
    op.create_table(
        "tournament_games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("bot_ids", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=True),
        sa.Column("termination", sa.String(length=16), nullable=True),
        sa.Column("payoffs", sa.JSON(), nullable=True),
        sa.Column("at_fault", sa.Integer(), nullable=True),
        sa.Column("absent", sa.JSON(), nullable=True),
        sa.Column("replays", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_games_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_games")),
    )
    op.create_index(
        "ix_tournament_games_tournament_id_round", "tournament_games", ["tournament_id", "round"]
    )
    op.create_index(op.f("ix_tournament_games_match_id"), "tournament_games", ["match_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_tournament_games_match_id"), table_name="tournament_games")
    op.drop_index("ix_tournament_games_tournament_id_round", table_name="tournament_games")
    op.drop_table("tournament_games")
    op.drop_table("tournament_entrants")
    op.drop_index(op.f("ix_tournaments_class_id"), table_name="tournaments")
    op.drop_table("tournaments")
