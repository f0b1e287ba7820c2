"""Each scoring model version recorded with its numbers on first use

A score names its model's version. ``apac_scoring_models`` keeps, for each version the
warehouse has scored with, the model's numbers as its first run read them, so a score can be
explained after the model file has changed, and one version cannot name two sets of numbers
(scoring refuses a model whose version is recorded with another fingerprint). Versions used
before this revision are not known here and are recorded the next time they score.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-07 00:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "apac_scoring_models",
        sa.Column("score_model_version", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("document", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("first_partition_key", sa.Text(), nullable=False),
        sa.Column("first_run_id", sa.Text(), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("score_model_version", name=op.f("pk_apac_scoring_models")),
    )


def downgrade() -> None:
    op.drop_table("apac_scoring_models")
