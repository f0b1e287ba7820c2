"""The intake request budget shared by every worker and host: one UNLOGGED row per budgeted
key, its theoretical arrival time (docs/leads.md, "Request budgets")

UNLOGGED because the table is written on every request and is worth nothing after a crash:
PostgreSQL empties it on crash recovery and every budget starts whole again, which admits at
most one extra minute's budget per key. Its writes skip the WAL, so a commit never waits for
a flush.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "intake_request_budgets",
        sa.Column("bucket", sa.Text(), nullable=False),
        sa.Column("theoreticalArrival", sa.DateTime(timezone=True), nullable=False),
        sa.Column("admitted", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("bucket", name=op.f("pk_intake_request_budgets")),
        prefixes=["UNLOGGED"],
    )


def downgrade() -> None:
    op.drop_table("intake_request_budgets")
