"""every match a tournament game started, so that a replayed game's aborted match keeps its
tournament

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 14:45:00

A tournament game names its match (``tournament_games.match_id``), but only its latest: when a
match is aborted and the game played again, the game names the new match and the old one no
longer says which tournament, round and board it was played for. ``tournament_matches`` keeps
every match a game started. Filled here from the games' current matches (those replayed before
this migration are not known any more).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tournament_matches",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["tournament_games.id"],
            name=op.f("fk_tournament_matches_game_id_tournament_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_tournament_matches")),
    )
    op.create_index(op.f("ix_tournament_matches_game_id"), "tournament_matches", ["game_id"])
    op.execute(
        "INSERT INTO tournament_matches (match_id, game_id) "
        "SELECT match_id, id FROM tournament_games WHERE match_id IS NOT NULL"
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_tournament_matches_game_id"), table_name="tournament_matches")
    op.drop_table("tournament_matches")
